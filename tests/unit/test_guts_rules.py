"""Move-by-move tests of the Guts state machine: options, every move, every error code."""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Mapping
from typing import Any

import pytest

from api.games import guts
from api.games.common import FULL_DECK, Deck, Ranked, RuleError
from api.games.events import Event
from api.games.state import GutsTable
from api.games.table import deal_of
from tests.support.games import (
    assert_refused,
    commitment,
    guts_deal,
    guts_you,
    make_deck,
    pending_of,
    types,
)

NAMES = ["Ann", "Bob", "Cy", "Dee", "Eve", "Fay", "Gus", "Hal", "Ida", "Jo"]
T0 = 1000.0


def seated(players: int, stack: int = 100, **options: Any) -> GutsTable:
    state = guts.new_table(options, "t1", 0.0)
    for name in NAMES[:players]:
        state, _ = guts.sit(state, name, stack, 0.0)
    return state


def started(players: int, stack: int = 100, **options: Any) -> GutsTable:
    state, _ = guts.start(seated(players, stack, **options), 1, T0, make_deck())
    return state


def ranks(strengths: Mapping[str, int]) -> dict[str, Ranked]:
    return {key: Ranked(value, "test", f"strength {value}") for key, value in strengths.items()}


def declare_all(state: GutsTable, choices: Mapping[int, str]) -> tuple[GutsTable, list[Event]]:
    events: list[Event] = []
    for seat in deal_of(state)["players"]:
        if seat in choices:
            state, new = guts.declare(state, seat, choices[seat], T0 + 1)
            events += new
    return state, events


# --------------------------------------------------------------------------- options


def test_defaults_are_filled_in() -> None:
    options = guts.validate_options({})
    assert options == guts.GUTS_DEFAULTS
    assert options["cap"] is None
    assert options["cap_mode"] == "per_deal"


def test_buy_in_defaults_scale_with_the_ante() -> None:
    options = guts.validate_options({"ante": 5})
    assert (options["min_buy_in"], options["max_buy_in"]) == (100, 2500)


def test_a_lone_buy_in_limit_moves_the_other_default() -> None:
    assert guts.validate_options({"min_buy_in": 1000})["max_buy_in"] == 1000
    assert guts.validate_options({"max_buy_in": 10})["min_buy_in"] == 10


def test_every_option_accepts_its_documented_values() -> None:
    options = guts.validate_options(
        {
            "cards": 2,
            "ante": 3,
            "ante_mode": "every_deal",
            "declare": "sequential",
            "all_out_ante": False,
            "wimp": True,
            "losers_pay": "worst",
            "ghost": True,
            "cap": 50,
            "cap_mode": "reserve",
            "turn_seconds": 3600,
            "rebuy": False,
            "deal_pause_seconds": 0.5,
            "min_players": 3,
            "max_players": 3,
            "min_buy_in": 30,
            "max_buy_in": 30,
        }
    )
    assert options["cards"] == 2
    assert options["cap"] == 50
    assert options["deal_pause_seconds"] == 0.5


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"colour": "red"}, "colour"),
        ({"cards": 4}, "cards"),
        ({"cards": True}, "cards"),
        ({"cards": 3.0}, "cards"),
        ({"ante": 0}, "ante"),
        ({"ante": True}, "ante"),
        ({"ante": 1.5}, "ante"),
        ({"ante": "1"}, "ante"),
        ({"ante_mode": "sometimes"}, "ante_mode"),
        ({"declare": "loud"}, "declare"),
        ({"all_out_ante": 1}, "all_out_ante"),
        ({"wimp": "yes"}, "wimp"),
        ({"losers_pay": "none"}, "losers_pay"),
        ({"ghost": None}, "ghost"),
        ({"cap": 0}, "cap"),
        ({"ante": 5, "cap": 4}, "cap"),  # per deal, the ante alone would pass the cap
        ({"cap": False}, "cap"),
        ({"cap_mode": "weekly"}, "cap_mode"),
        ({"turn_seconds": 0}, "turn_seconds"),
        ({"turn_seconds": 3601}, "turn_seconds"),
        ({"rebuy": 0}, "rebuy"),
        ({"deal_pause_seconds": -1}, "deal_pause_seconds"),
        ({"deal_pause_seconds": 61}, "deal_pause_seconds"),
        ({"deal_pause_seconds": float("nan")}, "deal_pause_seconds"),
        ({"deal_pause_seconds": True}, "deal_pause_seconds"),
        ({"min_players": 1}, "min_players"),
        ({"max_players": 11}, "max_players"),
        ({"min_players": 5, "max_players": 4}, "max_players"),
        ({"min_buy_in": 0}, "min_buy_in"),
        ({"min_buy_in": 50, "max_buy_in": 40}, "max_buy_in"),
        ({"max_buy_in": None}, "max_buy_in"),
    ],
)
def test_bad_options_are_refused_naming_the_field(raw: dict[str, Any], field: str) -> None:
    with pytest.raises(RuleError) as caught:
        guts.validate_options(raw)
    assert caught.value.code == "invalid_option"
    assert caught.value.field == field
    assert field in caught.value.detail


