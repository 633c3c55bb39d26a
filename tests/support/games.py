"""What the games' unit tests share: decks, the commitment, refusals, the codes of both games."""

from __future__ import annotations

import copy
import hashlib
import random
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from gateway.games import fairness
from gateway.games.common import FULL_DECK, Deck, Event, Ranked, RuleError


def make_deck(seed: int | random.Random = 0) -> Deck:
    """A shuffled deck: from a seed (salted with the seed) or drawn from a generator."""
    cards = list(FULL_DECK)
    if isinstance(seed, random.Random):
        seed.shuffle(cards)
        return Deck(tuple(cards), f"{seed.getrandbits(32):08x}")
    random.Random(seed).shuffle(cards)
    return Deck(tuple(cards), f"{seed:08x}")


def commitment(deck: Deck) -> str:
    """The commitment a deal with this deck publishes."""
    return fairness.commitment(deck.cards, deck.salt)


def assert_refused(code: str, move: Callable[..., Any], state: dict[str, Any], *args: Any) -> None:
    """`move(state, *args)` is refused with `code`, a full-sentence detail, `state` untouched."""
    before = copy.deepcopy(state)
    with pytest.raises(RuleError) as caught:
        move(state, *args)
    assert caught.value.code == code, caught.value.detail
    assert caught.value.detail.endswith(".")
    assert state == before


def types(events: list[Event]) -> list[str]:
    """The types of these events, in order."""
    return [e["type"] for e in events]


CARDS = frozenset(FULL_DECK)
GUTS_CODES = {
    "not_away",
    "invalid_name",
    "name_taken",
    "table_full",
    "invalid_buy_in",
    "not_seated",
    "already_left",
    "already_started",
    "not_enough_players",
    "rebuy_not_allowed",
    "game_in_progress",
    "no_hand_in_progress",
    "showdown_pending",
    "not_your_turn",
    "already_declared",
    "invalid_choice",
    "too_late",
    "not_in_showdown",
    "invalid_ranking",
}

# Guts' codes for the seat moves, with Paiute's turn codes in place of declaring.
PAIUTE_CODES = (GUTS_CODES - {"already_declared"}) | {
    "already_drawn",
    "empty_discard_pile",
    "must_draw_first",
    "card_not_held",
    "cannot_discard_drawn",
    "invalid_combination",
    "cards_not_held",
    "no_combination",
}


def leaves(value: Any) -> Iterator[Any]:
    """Yield every scalar inside a JSON-like value."""
    if isinstance(value, dict):
        for item in value.values():
            yield from leaves(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from leaves(item)
    else:
        yield value


def cards_in(value: Any) -> set[str]:
    """Every card text anywhere inside `value`."""
    return {leaf for leaf in leaves(value) if isinstance(leaf, str) and leaf in CARDS}


def stack_of(state: dict[str, Any], key: str) -> int:
    """The chips in front of seat `key` (0 for an empty seat)."""
    seat = state["seats"].get(key)
    return 0 if seat is None else int(seat["stack"])


def fake_rank(cards: list[str]) -> Ranked:
    """A stand-in for the evaluator: strength 0, 1 or 2 by a digest of the cards."""
    strength = hashlib.sha256(",".join(sorted(cards)).encode()).digest()[0] % 3
    return Ranked(strength, "fake", f"Fake strength {strength}")
