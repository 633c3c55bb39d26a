"""The event-log fold: random games replayed event by event give the state's summary."""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from typing import Any, TypeAlias, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.games import guts, paiute
from api.games.common import Ranked, RuleError
from api.games.events import Event, TableCreatedData
from api.games.replay import ReplayError, apply_event, empty_table, replay, summary
from api.games.state import GutsTable, PaiuteTable
from tests.support.games import make_deck, seats_pending
from tests.support.strategies import (
    GUTS_NAMES,
    GUTS_OPTIONS,
    PAIUTE_ACTIONS,
    PAIUTE_OPTIONS,
    paiute_move,
)


def guts_move(
    state: GutsTable, action: str, data: st.DataObject, now: float, rng: random.Random
) -> tuple[GutsTable, list[Event]]:
    """One Guts move, legal or not, much as a table sees them."""
    options = state["options"]
    seats = st.integers(1, options["max_players"] + 1)
    if action == "sit":
        buy_in = data.draw(st.integers(0, options["max_buy_in"] + 1))
        return guts.sit(state, data.draw(st.sampled_from(GUTS_NAMES)), buy_in, now)
    if action == "leave":
        return guts.leave(state, data.draw(seats), now)
    if action == "rebuy":
        amount = data.draw(st.integers(0, options["max_buy_in"]))
        return guts.rebuy(state, data.draw(seats), amount, now)
    if action == "start":
        return guts.start(state, data.draw(seats), now, make_deck(rng))
    if action == "declare":
        pending = seats_pending(guts.view(state, None))
        seat = data.draw(st.sampled_from(pending) | seats if pending else seats)
        return guts.declare(state, seat, data.draw(st.sampled_from(["in", "in", "out"])), now)
    if action == "deadline":
        deadline = guts.next_deadline(state)
        return guts.on_deadline(state, max(now, deadline or now), make_deck(rng))
    request = guts.ranking_request(state) or {}
    ranked = {key: Ranked(data.draw(st.integers(0, 3)), "x", "") for key in request}
    return guts.settle(state, ranked, now)


T = TypeVar("T", GutsTable, PaiuteTable)
# a random move of one game: (state, action, data, now, rng) to the move's transition
Move: TypeAlias = Callable[[T, str, st.DataObject, float, random.Random], tuple[T, list[Event]]]

GUTS_ACTIONS = ["sit", "leave", "rebuy", "start", "settle", "deadline"] + ["declare"] * 6


def play_and_replay(
    state: T, data: st.DataObject, steps: int, move: Move[T], actions: list[str]
) -> int:
    """Play random moves; after each accepted one the log's fold equals the summary."""
    rng = data.draw(st.randoms(use_true_random=False))
    created: TableCreatedData = {"options": state["options"], "name": "replay"}
    log: list[Event] = [{"type": "table_created", "data": created, "visible_to": None}]
    players = data.draw(st.integers(2, min(3, state["options"]["max_players"])))
    for name in ("Ann", "Bob", "Cy")[:players]:
        buy_in = data.draw(st.integers(state["options"]["min_buy_in"], 12))
        buy_in = min(buy_in, state["options"]["max_buy_in"])
        state, events = (guts if state["game"] == "guts" else paiute).sit(state, name, buy_in, 0.0)
        log += events
    folded = replay(log)
    now = 0.0
    accepted = 0
    for _ in range(steps):
        now += data.draw(st.sampled_from([0.0, 0.0, 0.5, 2.0]))
        try:
            state, events = move(state, data.draw(st.sampled_from(actions)), data, now, rng)
        except RuleError:
            continue
        accepted += 1
        log += events
        for item in events:
            apply_event(folded, item)
        assert folded == summary(state)
    # Folding the whole log at once is the same as folding it event by event.
    assert replay(copy.deepcopy(log)) == summary(state)
    return accepted