def test_options_must_be_a_mapping() -> None:
    with pytest.raises(RuleError) as caught:
        guts.validate_options([("cards", 2)])  # type: ignore[arg-type]
    assert caught.value.code == "invalid_option"


def test_new_table_is_waiting_and_json_safe() -> None:
    state = guts.new_table({"cards": 2}, "t9", 5.0)
    assert state["phase"] == "waiting"
    assert state["seats"] == {}
    assert state["version"] == 0
    assert (state["hand_number"], state["game_number"], state["pot"], state["reserve"]) == (
        0,
        0,
        0,
        0,
    )
    assert state["dealer"] is None
    assert guts.next_deadline(state) is None
    assert json.loads(json.dumps(state)) == state


def test_new_table_refuses_bad_options() -> None:
    with pytest.raises(RuleError) as caught:
        guts.new_table({"wimp": "sure"}, "t1", 0.0)
    assert caught.value.field == "wimp"


# --------------------------------------------------------------------------- deck


@pytest.mark.parametrize(
    "deck",
    [
        None,
        Deck(FULL_DECK[:51], "ab"),
        Deck((*FULL_DECK[:51], "2c"), "ab"),
        Deck(FULL_DECK, ""),
        Deck(FULL_DECK, "xyz"),
        Deck((*FULL_DECK[:51], "1x"), "ab"),
    ],
)
def test_start_refuses_a_bad_deck(deck: Deck) -> None:
    assert_refused("invalid_deck", guts.start, seated(2), 1, T0, deck)


# --------------------------------------------------------------------------- sit


def test_sit_takes_the_lowest_free_seat_and_waits() -> None:
    state = seated(3)
    state, _ = guts.leave(state, 2, 0.0)
    state, events = guts.sit(state, "  Zed ", 50, 1.0)
    assert events == [
        {
            "type": "seated",
            "data": {"seat": 2, "name": "Zed", "stack": 50, "status": "waiting"},
            "visible_to": None,
        }
    ]
    assert state["seats"]["2"]["status"] == "waiting"
    assert state["chips_bought"] == 350
    assert state["chips_cashed"] == 100


@pytest.mark.parametrize(
    "name",
    [
        "",
        "   ",
        "x" * 33,
        7,
        None,
        "\u200b",  # a zero-width space alone looks empty
        "Ann\u200b",  # ... and after a name, looks like that name
        "a\x00b",  # a control character
        "a\nb",
        "\u202eevil",  # a direction override
        "a\u2028b",  # a line separator
        "\ue000",  # private use
    ],
)
def test_sit_refuses_a_bad_name(name: Any) -> None:
    assert_refused("invalid_name", guts.sit, seated(1), name, 100, 0.0)


def test_a_name_is_kept_composed_and_trimmed() -> None:
    state, _ = guts.sit(seated(0), "  Zoe\u0301 ", 100, 0.0)  # e + combining acute
    assert state["seats"]["1"]["name"] == "Zo\u00e9"
    state, _ = guts.sit(state, "Jos\u00e9 Mar\u00eda", 100, 0.0)
    assert state["seats"]["2"]["name"] == "Jos\u00e9 Mar\u00eda"


@pytest.mark.parametrize("buy_in", [19, 501, 100.0, True, "100", None])
def test_sit_refuses_a_bad_buy_in(buy_in: Any) -> None:
    assert_refused("invalid_buy_in", guts.sit, seated(1), "New", buy_in, 0.0)


@pytest.mark.parametrize(
    "name",
    [" bob", "BOB", "\uff22\uff4f\uff42", "Bo\u0062", "bob\u00a0"],  # case, fullwidth, NBSP
)
def test_sit_refuses_a_name_in_use_ignoring_case_and_forms(name: str) -> None:
    assert_refused("name_taken", guts.sit, seated(2), name, 100, 0.0)


