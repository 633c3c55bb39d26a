"""Checking a table's options: the checks both games make, each raising invalid_option.

Every check reads option `name` from the raw options a client sent, or its default from
the game's `defaults`, and names the option in the error (`RuleError.field`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from api.games.common import RuleError

MAX_ANTE = 1_000_000
MAX_CHIPS = 1_000_000_000

# the options a client sent, or a game's defaults
Options = Mapping[str, object]


def bad_option(option: str, detail: str, /, **params: object) -> RuleError:
    """The error for `option`, with a full-sentence `detail` (a template of `params`)."""
    return RuleError("invalid_option", detail, option, **params)


def verify_known(raw: object, defaults: Options) -> Options:
    """`raw` as a mapping of known options, or invalid_option for the first unknown one."""
    if not isinstance(raw, Mapping):
        raise RuleError("invalid_option", "Table options must be an object.")
    for name in raw:
        if name not in defaults:
            raise RuleError(
                "invalid_option",
                "Unknown table option {name!r}; the options are {options}.",
                str(name),
                name=name,
                options=", ".join(defaults),
            )
    return raw


def whole_number(raw: Options, defaults: Options, name: str, low: int, high: int) -> int:
    """Option `name` as a whole number from `low` to `high`."""
    value = raw.get(name, defaults[name])
    if isinstance(value, bool) or not isinstance(value, int):
        raise bad_option(name, "Option {name!r} must be a whole number.", name=name)
    if not low <= value <= high:
        raise bad_option(
            name, "Option {name!r} must be between {low} and {high}.", name=name, low=low, high=high
        )
    return value


def true_or_false(raw: Options, defaults: Options, name: str) -> bool:
    """Option `name` as true or false."""
    value = raw.get(name, defaults[name])
    if not isinstance(value, bool):
        raise bad_option(name, "Option {name!r} must be true or false.", name=name)
    return value


def one_of(raw: Options, defaults: Options, name: str, allowed: tuple[str, ...]) -> str:
    """Option `name` as one of the texts `allowed`."""
    value = raw.get(name, defaults[name])
    if not isinstance(value, str) or value not in allowed:
        choices = ", ".join(allowed)
        raise bad_option(
            name, "Option {name!r} must be one of {choices}.", name=name, choices=choices
        )
    return value


def ante(raw: Options, defaults: Options) -> int:
    """The ``ante``: 1 to MAX_ANTE chips."""
    return whole_number(raw, defaults, "ante", 1, MAX_ANTE)


def turn_seconds(raw: Options, defaults: Options) -> int:
    """``turn_seconds``: the time of a turn, 1 to 3600 seconds."""
    return whole_number(raw, defaults, "turn_seconds", 1, 3600)


def deal_pause_seconds(raw: Options, defaults: Options) -> int | float:
    """``deal_pause_seconds``: the pause between deals, 0 to 60 seconds, maybe fractional."""
    pause = raw.get("deal_pause_seconds", defaults["deal_pause_seconds"])
    if (
        isinstance(pause, bool)
        or not isinstance(pause, int | float)
        or not math.isfinite(pause)
        or not 0 <= pause <= 60
    ):
        raise bad_option(
            "deal_pause_seconds", "Option 'deal_pause_seconds' must be a number from 0 to 60."
        )
    return pause


def buy_in_limits(raw: Options, ante: int) -> tuple[int, int]:
    """``min_buy_in`` and ``max_buy_in``: by default 20 and 500 antes.

    A limit left out follows the one that is given rather than contradicting it, so
    ``{"min_buy_in": 1000}`` gets a maximum of 1000.
    """
    given_min = whole_number(raw, raw, "min_buy_in", 1, MAX_CHIPS) if "min_buy_in" in raw else None
    given_max = whole_number(raw, raw, "max_buy_in", 1, MAX_CHIPS) if "max_buy_in" in raw else None
    min_buy_in = given_min if given_min is not None else 20 * ante
    if given_min is None and given_max is not None:
        min_buy_in = min(min_buy_in, given_max)
    max_buy_in = given_max if given_max is not None else max(500 * ante, min_buy_in)
    if max_buy_in < min_buy_in:
        raise bad_option("max_buy_in", "Option 'max_buy_in' must be at least 'min_buy_in'.")
    return min_buy_in, max_buy_in


def away_after(raw: Options, defaults: Options) -> int:
    """Decisions missed in a row before a seat is away: 0 (never) to 10."""
    return whole_number(raw, defaults, "away_after", 0, 10)


def player_counts(raw: Options, defaults: Options, most: int) -> tuple[int, int]:
    """``min_players`` and ``max_players``: 2 to `most` seats, the maximum not below the
    minimum."""
    low = whole_number(raw, defaults, "min_players", 2, most)
    high = whole_number(raw, defaults, "max_players", 2, most)
    if high < low:
        raise bad_option("max_players", "Option 'max_players' must be at least 'min_players'.")
    return low, high
