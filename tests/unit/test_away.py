"""Away and back in both games, move by move (docs/rules.md, Away and back)."""

from __future__ import annotations

from typing import Any

import pytest

from api.games import paiute
from api.games.common import RuleError
from api.games.game import Back, Declare, Draw, Game, Moved, Rebuy, Start
from api.games.registry import GAMES
from api.games.state import Seat, TableState
from api.games.table import can_deal, deal_of
from tests.support.games import make_deck, turn_of

GUTS = GAMES["guts"]
PAIUTE = GAMES["paiute"]
NAMES = ["Ann", "Bob", "Cy", "Dee"]
T0 = 1000.0


def seated(game: Game, players: int, **options: Any) -> TableState:
    state = game.new_table(options, "t1", 0.0)
    for name in NAMES[:players]:
        state = game.sit(state, name, 100, 0.0).state
    return state


def types(moved: Moved) -> list[str]:
    return [e["type"] for e in moved.events]


def guts_deal_times_out(state: TableState, seed: float, declaring: dict[int, str]) -> TableState:
    """The seats of `declaring` declare in time, the others let the deadline take their
    decision; then the next deal, after the pause."""
    deadline = float(state["deadline"] or 0)
    for number, choice in declaring.items():
        state = GUTS.act(state, number, Declare(choice), deadline - 1).state
    if state["phase"] == "declaring":
        state = GUTS.on_deadline(state, deadline, make_deck(int(seed))).state
    if state["phase"] == "showdown":
        raise AssertionError("the tests here keep clear of showdowns")
    return GUTS.on_deadline(state, deadline + 100, make_deck(int(seed) + 1)).state


def drawn_card(state: TableState) -> str:
    """The card drawn in the turn being played at a Paiute table."""
    drawn = deal_of(paiute.GAME.own(state))["drawn"]
    assert drawn is not None
    return drawn["card"]


def seat(state: TableState, number: int) -> Seat:
    return state["seats"][str(number)]


def test_two_missed_decisions_in_a_row_make_a_guts_seat_away() -> None:
    state = GUTS.act(seated(GUTS, 3), 1, Start(make_deck(1)), T0).state
    # seat 3 misses; 1 and 2 go out: nobody in, the pot carries
    state = guts_deal_times_out(state, T0, {1: "out", 2: "out"})
    assert seat(state, 3)["missed"] == 1
    assert not seat(state, 3)["away"]
    deadline = float(state["deadline"] or 0)
    for number in (1, 2):
        state = GUTS.act(state, number, Declare("out"), deadline - 1).state
    moved = GUTS.on_deadline(state, deadline, make_deck(9))
    assert "away" in types(moved)
    assert next(e for e in moved.events if e["type"] == "away")["data"] == {
        "seat": 3,
        "name": "Cy",
        "missed": 2,
    }
    state = GUTS.on_deadline(moved.state, deadline + 100, make_deck(10)).state
    # the next deal: seat 3 is not dealt in and pays no ante; the game and its pot go on
    assert deal_of(state)["players"] == [1, 2] or sorted(deal_of(state)["players"]) == [1, 2]
    assert seat(state, 3)["status"] == "playing"
    assert seat(state, 3)["stack"] == 98
    assert GUTS.view(state, None)["seats"]["3"]["away"] is True
    # a declaration, then, is refused as for any seat not dealt in
    with pytest.raises(RuleError) as refused:
        GUTS.verify(state, 3, Declare("in"), float(state["deadline"] or 0) - 1)
    assert refused.value.code == "not_your_turn"


def test_a_decision_made_in_time_starts_the_count_again() -> None:
    state = GUTS.act(seated(GUTS, 3), 1, Start(make_deck(1)), T0).state
    state = guts_deal_times_out(state, T0, {1: "out", 2: "out"})
    assert seat(state, 3)["missed"] == 1
    state = guts_deal_times_out(state, T0 + 200, {1: "out", 2: "out", 3: "out"})
    assert seat(state, 3)["missed"] == 0
    state = guts_deal_times_out(state, T0 + 400, {1: "out", 2: "out"})
    assert seat(state, 3)["missed"] == 1
    assert not seat(state, 3)["away"]


def test_away_after_zero_never_marks_a_seat_away() -> None:
    state = GUTS.act(seated(GUTS, 2, away_after=0), 1, Start(make_deck(1)), T0).state
    for deal in range(4):
        state = guts_deal_times_out(state, T0 + 200 * deal, {})
    assert state["hand_number"] == 5
    assert not any(record.get("away") for record in state["seats"].values())