@settings(max_examples=60, suppress_health_check=[HealthCheck.too_slow])
@given(options=GUTS_OPTIONS, data=st.data())
def test_guts_logs_replay_to_the_state(options: dict[str, Any], data: st.DataObject) -> None:
    options["max_players"] = max(options["max_players"], options["min_players"])
    state = guts.new_table(options, "replay", 0.0)
    play_and_replay(state, data, data.draw(st.integers(10, 120)), guts_move, GUTS_ACTIONS)


@settings(max_examples=40, suppress_health_check=[HealthCheck.too_slow])
@given(options=PAIUTE_OPTIONS, data=st.data())
def test_paiute_logs_replay_to_the_state(options: dict[str, Any], data: st.DataObject) -> None:
    options["max_players"] = max(options["max_players"], options["min_players"])
    state = paiute.new_table(options, "replay", 0.0)
    steps = data.draw(st.integers(20, 250))
    play_and_replay(state, data, steps, paiute_move, PAIUTE_ACTIONS)


def seated(seat: int, name: str, stack: int) -> Event:
    """A `seated` event for a new player."""
    return {
        "type": "seated",
        "data": {"seat": seat, "name": name, "stack": stack, "status": "waiting"},
    }


def test_a_guts_deal_replays_to_stacks_pot_and_hands() -> None:
    deck = make_deck(random.Random(7))
    state = guts.new_table({"cards": 3, "ante": 2}, "one", 0.0)
    log: list[Event] = []
    for name in ("Ann", "Bob"):
        state, events = guts.sit(state, name, 50, 0.0)
        log += events
    state, events = guts.start(state, 1, 0.0, deck)
    log += events
    table = replay(log)
    assert table["pot"] == 4
    assert {key: seat["stack"] for key, seat in table["seats"].items()} == {"1": 48, "2": 48}
    assert table["deal"] is not None
    assert table["deal"]["hands"] == {"2": list(deck.cards[0:6:2]), "1": list(deck.cards[1:6:2])}
    assert table == summary(state)
    for seat in (1, 2):
        state, events = guts.declare(state, seat, "in" if seat == 1 else "out", 1.0)
        log += events
    table = replay(log)
    assert table["seats"]["1"]["stack"] == 52
    assert table["pot"] == 0
    assert table["deal"] is not None
    assert table["deal"]["declarations"] == {"1": "in", "2": "out"}
    assert table == summary(state)


def test_an_empty_log_is_an_empty_table() -> None:
    assert replay([]) == empty_table()
    assert replay([]) == summary(guts.new_table({}, "empty", 0.0))


@pytest.mark.parametrize(
    ("log", "message"),
    [
        ([{"type": "jackpot", "data": {}}], "Unknown event type"),
        ([seated(1, "Ann", 20), seated(1, "Bob", 20)], "taken already"),
        ([{"type": "left", "data": {"seat": 3, "name": "Cy", "reason": "left"}}], "not occupied"),
        (
            [
                seated(1, "Ann", 20),
                {"type": "rebought", "data": {"seat": 1, "amount": 5, "stack": 24}},
            ],
            "stack of seat 1",
        ),
        (
            [
                seated(1, "Ann", 20),
                {"type": "cashed_out", "data": {"seat": 1, "name": "Ann", "amount": 19}},
            ],
            "cash-out of seat 1",
        ),
        (
            [
                seated(1, "Ann", 20),
                {
                    "type": "ante",
                    "data": {
                        "seat": 1,
                        "owed": 1,
                        "amount": 1,
                        "to_pot": 1,
                        "to_reserve": 0,
                        "stack": 19,
                    },
                },
                {"type": "pot_won", "data": {"seat": 1, "amount": 1, "pot": 1}},
            ],
            "the pot",
        ),
        ([{"type": "cards_dealt", "data": {"seat": 1, "cards": ["Ah"]}}], "No deal"),
        ([{"type": "seated", "data": {"seat": 1}}], "does not fit"),
    ],
)
def test_a_log_that_contradicts_itself_is_refused(log: list[Any], message: str) -> None:
    with pytest.raises(ReplayError, match=message):
        replay(log)
