"""What the games' unit tests share: decks, the commitment, refusals, the codes of both games."""

from __future__ import annotations

import copy
import hashlib
import random
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, Literal, cast

import pytest

from api.games import fairness, guts, paiute
from api.games.common import FULL_DECK, Deck, Ranked, RuleError
from api.games.events import Event
from api.games.state import (
    Choice,
    GutsDeal,
    GutsDealView,
    GutsYou,
    PaiuteDeal,
    PaiuteDealView,
    PaiuteYou,
    Pending,
    TableState,
    TableView,
)
from api.games.table import deal_of


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


def assert_refused(code: str, move: Callable[..., Any], state: TableState, *args: Any) -> None:
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


def stack_of(state: TableState, key: str) -> int:
    """The chips in front of seat `key` (0 for an empty seat)."""
    seat = state["seats"].get(key)
    return 0 if seat is None else int(seat["stack"])


def turn_of(state: TableState) -> int:
    """The seat whose turn it is in the deal being played."""
    turn = deal_of(state)["turn"]
    assert turn is not None
    return turn


def guts_deal_of(state: TableState) -> GutsDeal:
    """The deal a Guts table is playing (the test expects a Guts table with a deal)."""
    return deal_of(guts.GAME.own(state))


def paiute_deal_of(state: TableState) -> PaiuteDeal:
    """The deal a Paiute table is playing (the test expects a Paiute table with a deal)."""
    return deal_of(paiute.GAME.own(state))


def declarations_of(deal: GutsDeal | PaiuteDeal) -> dict[str, Choice]:
    """A Guts deal's declarations so far, by seat (none in a Paiute deal)."""
    if "declarations" in deal:
        return deal["declarations"]
    return {}


def wild_card_of(deal: GutsDeal | PaiuteDeal) -> str | None:
    """A Paiute deal's wild card (none in a Guts deal)."""
    if "wild_card" in deal:
        return deal["wild_card"]
    return None


def deadline_of(state: TableState) -> float:
    """When the table's wait ends (the test expects it to wait)."""
    deadline = state["deadline"]
    assert deadline is not None
    return deadline


def _shown(view: TableView, game: str, part: Literal["deal", "you"]) -> object:
    """A part of a view of a table of `game` that the test expects to be there."""
    assert view["game"] == game, view["game"]
    shown = view[part]
    assert shown is not None, part
    return shown


def guts_deal(view: TableView) -> GutsDealView:
    """The deal a view of a Guts table shows."""
    return cast(GutsDealView, _shown(view, "guts", "deal"))


def paiute_deal(view: TableView) -> PaiuteDealView:
    """The deal a view of a Paiute table shows."""
    return cast(PaiuteDealView, _shown(view, "paiute", "deal"))


def guts_you(view: TableView) -> GutsYou:
    """What a view of a Guts table shows its seat alone."""
    return cast(GutsYou, _shown(view, "guts", "you"))


def paiute_you(view: TableView) -> PaiuteYou:
    """What a view of a Paiute table shows its seat alone."""
    return cast(PaiuteYou, _shown(view, "paiute", "you"))


def pending_of(view: TableView) -> Pending:
    """What the viewed table waits for, when the test expects it to wait."""
    waits = view["pending"]
    assert waits is not None
    return waits


def seats_pending(view: TableView) -> list[int]:
    """The seats whose move the viewed table waits for (none when it waits for no move)."""
    waits = view["pending"]
    return waits["seats"] if waits is not None else []


def stored_state(state: Mapping[str, Any]) -> TableState:
    """A state as the store keeps it (JSON), read as the games' typed state: the same dict."""
    return cast(TableState, state)


def stored_events(log: Sequence[Mapping[str, Any]]) -> Sequence[Event]:
    """A table's log as the store keeps it (JSON), read as the games' typed events."""
    return cast(Sequence[Event], log)


def fake_rank(cards: list[str]) -> Ranked:
    """A stand-in for the evaluator: strength 0, 1 or 2 by a digest of the cards."""
    strength = hashlib.sha256(",".join(sorted(cards)).encode()).digest()[0] % 3
    return Ranked(strength, "fake", f"Fake strength {strength}")