def test_names_differing_in_inner_spaces_only_are_one_name() -> None:
    state, _ = guts.sit(seated(0), "Ann Lee", 100, 0.0)
    assert_refused("name_taken", guts.sit, state, "ann   lee", 100, 0.0)


def test_sit_refuses_when_every_seat_is_taken() -> None:
    assert_refused("table_full", guts.sit, seated(2, max_players=2), "New", 100, 0.0)


def test_sit_does_not_mutate_its_input() -> None:
    state = seated(1)
    before = copy.deepcopy(state)
    guts.sit(state, "New", 100, 0.0)
    assert state == before


def test_a_player_seated_mid_game_waits_for_the_next_game() -> None:
    state = started(3)
    state, _ = guts.sit(state, "Late", 100, T0 + 1)
    assert state["seats"]["4"]["status"] == "waiting"
    # Seats 2 and 3 in, 2 wins: the pot is refilled by 3's payment, the game goes on.
    state, _ = declare_all(state, {2: "in", 3: "in", 1: "out"})
    state, _ = guts.settle(state, ranks({"2": 9, "3": 1}), T0 + 2)
    state, _ = guts.on_deadline(state, T0 + 10, make_deck(1))
    assert 4 not in deal_of(state)["players"]
    assert guts.view(state, None)["seats"]["4"]["status"] == "waiting"
    # A lone winner empties the pot: the game ends and the next deal starts a new one.
    state, _ = declare_all(state, {3: "in", 1: "out", 2: "out"})
    state, events = guts.on_deadline(state, T0 + 20, make_deck(2))
    assert "game_started" in types(events)
    assert 4 in deal_of(state)["players"]
    assert state["seats"]["4"]["status"] == "playing"


def test_settle_and_the_next_deal_in_place_change_only_the_state_given() -> None:
    """In place, a settle and the next deal make what they make of a copy, change the
    state given rather than a copy, and leave the finished deal's record as it was."""
    state, _ = declare_all(started(3), {2: "in", 3: "in", 1: "out"})
    showdown = copy.deepcopy(state)
    settled, events = guts.settle(state, ranks({"2": 9, "3": 1}), T0 + 2)
    assert state == showdown
    mine = copy.deepcopy(showdown)
    same, same_events = guts.settle(mine, ranks({"2": 9, "3": 1}), T0 + 2, True)
    assert same is mine
    assert (same, same_events) == (settled, events)
    finished = guts.finished_deal(settled)
    kept = copy.deepcopy(finished)
    dealt, events = guts.on_deadline(settled, T0 + 10, make_deck(1))
    again, again_events = guts.on_deadline(same, T0 + 10, make_deck(1), True)
    assert again is same
    assert (again, again_events) == (dealt, events)
    assert finished == kept


# --------------------------------------------------------------------------- leave


def test_leave_outside_a_hand_cashes_out_at_once() -> None:
    state = seated(2)
    state, events = guts.leave(state, 1, 0.0)
    assert types(events) == ["cashed_out", "left"]
    assert events[0]["data"] == {"seat": 1, "name": "Ann", "amount": 100}
    assert "1" not in state["seats"]


def test_leave_in_a_hand_takes_effect_when_the_deal_ends() -> None:
    state = started(3)
    state, events = guts.leave(state, 2, T0)
    assert types(events) == ["leaving"]
    assert state["seats"]["2"]["leaving"]
    assert guts.view(state, None)["seats"]["2"]["leaving"]
    state, _ = guts.declare(state, 2, "in", T0 + 1)
    state, _ = guts.declare(state, 3, "in", T0 + 1)
    state, events = guts.declare(state, 1, "out", T0 + 1)
    assert "2" in state["seats"]
    assert state["phase"] == "showdown"
    state, events = guts.settle(state, ranks({"2": 9, "3": 1}), T0 + 2)
    # Seat 2 won the pot of 3 before cashing out 99 + 3.
    cash = [e["data"] for e in events if e["type"] == "cashed_out"]
    assert cash == [{"seat": 2, "name": "Bob", "amount": 102}]
    assert "2" not in state["seats"]
    assert state["pot"] == 3


def test_leave_refuses_an_empty_seat_and_a_second_request() -> None:
    state = started(3)
    assert_refused("not_seated", guts.leave, state, 7, T0)
    assert_refused("not_seated", guts.leave, state, "1", T0)
    state, _ = guts.leave(state, 1, T0)
    assert_refused("already_left", guts.leave, state, 1, T0)


