"""Both games played through the `Game` protocol (`api.games.game`, `.registry`).

Each move through `Game.act` gives what the game's own function gives, as a `Moved`
record; moves a game has not are refused; action bodies become moves.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from api.games import guts, paiute
from api.games.common import FULL_DECK, Deck, Ranked, RuleError
from api.games.game import (
    ActionBody,
    Call,
    Declare,
    Discard,
    Draw,
    Game,
    HandRules,
    Move,
    Moved,
    Rebuy,
    Start,
    move_of,
)
from api.games.registry import GAMES, game_for
from api.games.state import TableState
from api.games.table import deal_of

T0 = 1000.0
NAMES = ["Ann", "Bob", "Cy"]


def deck(seed: int = 0) -> Deck:
    cards = list(FULL_DECK)
    random.Random(seed).shuffle(cards)
    return Deck(tuple(cards), f"{seed:08x}")


def seated(game: Game, players: int = 3) -> TableState:
    state = game.new_table({}, "t1", 0.0)
    for name in NAMES[:players]:
        state = game.sit(state, name, 100, 0.0).state
    return state


def test_the_registry_names_every_game_by_its_state() -> None:
    assert set(GAMES) == {"guts", "paiute"}
    for name, game in GAMES.items():
        assert game.name == name
        state = game.new_table({}, "t1", 0.0)
        assert state["game"] == name
        assert game_for(state) is game
    assert GAMES["guts"].moves == {"start", "declare", "rebuy", "back"}
    assert GAMES["paiute"].moves == {"start", "rebuy", "draw", "discard", "call", "back"}


def test_an_unknown_game_is_refused() -> None:
    bridge: Any = {"game": "bridge"}  # the state of a game that does not exist
    with pytest.raises(RuleError) as refused:
        game_for(bridge)
    assert refused.value.code == "unsupported_game"


def test_a_guts_deal_through_the_protocol_is_the_deal_of_the_functions() -> None:
    game = GAMES["guts"]
    state = seated(game)
    legacy = guts.GAME.own(state).copy()
    started = game.act(state, 1, Start(deck()), T0)
    legacy, events = guts.start(legacy, 1, T0, deck())
    assert isinstance(started, Moved)
    assert (started.state, list(started.events)) == (legacy, events)
    assert started.showdown is None
    moved = started
    for seat in deal_of(legacy)["players"]:
        game.verify(moved.state, seat, Declare("in"), T0 + 1)
        moved = game.act(moved.state, seat, Declare("in"), T0 + 1)
        legacy, events = guts.declare(legacy, seat, "in", T0 + 1)
        assert (moved.state, list(moved.events)) == (legacy, events)
    assert moved.showdown == guts.ranking_request(legacy)
    assert moved.showdown is not None
    assert game.hand_rules(moved.state) == HandRules("guts3")
    ranks = {key: Ranked(int(key) if key.isdigit() else 0, "t", "t") for key in moved.showdown}
    settled = game.settle(moved.state, ranks, T0 + 2)
    legacy, events = guts.settle(legacy, ranks, T0 + 2)
    assert (settled.state, list(settled.events)) == (legacy, events)
    assert game.finished_deal(settled.state) == guts.finished_deal(legacy)
    assert game.view(settled.state, 1) == guts.view(legacy, 1)
    assert game.chips_on_table(settled.state) == 300


def test_a_paiute_call_is_verified_unranked_then_applied_with_its_rank() -> None:
    game = GAMES["paiute"]
    state = game.act(seated(game), 1, Start(deck(3)), T0).state
    seat = state["deal"]["turn"] if state["deal"] is not None else None
    assert isinstance(seat, int)
    drawn = game.act(state, seat, Draw("stock"), T0 + 1)
    assert drawn.state == paiute.draw(paiute.GAME.own(state).copy(), seat, "stock", T0 + 1)[0]
    deal = drawn.state["deal"]
    assert deal is not None
    hand: list[str] = deal["hands"][str(seat)]
    call = Call(tuple(hand[:5]), hand[5])
    game.verify(drawn.state, seat, call, T0 + 1)
    with pytest.raises(RuleError) as unranked:
        game.act(drawn.state, seat, call, T0 + 1)
    assert unranked.value.code == "invalid_ranking"
    ranked = Ranked(5, "test", "a test rank")
    called = game.act(drawn.state, seat, Call(call.cards, call.discard, ranked), T0 + 1)
    legacy = paiute.call(
        paiute.GAME.own(drawn.state).copy(), seat, list(call.cards), call.discard, ranked, T0 + 1
    )
    assert (called.state, list(called.events)) == legacy
    assert game.hand_rules(called.state) == HandRules("paiute", paiute.wild_rank(legacy[0]))
    held = game.hold_turn(drawn.state, seat, call, T0 + 1, 60.0)
    assert [e["type"] for e in held.events] == ["turn_held"]


def test_a_move_a_game_has_not_is_refused_and_changes_nothing() -> None:
    guts_table = seated(GAMES["guts"])
    paiute_table = seated(GAMES["paiute"])
    cases: list[tuple[Game, TableState, Move]] = [
        (GAMES["guts"], guts_table, Draw("stock")),
        (GAMES["guts"], guts_table, Discard("Ah")),
        (GAMES["paiute"], paiute_table, Declare("in")),
    ]
    for game, state, move in cases:
        before = dict(state)
        for attempt in (game.verify, game.act):
            with pytest.raises(RuleError) as refused:
                attempt(state, 1, move, T0)
            assert refused.value.code == "unsupported_action"
            assert (
                refused.value.template
                == "A {game} table has no {name!r} move; its moves are {moves}."
            )
            assert refused.value.params["name"] == move.name
            assert move.name not in str(refused.value.params["moves"])
        assert state == before
    with pytest.raises(RuleError):
        GAMES["guts"].hold_turn(guts_table, 1, Call(("Ah",), None), T0, 1.0)


def test_the_seat_moves_are_the_shared_ones_for_both_games() -> None:
    for game in GAMES.values():
        state = seated(game, 2)
        game.verify_sit(state, "Dee", 100, 0.0)
        game.verify(state, 1, Rebuy(10), 0.0)
        rebought = game.act(state, 1, Rebuy(10), 0.0)
        assert rebought.state["seats"]["1"]["stack"] == 110
        game.verify_leave(rebought.state, 2, 0.0)
        left = game.leave(rebought.state, 2, 0.0)
        assert [e["type"] for e in left.events] == ["cashed_out", "left"]
        assert game.next_deadline(left.state) is None
        assert game.ranking_request(left.state) is None


def test_action_bodies_become_moves_with_canonical_cards() -> None:
    dealt = deck(7)
    assert move_of({"action": "start"}, lambda: dealt) == Start(dealt)
    assert move_of({"action": "declare", "choice": "in"}, deck) == Declare("in")
    assert move_of({"action": "rebuy", "amount": 5}, deck) == Rebuy(5)
    assert move_of({"action": "draw", "source": "discard"}, deck) == Draw("discard")
    assert move_of({"action": "discard", "card": "10h"}, deck) == Discard("Th")
    six: ActionBody = {"action": "call", "cards": ["ah", "AD", "ac", "2c", "2d", "2h"]}
    assert move_of(six, deck) == Call(("Ah", "Ad", "Ac", "2c", "2d", "2h"), None)
    five: ActionBody = {"action": "call", "cards": ["ah", "AD", "ac", "2c", "2d"], "discard": "3s"}
    assert move_of(five, deck) == Call(("Ah", "Ad", "Ac", "2c", "2d"), "3s")
    with pytest.raises(RuleError) as bad_card:
        move_of({"action": "discard", "card": "1h"}, deck)
    assert (bad_card.value.code, bad_card.value.field) == ("invalid_card", "card")
    with pytest.raises(RuleError) as unknown:
        move_of({"action": "fold"}, deck)
    assert (unknown.value.code, unknown.value.field) == ("unsupported_action", "action")
