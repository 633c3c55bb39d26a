"""The table mechanics both games share (`api.games.table`), checked on their own.

The games' rule and chip-property tests run these through every move; here each one is
pinned by a small worked example, so a change to one shows where it went wrong.
"""

from __future__ import annotations

from itertools import permutations
from typing import Any

import pytest

from api.games import guts, paiute, table
from api.games.common import RuleError
from api.games.events import Event
from api.games.state import TableState
from tests.support.games import make_deck


def seated(game: Any = guts, stacks: tuple[int, ...] = (100, 100, 100)) -> TableState:
    state: TableState = game.new_table({}, "t1", 0.0)
    for number, stack in enumerate(stacks):
        state, _ = game.sit(state, f"p{number + 1}", stack, 0.0)
    return state


def chips(state: TableState) -> int:
    total: int = sum(seat["stack"] for seat in state["seats"].values()) + state["pot"]
    return total


@pytest.mark.parametrize(
    ("amount", "ways", "shares"),
    [(0, 3, [0, 0, 0]), (7, 1, [7]), (7, 3, [3, 2, 2]), (8, 3, [3, 3, 2]), (9, 3, [3, 3, 3])],
)
def test_split_evenly_gives_the_odd_chips_to_the_first_shares(
    amount: int, ways: int, shares: list[int]
) -> None:
    assert table.split_evenly(amount, ways) == shares


def test_split_evenly_keeps_every_chip_and_differs_by_at_most_one() -> None:
    for amount in range(60):
        for ways in range(1, 8):
            shares = table.split_evenly(amount, ways)
            assert sum(shares) == amount
            assert shares == sorted(shares, reverse=True)
            assert shares[0] - shares[-1] <= 1


def test_from_left_of_starts_after_the_dealer_and_wraps() -> None:
    assert table.from_left_of(None, [5, 1, 3]) == [1, 3, 5]
    assert table.from_left_of(1, [5, 1, 3]) == [3, 5, 1]
    assert table.from_left_of(3, [5, 1, 3]) == [5, 1, 3]
    assert table.from_left_of(5, [5, 1, 3]) == [1, 3, 5]
    assert table.from_left_of(2, [5, 1, 3]) == [3, 5, 1]  # an empty dealer seat
    for order in permutations([1, 2, 4]):
        assert table.from_left_of(2, order) == [4, 1, 2]


def test_seat_numbers_filters_by_status_and_chips() -> None:
    state = seated(stacks=(100, 50, 30))
    state["seats"]["2"]["status"] = "playing"
    state["seats"]["3"]["status"] = "playing"
    state["seats"]["3"]["stack"] = 0
    assert table.seat_numbers(state) == [1, 2, 3]
    assert table.seat_numbers(state, "playing") == [2, 3]
    assert table.seat_numbers(state, "playing", funded=True) == [2]
    assert table.seat_numbers(state, funded=True) == [1, 2]


@pytest.mark.parametrize("seat", [4, 0, -1, "1", 1.0, True, None])
def test_verify_seated_refuses_what_is_not_an_occupied_seat(seat: Any) -> None:
    state = seated()
    with pytest.raises(RuleError) as refused:
        table.verify_seated(state, seat)
    assert (refused.value.code, refused.value.field) == ("not_seated", "seat")


def test_verify_seated_returns_the_seat_record() -> None:
    state = seated()
    assert table.verify_seated(state, 2) is state["seats"]["2"]
    assert table.is_seat_number(2)
    assert not table.is_seat_number(True)


def test_share_pot_pays_in_order_and_reports_the_shares() -> None:
    state = seated()
    state["pot"] = 8
    before = chips(state)
    events: list[Event] = []
    table.share_pot(state, [3, 1, 2], "abandoned", events)
    assert [state["seats"][s]["stack"] for s in "123"] == [103, 102, 103]
    assert state["pot"] == 0
    assert chips(state) == before
    assert events == [
        {
            "type": "pot_split",
            "data": {
                "shares": [
                    {"seat": 3, "amount": 3},
                    {"seat": 1, "amount": 3},
                    {"seat": 2, "amount": 2},
                ],
                "reason": "abandoned",
                "pot": 0,
            },
            "visible_to": None,
        }
    ]


def test_record_flow_notes_chips_moving_only_during_an_open_deal() -> None:
    state = guts.start(guts.GAME.own(seated()), 1, 10.0, make_deck())[0]
    flow = table.deal_of(state)["flow"]
    noted = len(flow)
    table.pay_out(state, 1, 0, "share")  # nothing moved, nothing noted
    table.record_flow(state, "test", 2, 5, "seat", "pot")
    assert flow[noted:] == [
        {"kind": "test", "seat": 2, "amount": 5, "source": "seat", "target": "pot"}
    ]
    table.deal_of(state)["ended"] = True
    table.record_flow(state, "test", 2, 5, "seat", "pot")
    assert len(flow) == noted + 1


@pytest.mark.parametrize("game", [guts, paiute])
def test_the_last_player_leaving_takes_the_pot_along(game: Any) -> None:
    state = seated(game, (100, 100))
    for record in state["seats"].values():
        record["status"] = "playing"
    state["game_in_progress"] = True
    state["pot"] = 10
    state["seats"]["1"]["stack"] -= 10
    events: list[Event] = []
    table.remove_seat(state, 2, "left", events)
    assert state["pot"] == 10
    assert state["game_in_progress"]
    table.remove_seat(state, 1, "left", events)
    assert state["pot"] == 0
    assert not state["game_in_progress"]
    assert state["seats"] == {}
    assert state["chips_cashed"] == 200
    assert [e["type"] for e in events] == [
        "cashed_out",
        "left",
        "pot_split",
        "game_ended",
        "cashed_out",
        "left",
    ]


def test_remove_broke_cashes_out_only_playing_seats_without_chips() -> None:
    state = seated(stacks=(100, 100, 100))
    for number in ("1", "2"):
        state["seats"][number]["status"] = "playing"
        state["seats"][number]["stack"] = 0
    state["seats"]["3"]["stack"] = 0  # waiting, not playing: stays
    events: list[Event] = []
    table.remove_broke(state, events)
    assert sorted(state["seats"]) == ["3"]
    assert [e["data"]["reason"] for e in events if e["type"] == "left"] == [
        "out_of_chips",
        "out_of_chips",
    ]


def test_set_phase_records_the_phase_and_its_deadline() -> None:
    state = seated()
    events: list[Event] = []
    table.set_phase(state, table.BETWEEN_DEALS, 12.5, events)
    assert (state["phase"], state["deadline"]) == ("between_deals", 12.5)
    assert events == [
        {"type": "phase", "data": {"phase": "between_deals", "deadline": 12.5}, "visible_to": None}
    ]