def test_leave_queues_during_a_showdown() -> None:
    state = started(3)
    state, _ = declare_all(state, {2: "in", 3: "in", 1: "in"})
    state, events = guts.leave(state, 3, T0 + 2)
    assert types(events) == ["leaving"]


def test_the_last_players_of_a_running_game_share_the_pot_when_they_leave() -> None:
    state = started(2)
    state, _ = guts.leave(state, 1, T0)
    state, _ = guts.leave(state, 2, T0)
    # Both in, 1 wins the pot of 2 and 2 pays 2: the pot of 2 is shared out, 1 chip each.
    state, _ = declare_all(state, {1: "in", 2: "in"})
    state, events = guts.settle(state, ranks({"1": 5, "2": 1}), T0 + 2)
    shares = [e["data"] for e in events if e["type"] == "pot_split"]
    assert shares == [
        {
            "shares": [{"seat": 2, "amount": 1}, {"seat": 1, "amount": 1}],
            "reason": "abandoned",
            "pot": 0,
        }
    ]
    cash = {e["data"]["seat"]: e["data"]["amount"] for e in events if e["type"] == "cashed_out"}
    assert cash == {1: 102, 2: 98}
    assert deal_of(state)["flow"][-2:] == [
        {"kind": "share", "seat": 2, "amount": 1, "source": "pot", "target": "seat"},
        {"kind": "share", "seat": 1, "amount": 1, "source": "pot", "target": "seat"},
    ]
    assert state["seats"] == {}
    assert state["pot"] == 0
    assert not state["game_in_progress"]


def test_the_last_player_leaving_between_deals_takes_the_pot() -> None:
    state = started(2)
    state, _ = declare_all(state, {1: "out", 2: "out"})
    assert state["phase"] == "between_deals"
    assert state["pot"] == 2
    state, _ = guts.leave(state, 1, T0 + 2)
    state, events = guts.leave(state, 2, T0 + 2)
    assert types(events) == ["pot_split", "game_ended", "cashed_out", "left"]
    assert events[2]["type"] == "cashed_out"
    assert events[2]["data"]["amount"] == 101
    assert guts.chips_on_table(state) == 0


# --------------------------------------------------------------------------- rebuy


def test_rebuy_adds_chips_within_the_limits() -> None:
    state = seated(2)
    state, events = guts.rebuy(state, 1, 400, 0.0)
    assert events[0]["data"] == {"seat": 1, "amount": 400, "stack": 500}
    assert state["chips_bought"] == 600


def test_rebuy_error_codes() -> None:
    assert_refused("rebuy_not_allowed", guts.rebuy, seated(2, rebuy=False), 1, 10, 0.0)
    state = started(3)
    assert_refused("not_seated", guts.rebuy, state, 9, 10, T0)
    assert_refused("game_in_progress", guts.rebuy, state, 1, 10, T0)
    state, _ = guts.sit(state, "Late", 100, T0)
    assert_refused("invalid_buy_in", guts.rebuy, state, 4, 0, T0)
    assert_refused("invalid_buy_in", guts.rebuy, state, 4, 401, T0)
    assert_refused("invalid_buy_in", guts.rebuy, state, 4, 2.5, T0)
    state, _ = guts.rebuy(state, 4, 400, T0)
    state, _ = guts.leave(state, 2, T0)
    assert_refused("already_left", guts.rebuy, state, 2, 10, T0)
    state, _ = declare_all(state, {2: "in", 3: "in", 1: "out"})
    assert_refused("showdown_pending", guts.rebuy, state, 4, 0, T0)


def test_rebuy_must_reach_the_minimum_buy_in() -> None:
    state = seated(2)
    state, _ = guts.sit(state, "Low", 20, 0.0)
    state = copy.deepcopy(state)
    state["seats"]["3"]["stack"] = 5
    assert_refused("invalid_buy_in", guts.rebuy, state, 3, 10, 0.0)
    state, _ = guts.rebuy(state, 3, 15, 0.0)
    assert state["seats"]["3"]["stack"] == 20


# --------------------------------------------------------------------------- start


