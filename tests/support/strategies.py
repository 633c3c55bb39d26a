"""Hypothesis strategies shared by the games' property tests: options, names, random moves."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import strategies as st

from api.games import paiute, table
from api.games.common import RuleError
from api.games.events import Event
from api.games.state import PaiuteTable
from tests.support.games import deadline_of, fake_rank, make_deck

GUTS_NAMES = ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "ann"]  # "ann" collides on purpose


def _cap_not_below_ante(options: dict[str, Any]) -> dict[str, Any]:
    """A per-deal cap below the ante is refused at creation (covered elsewhere)."""
    if options["cap"] is not None and options["cap_mode"] == "per_deal":
        options["cap"] = max(options["cap"], options["ante"])
    return options


def guts_options(**overrides: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Guts table options covering every rule, with some fields drawn otherwise."""
    fields: dict[str, st.SearchStrategy[Any]] = {
        "cards": st.sampled_from([2, 3]),
        "ante": st.integers(1, 3),
        "ante_mode": st.sampled_from(["empty_pot", "every_deal"]),
        "declare": st.sampled_from(["simultaneous", "sequential"]),
        "all_out_ante": st.booleans(),
        "wimp": st.booleans(),
        "losers_pay": st.sampled_from(["all", "worst"]),
        "ghost": st.booleans(),
        "cap": st.none() | st.integers(1, 12),
        "cap_mode": st.sampled_from(["per_deal", "reserve"]),
        "turn_seconds": st.integers(1, 30),
        "rebuy": st.booleans(),
        "deal_pause_seconds": st.sampled_from([0, 1.5, 3]),
        "min_players": st.integers(2, 3),
        "max_players": st.integers(3, 6),
        "min_buy_in": st.integers(1, 5),
        "max_buy_in": st.integers(5, 40),
    }
    return st.fixed_dictionaries({**fields, **overrides}).map(_cap_not_below_ante)


GUTS_OPTIONS = guts_options()

PAIUTE_NAMES = ["Ann", "Bob", "Cy", "Dee", "Eve", "ann"]  # "ann" collides on purpose

PAIUTE_OPTIONS = st.fixed_dictionaries(
    {
        "ante": st.integers(1, 3),
        "turn_seconds": st.integers(1, 30),
        "max_reshuffles": st.integers(0, 2),
        "deal_pause_seconds": st.sampled_from([0, 1.5, 3]),
        "min_players": st.integers(2, 3),
        "max_players": st.integers(2, 5),
        "min_buy_in": st.integers(1, 5),
        "max_buy_in": st.integers(5, 40),
        "rebuy": st.booleans(),
    }
)

# Mostly whole turns, so that deals run long enough to reach the stock's end; calls are
# rare outside the last turns (see paiute_move), or every deal would end at once.
PAIUTE_ACTIONS = ["sit", "leave", "rebuy", "start", "start", "settle", "settle", "deadline"]
PAIUTE_ACTIONS += ["back"]
PAIUTE_ACTIONS += ["draw", "discard", "call"] + ["turn"] * 30


def paiute_move(
    state: PaiuteTable, action: str, data: st.DataObject, now: float, rng: random.Random
) -> tuple[PaiuteTable, list[Event]]:
    """Try one move, mostly a legal one, for the seat whose turn it is."""
    options = state["options"]
    seats = st.integers(1, options["max_players"] + 1)
    deal = state["deal"]
    turn = deal["turn"] if deal is not None and deal["turn"] is not None else None
    seat = turn if turn is not None and data.draw(st.integers(0, 19)) else data.draw(seats)
    if action == "sit":
        buy_in = data.draw(st.integers(0, options["max_buy_in"] + 1))
        return paiute.sit(state, data.draw(st.sampled_from(PAIUTE_NAMES)), buy_in, now)
    if action == "leave":
        return paiute.leave(state, data.draw(seats), now)
    if action == "rebuy":
        amount = data.draw(st.integers(0, options["max_buy_in"]))
        return paiute.rebuy(state, data.draw(seats), amount, now)
    if action == "back":
        return table.back(state, data.draw(seats), now)
    if action == "start" or state["phase"] == "waiting":
        return paiute.start(state, data.draw(seats), now, make_deck(rng))
    if action == "deadline":
        deadline = paiute.next_deadline(state)
        return paiute.on_deadline(state, max(now, deadline or now), make_deck(rng))
    if action == "settle" or state["phase"] == "showdown":
        request = paiute.ranking_request(state) or {}
        keys = list(request)
        if keys and data.draw(st.integers(0, 9)) == 0:
            keys.pop()
        return paiute.settle(state, {key: fake_rank(request[key]) for key in keys}, now)
    if state["phase"] == "between_deals":
        return paiute.on_deadline(state, max(now, deadline_of(state)), make_deck(rng))
    if action == "draw":
        return paiute.draw(state, seat, data.draw(st.sampled_from(["stock", "discard"])), now)
    held: list[str] = deal["hands"].get(str(seat), []) if deal is not None else []
    if action == "discard":
        card = data.draw(st.sampled_from(held)) if held else "2c"
        return paiute.discard(state, seat, card, now)
    events: list[Event] = []
    if deal is not None and deal["turn"] == seat and deal["drawn"] is None:
        source = data.draw(st.sampled_from(["stock", "stock", "stock", "discard"]))
        state, events = paiute.draw(state, seat, source, now)
        if table.deal_of(state)["drawn"] is None:
            return state, events
        deal = table.deal_of(state)
        held = deal["hands"][str(seat)]
    if action == "call" or (state["phase"] == "last_turns" and data.draw(st.booleans())):
        cards = list(held)
        data.draw(st.randoms(use_true_random=False)).shuffle(cards)
        size = data.draw(st.sampled_from([5, 5, 6]))
        spare = cards[size] if len(cards) > size else None
        try:
            state, more = paiute.call(
                state, seat, cards[:size], spare, fake_rank(cards[:size]), now
            )
            return state, events + more
        except RuleError:
            if not events:
                raise
    if deal is None or deal["drawn"] is None or not held:
        return paiute.discard(state, seat, held[0] if held else "2c", now)
    # The drawn card, unless it came from the discard pile and must stay.
    card = held[-1] if deal["drawn"]["source"] == "stock" else held[0]
    state, more = paiute.discard(state, seat, card, now)
    return state, events + more