def everyone_away_guts() -> TableState:
    state = GUTS.act(seated(GUTS, 2), 1, Start(make_deck(1)), T0).state
    state = guts_deal_times_out(state, T0, {})
    return guts_deal_times_out(state, T0 + 200, {})


def test_with_too_few_present_the_table_waits_with_its_pot_and_deals_again_on_return() -> None:
    state = everyone_away_guts()
    assert state["phase"] == "waiting"
    assert state["deadline"] is None
    assert state["hand_number"] == 2
    assert state["game_in_progress"]
    assert state["pot"] == 4
    assert not can_deal(state)
    # nothing to do at any time: the clock deals nothing
    assert GUTS.next_deadline(state) is None
    # one back: still too few, no deadline; the other back: the next deal after the pause
    moved = GUTS.act(state, 2, Back(), T0 + 500)
    assert types(moved) == ["back"]
    assert moved.state["phase"] == "waiting"
    with pytest.raises(RuleError) as refused:
        GUTS.verify(moved.state, 2, Back(), T0 + 501)
    assert refused.value.code == "not_away"
    moved = GUTS.act(moved.state, 1, Back(), T0 + 502)
    assert types(moved) == ["back", "phase"]
    assert moved.state["phase"] == "between_deals"
    assert moved.state["deadline"] == T0 + 502 + moved.state["options"]["deal_pause_seconds"]
    state = GUTS.on_deadline(moved.state, T0 + 600, make_deck(3)).state
    assert state["hand_number"] == 3
    assert state["game_number"] == 1
    assert sorted(deal_of(state)["players"]) == [1, 2]


def test_a_rebuy_or_a_start_of_ones_own_brings_a_seat_back() -> None:
    state = everyone_away_guts()
    moved = GUTS.act(state, 1, Rebuy(10), T0 + 500)
    assert types(moved) == ["back", "rebought"]
    assert not seat(moved.state, 1)["away"]
    # a table whose game ended waits for `start`; an away seat's own start counts it in
    fresh = seated(GUTS, 2)
    for number in (1, 2):
        fresh["seats"][str(number)]["away"] = True
    with pytest.raises(RuleError) as refused:
        GUTS.verify(fresh, 1, Start(make_deck(1)), T0)
    assert refused.value.code == "not_enough_players"
    fresh["seats"]["2"]["away"] = False
    moved = GUTS.act(fresh, 1, Start(make_deck(1)), T0)
    assert types(moved)[0] == "back"
    assert sorted(deal_of(moved.state)["players"]) == [1, 2]


def test_a_paiute_seat_away_during_a_deal_has_its_turns_played_at_once() -> None:
    state = PAIUTE.act(seated(PAIUTE, 3), 1, Start(make_deck(4)), T0).state
    first = turn_of(state)
    now = T0
    # the first seat lets two turns go; the others play theirs from the stock
    for _ in range(2):
        now += 100
        state = PAIUTE.on_deadline(state, now, make_deck(5)).state
        for _ in range(2):
            turn = turn_of(state)
            state = PAIUTE.act(state, turn, Draw("stock"), now).state
            drawn = drawn_card(state)
            state = PAIUTE.act(state, turn, _discard(drawn), now).state
    assert seat(state, first)["away"]
    # its turn came round again: played for it at once, with reason away
    assert deal_of(state)["turn"] != first
    assert deal_of(state)["timeouts"][-1] == {"seat": first, "reason": "away"}


def _discard(card: str) -> Any:
    from api.games.game import Discard

    return Discard(card)


def test_a_paiute_deal_with_every_seat_away_is_void_and_the_table_waits() -> None:
    state = PAIUTE.act(seated(PAIUTE, 2), 1, Start(make_deck(4)), T0).state
    now = T0
    events: list[str] = []
    while state["phase"] in ("playing", "last_turns"):
        now += 100
        moved = PAIUTE.on_deadline(state, now, make_deck(int(now)))
        events += [e["type"] for e in moved.events]
        state = moved.state
    assert events.count("away") == 2
    assert deal_of(state)["outcome"] == "void"
    assert state["pot"] == 2
    state = PAIUTE.on_deadline(state, now + 100, make_deck(7)).state
    assert state["phase"] == "waiting"
    assert state["hand_number"] == 1
    assert PAIUTE.next_deadline(state) is None