def test_start_deals_the_first_hand() -> None:
    state, events = guts.start(seated(3), 2, T0, make_deck())
    assert types(events) == [
        "game_started",
        "deal_started",
        "ante",
        "ante",
        "ante",
        "cards_dealt",
        "cards_dealt",
        "cards_dealt",
        "dealt",
        "phase",
    ]
    assert events[1]["data"] == {
        "hand_number": 1,
        "game_number": 1,
        "dealer": 1,
        "commitment": commitment(make_deck()),
        "players": [2, 3, 1],
        "cards": 3,
        "ghost": False,
    }
    assert state["phase"] == "declaring"
    assert state["deadline"] == T0 + 30
    assert state["pot"] == 3
    assert state["dealer"] == 1
    assert all(seat["status"] == "playing" for seat in state["seats"].values())
    deck = make_deck().cards
    # One card at a time from the dealer's left: seat 2 gets cards 0, 3, 6.
    assert deal_of(state)["hands"]["2"] == [deck[0], deck[3], deck[6]]
    assert deal_of(state)["hands"]["1"] == [deck[2], deck[5], deck[8]]


def test_start_error_codes() -> None:
    deck = make_deck()
    assert_refused("not_seated", guts.start, seated(2), 3, T0, deck)
    assert_refused("not_enough_players", guts.start, seated(1), 1, T0, deck)
    assert_refused("not_enough_players", guts.start, seated(2, min_players=3), 1, T0, deck)
    state = started(2)
    assert_refused("already_started", guts.start, state, 1, T0, deck)
    state, _ = declare_all(state, {1: "in", 2: "in"})
    assert_refused("showdown_pending", guts.start, state, 1, T0, deck)


def test_two_card_guts_deals_two_cards_and_a_ghost_hand() -> None:
    state = started(3, cards=2, ghost=True)
    hands = deal_of(state)["hands"]
    assert sorted(hands) == ["1", "2", "3", "ghost"]
    assert all(len(cards) == 2 for cards in hands.values())
    # The ghost gets its card after the dealer in each round.
    assert hands["ghost"] == [make_deck().cards[3], make_deck().cards[7]]


# --------------------------------------------------------------------------- declare


def test_simultaneous_declarations_stay_hidden_until_all_are_in() -> None:
    state = started(3)
    state, events = guts.declare(state, 2, "in", T0 + 1)
    assert events == [
        {"type": "declared", "data": {"seat": 2}, "visible_to": None},
        {"type": "your_declaration", "data": {"seat": 2, "choice": "in"}, "visible_to": [2]},
    ]
    assert guts_deal(guts.view(state, 3))["declarations"] == {}
    assert guts_deal(guts.view(state, 3))["declared"] == [2]
    assert guts_you(guts.view(state, 2))["declaration"] == "in"
    assert guts_you(guts.view(state, 3))["declaration"] is None
    assert pending_of(guts.view(state, None))["seats"] == [3, 1]
    state, _ = guts.declare(state, 3, "out", T0 + 1)
    state, events = guts.declare(state, 1, "out", T0 + 1)
    assert events[2] == {
        "type": "declarations_revealed",
        "data": {"choices": {"2": "in", "3": "out", "1": "out"}},
        "visible_to": None,
    }
    assert guts_deal(guts.view(state, None))["declarations"] == {"2": "in", "3": "out", "1": "out"}


def test_declare_error_codes() -> None:
    state = seated(3)
    assert_refused("no_hand_in_progress", guts.declare, state, 1, "in", T0)
    state = started(3)
    assert_refused("not_seated", guts.declare, state, 5, "in", T0)
    assert_refused("invalid_choice", guts.declare, state, 1, "maybe", T0)
    assert_refused("invalid_choice", guts.declare, state, 1, None, T0)
    assert_refused("too_late", guts.declare, state, 1, "in", T0 + 30)
    state, _ = guts.sit(state, "Late", 100, T0)
    assert_refused("not_your_turn", guts.declare, state, 4, "in", T0)
    state, _ = guts.declare(state, 1, "in", T0)
    assert_refused("already_declared", guts.declare, state, 1, "out", T0)
    state, _ = guts.declare(state, 2, "in", T0)
    state, _ = guts.declare(state, 3, "out", T0)
    assert_refused("showdown_pending", guts.declare, state, 3, "in", T0)
    state, _ = guts.settle(state, ranks({"1": 2, "2": 1}), T0)
    assert_refused("no_hand_in_progress", guts.declare, state, 1, "in", T0)


