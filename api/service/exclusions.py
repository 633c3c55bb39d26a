"""Time-outs and self-exclusion, as pure rules (no I/O).

A player takes a time-out of 1 to 30 days, or excludes themselves for 6 months to 5
years, or for good. Neither the player nor an operator can shorten one: a new one that
ends sooner than the one running is refused, a longer one replaces it. Meanwhile the
player takes no seat, buys in and rebuys nothing and receives no deposit (the wallet's
script refuses them, `api/adapters/lua/wallet.lua`), and their seats are left after the
current deal (docs/players.md, "Time-outs and self-exclusion").
"""

from __future__ import annotations

import calendar
from datetime import UTC, datetime
from typing import TypedDict

TIME_OUT_DAYS = (1, 30)
SELF_EXCLUSION_MONTHS = (6, 60)
DAY = 86_400.0


class Exclusion(TypedDict):
    """A time-out or self-exclusion: its kind, since when, until when (None: for good)."""

    kind: str
    since: float
    until: float | None


class ExclusionError(Exception):
    """An exclusion the rules refuse: `code` is invalid_exclusion or exclusion_shorter."""

    def __init__(self, code: str) -> None:
        """`code` says which rule."""
        super().__init__(code)
        self.code = code


def months_later(at: float, months: int) -> float:
    """The same day and time `months` calendar months after `at` (the month's last day
    when it is shorter), UTC."""
    moment = datetime.fromtimestamp(at, UTC)
    index = moment.month - 1 + months
    year, month = moment.year + index // 12, index % 12 + 1
    day = min(moment.day, calendar.monthrange(year, month)[1])
    return moment.replace(year=year, month=month, day=day).timestamp()


def asked(kind: object, days: object, months: object, permanent: object, now: float) -> Exclusion:
    """The exclusion a request asks for: a time-out of `days`, or a self-exclusion of
    `months` or `permanent`; ExclusionError invalid_exclusion for any other."""
    low, high = TIME_OUT_DAYS
    time_out = kind == "time_out" and months is None and not permanent
    if time_out and type(days) is int and low <= days <= high:
        return {"kind": "time_out", "since": now, "until": now + days * DAY}
    if kind == "self_exclusion" and days is None:
        if permanent is True and months is None:
            return {"kind": "self_exclusion", "since": now, "until": None}
        low, high = SELF_EXCLUSION_MONTHS
        if not permanent and type(months) is int and low <= months <= high:
            return {"kind": "self_exclusion", "since": now, "until": months_later(now, months)}
    raise ExclusionError("invalid_exclusion")


def is_active(exclusion: Exclusion | None, now: float) -> bool:
    """Whether `exclusion` still runs at `now`."""
    if exclusion is None:
        return False
    until = exclusion["until"]
    return until is None or until > now


def extended(current: Exclusion | None, new: Exclusion, now: float) -> Exclusion:
    """`new` in place of the exclusion running, which it must not shorten: ExclusionError
    exclusion_shorter if it ends sooner (a self-exclusion stays one until it ends)."""
    if current is None or not is_active(current, now):
        return new
    if current["until"] is None or (new["until"] is not None and new["until"] < current["until"]):
        raise ExclusionError("exclusion_shorter")
    kind = "self_exclusion" if "self_exclusion" in (current["kind"], new["kind"]) else new["kind"]
    return {"kind": kind, "since": current["since"], "until": new["until"]}