def test_sequential_declaring_goes_round_from_the_dealers_left() -> None:
    state = started(3, declare="sequential")
    assert deal_of(state)["turn"] == 2
    assert state["deadline"] == T0 + 30
    assert_refused("not_your_turn", guts.declare, state, 3, "in", T0 + 1)
    state, events = guts.declare(state, 2, "in", T0 + 5)
    assert events == [
        {"type": "declared", "data": {"seat": 2, "choice": "in"}, "visible_to": None},
        {"type": "turn", "data": {"seat": 3, "deadline": T0 + 35}, "visible_to": None},
    ]
    assert guts_deal(guts.view(state, 1))["declarations"] == {"2": "in"}
    assert guts.view(state, 1)["pending"] == {
        "action": "declare",
        "seats": [3],
        "deadline": T0 + 35,
    }
    # Seat 3 misses its turn: it is out and seat 1 gets a full turn from then.
    state, events = guts.on_deadline(state, T0 + 40, make_deck(5))
    assert events[0] == {
        "type": "timeout",
        "data": {"seat": 3, "result": "out"},
        "visible_to": None,
    }
    assert deal_of(state)["turn"] == 1
    assert state["deadline"] == T0 + 70
    state, events = guts.declare(state, 1, "out", T0 + 41)
    assert "declarations_revealed" in types(events)
    # Only seat 2 in: it wins the pot of 3 without showing.
    assert state["seats"]["2"]["stack"] == 102
    assert state["pot"] == 0


def test_late_is_out_in_simultaneous_mode() -> None:
    state = started(3)
    state, _ = guts.declare(state, 1, "in", T0 + 1)
    same, events = guts.on_deadline(state, T0 + 29.9, make_deck(4))
    assert same == state
    assert events == []
    state, events = guts.on_deadline(state, T0 + 30, make_deck(4))
    assert types(events)[:3] == ["timeout", "timeout", "declarations_revealed"]
    assert deal_of(state)["timeouts"] == [2, 3]
    assert deal_of(state)["declarations"] == {"1": "in", "2": "out", "3": "out"}
    assert state["seats"]["1"]["stack"] == 102


def test_on_deadline_needs_a_deck_to_start_the_next_deal() -> None:
    state = started(2)
    state, _ = declare_all(state, {1: "out", 2: "out"})
    assert state["phase"] == "between_deals"
    assert guts.next_deadline(state) == T0 + 4
    assert_refused("invalid_deck", guts.on_deadline, state, T0 + 4, None)
    state, _events = guts.on_deadline(state, T0 + 4, make_deck(8))
    assert state["phase"] == "declaring"
    assert state["hand_number"] == 2
    assert deal_of(state)["commitment"] == commitment(make_deck(8))


def test_on_deadline_without_a_deadline_does_nothing() -> None:
    state = seated(2)
    assert guts.on_deadline(state, 10**9, None) == (state, [])
    showdown = started(2)
    showdown, _ = declare_all(showdown, {1: "in", 2: "in"})
    assert guts.next_deadline(showdown) is None
    assert guts.on_deadline(showdown, 10**9, make_deck()) == (showdown, [])


# --------------------------------------------------------------------------- showdown


def test_ranking_request_names_only_the_hands_needed() -> None:
    state = started(3, ghost=True)
    assert guts.ranking_request(state) is None
    state, _ = declare_all(state, {2: "in", 3: "out", 1: "in"})
    hands = deal_of(state)["hands"]
    assert guts.ranking_request(state) == {
        "2": hands["2"],
        "1": hands["1"],
        "ghost": hands["ghost"],
    }


def test_settle_error_codes() -> None:
    state = started(3)
    assert_refused("not_in_showdown", guts.settle, state, {}, T0)
    state, _ = declare_all(state, {2: "in", 3: "in", 1: "out"})
    assert_refused("invalid_ranking", guts.settle, state, ranks({"2": 1}), T0)
    assert_refused("invalid_ranking", guts.settle, state, {"2": Ranked(1, "", ""), "3": 7}, T0)
    bad = {"2": Ranked(1, "", ""), "3": Ranked(True, "", "")}
    assert_refused("invalid_ranking", guts.settle, state, bad, T0)


def test_settle_shows_only_the_in_hands() -> None:
    state = started(3)
    state, _ = declare_all(state, {2: "in", 3: "in", 1: "out"})
    state, events = guts.settle(state, ranks({"2": 4, "3": 2, "ghost": 9}), T0 + 2)
    assert events[0]["type"] == "showdown"
    shown = events[0]["data"]["hands"]
    assert sorted(shown) == ["2", "3"]
    assert shown["2"] == {
        "cards": deal_of(state)["hands"]["2"],
        "strength": 4,
        "category": "test",
        "description": "strength 4",
    }
    public = guts_deal(guts.view(state, None))
    assert sorted(public["shown"]) == ["2", "3"]
    assert sorted(public["ranks"]) == ["2", "3"]


def test_showdown_blocks_other_moves_and_stays_until_settled() -> None:
    state = started(3)
    state, _ = declare_all(state, {2: "in", 3: "in", 1: "out"})
    assert state["phase"] == "showdown"
    assert guts.view(state, None)["pending"] == {
        "action": "rank_hands",
        "seats": [],
        "deadline": None,
    }
    assert_refused("showdown_pending", guts.rebuy, state, 1, 10, T0 + 2)
    state, _ = guts.sit(state, "Late", 100, T0 + 2)
    state, events = guts.leave(state, 4, T0 + 2)
    assert types(events) == ["cashed_out", "left"]  # seat 4 was not dealt in
    # Seat 1 declared out, but a dealt-in seat still leaves only when the deal ends, so that
    # leaving never gives away a declaration (and the wimp rule may still need its hand).
    state, events = guts.leave(state, 1, T0 + 2)
    assert types(events) == ["leaving"]
    state, events = guts.settle(state, ranks({"2": 3, "3": 1}), T0 + 3)
    assert "1" not in state["seats"]
    assert state["phase"] == "between_deals"


# --------------------------------------------------------------------------- rotation


def test_the_dealer_moves_one_seat_left_each_deal_skipping_empty_seats() -> None:
    state = started(4)
    dealers = [state["dealer"]]
    state, _ = guts.leave(state, 3, T0)  # leaves when this deal ends
    for deal in range(1, 5):
        state, _ = declare_all(state, dict.fromkeys(deal_of(state)["players"], "out"))
        state, _ = guts.on_deadline(state, T0 + 10 * deal, make_deck(deal))
        dealers.append(state["dealer"])
    assert dealers == [1, 2, 4, 1, 2]
    assert deal_of(state)["players"] == [4, 1, 2]


def test_a_seat_out_of_chips_is_not_dealt_in_and_leaves_at_game_end() -> None:
    state = seated(2, min_buy_in=1)
    state, _ = guts.sit(state, "Poor", 1, 0.0)
    state, _ = guts.start(state, 1, T0, make_deck())
    assert state["seats"]["3"]["stack"] == 0
    assert 3 in deal_of(state)["players"]
    # Seat 3 paid its last chip as ante and still plays: out, the pot carries.
    state, _ = declare_all(state, {2: "out", 3: "out", 1: "out"})
    state, _ = guts.on_deadline(state, T0 + 10, make_deck(1))
    assert deal_of(state)["players"] == [1, 2]
    assert guts.view(state, 2)["seats"]["3"]["out_of_chips"]
    state, events = declare_all(state, {1: "in", 2: "out"})
    assert [e["data"] for e in events if e["type"] == "left"] == [
        {"seat": 3, "name": "Poor", "reason": "out_of_chips"}
    ]


def test_too_few_funded_players_abandon_the_game_and_the_table_waits() -> None:
    state = started(2)
    state, _ = declare_all(state, {1: "out", 2: "out"})
    state, _ = guts.leave(state, 2, T0 + 2)
    state, events = guts.on_deadline(state, T0 + 10, make_deck(1))
    assert types(events) == ["pot_split", "game_ended", "phase"]
    assert events[0]["type"] == "pot_split"
    assert events[1]["type"] == "game_ended"
    assert events[0]["data"]["shares"] == [{"seat": 1, "amount": 2}]
    assert events[1]["data"]["reason"] == "not_enough_players"
    assert state["phase"] == "waiting"
    assert state["pot"] == 0
    assert state["seats"]["1"] == {**state["seats"]["1"], "status": "waiting", "stack": 101}


def test_an_abandoned_pot_goes_to_the_seats_with_chips_and_the_broke_leave() -> None:
    """docs/rules.md, A deal, 7: a player out of chips leaves at the end of the game."""
    state = guts.new_table({"min_buy_in": 1, "rebuy": False}, "t1", 0.0)
    state, _ = guts.sit(state, "Ann", 100, 0.0)
    state, _ = guts.sit(state, "Bob", 2, 0.0)
    state, _ = guts.start(state, 1, T0, make_deck())
    # antes: pot 2 (Ann 99, Bob 1); both in, Ann best: she takes 2, Bob pays his last 1
    state, _ = declare_all(state, {1: "in", 2: "in"})
    state, _ = guts.settle(state, ranks({"1": 9, "2": 1}), T0 + 2)
    assert (state["seats"]["1"]["stack"], state["seats"]["2"]["stack"], state["pot"]) == (
        101,
        0,
        1,
    )
    # the next deal cannot start with one seat holding chips: the pot goes to Ann only
    state, events = guts.on_deadline(state, T0 + 10, make_deck(1))
    assert types(events)[:3] == ["pot_split", "game_ended", "cashed_out"]
    assert events[0]["type"] == "pot_split"
    assert events[0]["data"]["shares"] == [{"seat": 1, "amount": 1}]
    assert [e["data"] for e in events if e["type"] == "left"] == [
        {"seat": 2, "name": "Bob", "reason": "out_of_chips"}
    ]
    assert state["seats"]["1"]["stack"] == 102
    assert "2" not in state["seats"]
    assert state["phase"] == "waiting"


# --------------------------------------------------------------------------- views


def test_views_never_show_another_seats_cards() -> None:
    state = started(3)
    hands = deal_of(state)["hands"]
    spectator = json.dumps(guts.view(state, None))
    assert guts.view(state, None)["you"] is None
    mine = guts.view(state, 2)
    assert guts_you(mine)["cards"] == hands["2"]
    for key, cards in hands.items():
        for card in cards:
            assert f'"{card}"' not in spectator
            if key != "2":
                assert f'"{card}"' not in json.dumps(mine)
    assert '"deck"' not in spectator
    assert '"salt"' not in spectator


def test_a_new_player_in_a_reused_seat_does_not_see_the_old_cards() -> None:
    state = started(3)
    state, _ = guts.leave(state, 3, T0)
    state, _ = declare_all(state, {2: "out", 3: "out", 1: "out"})
    state, _ = guts.sit(state, "New", 100, T0 + 2)
    assert state["seats"]["3"]["name"] == "New"
    assert guts.view(state, 3)["you"] == {"seat": 3, "cards": None, "declaration": None}


def test_the_view_shows_the_public_table() -> None:
    state = started(3, ghost=True, cap=10, cap_mode="reserve")
    public = guts.view(state, None)
    assert public["phase"] == "declaring"
    assert public["deadline"] == T0 + 30
    assert public["pot"] == 3
    assert public["reserve"] == 0
    assert public["dealer"] == 1
    assert guts_deal(public)["commitment"] == commitment(make_deck())
    assert public["seats"]["1"] == {
        "seat": 1,
        "name": "Ann",
        "stack": 99,
        "status": "playing",
        "leaving": False,
        "away": False,
        "out_of_chips": False,
        "in_hand": True,
    }
    assert json.loads(json.dumps(public)) == public


def test_finished_deal_reveals_the_deck_only_after_the_deal() -> None:
    state = started(2)
    assert guts.finished_deal(state) is None
    state, _ = declare_all(state, {1: "out", 2: "out"})
    record = guts.finished_deal(state)
    assert record is not None
    deck = Deck(tuple(record["deck"]), record["salt"])
    assert commitment(deck) == record["commitment"]
    assert record["outcome"] == "nobody_in"


def _cards(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set().union(*(_cards(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_cards(v) for v in value)) if value else set()
    return {value} if isinstance(value, str) and value in FULL_DECK else set()


@pytest.mark.parametrize(
    "options",
    [{}, {"declare": "sequential"}, {"ghost": True}, {"wimp": True}, {"cards": 2, "ghost": True}],
)
def test_no_event_shows_another_seats_cards_before_the_showdown(options: dict[str, Any]) -> None:
    rng = random.Random(7)
    state = seated(5, **options)
    state, events = guts.start(state, 1, T0, make_deck())
    log = list(events)
    for deal in range(12):
        for seat in list(deal_of(state)["players"]):
            state, events = guts.declare(state, seat, rng.choice(["in", "out"]), T0 + 1)
            log += events
        if state["phase"] == "showdown":
            request = guts.ranking_request(state) or {}
            state, events = guts.settle(state, ranks({k: rng.randint(0, 2) for k in request}), T0)
            log += events
        shown = deal_of(state)["shown"]
        hands = deal_of(state)["hands"]
        wimp = deal_of(state)["showdown_reason"] == "wimp"
        for entry in log:
            seen = _cards(entry["data"])
            if entry["type"] == "showdown":
                assert seen == _cards(shown)
                ins = {k for k, c in deal_of(state)["declarations"].items() if c == "in"}
                assert wimp or set(shown) <= ins | {"ghost"}
            elif entry["visible_to"] is None:
                assert not seen, entry
            else:
                assert seen <= set(hands[str(entry["visible_to"][0])]), entry
        state, log = guts.on_deadline(state, T0 + 100 * (deal + 1), make_deck(deal + 1))
