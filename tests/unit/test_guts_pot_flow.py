"""Pot flow of every Guts option, checked against examples worked by hand.

Seats are named by number. With four players the first dealer is seat 1, so the first
deal goes round 2, 3, 4, 1 and the dealer then moves one seat left each deal. Every
example starts with 100 chips a seat and checks that no chip is created or lost.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from api.games import guts
from api.games.common import Ranked
from api.games.events import Event
from api.games.state import GutsTable
from api.games.table import deal_of
from tests.support.events import data_of
from tests.support.games import deadline_of, make_deck

NAMES = ["Ann", "Bob", "Cy", "Dee", "Eve"]
T0 = 1000.0


def started(players: int, stack: int = 100, **options: Any) -> GutsTable:
    state = guts.new_table(options, "t1", 0.0)
    for name in NAMES[:players]:
        state, _ = guts.sit(state, name, stack, 0.0)
    state, _ = guts.start(state, 1, T0, make_deck())
    return state


def play(
    state: GutsTable, ins: list[int], strengths: Mapping[str, int] | None = None
) -> tuple[GutsTable, list[Event]]:
    """Declare `ins` in and everyone else out, then settle any showdown with `strengths`."""
    events: list[Event] = []
    now = deadline_of(state) - 1
    for seat in deal_of(state)["players"]:
        state, new = guts.declare(state, seat, "in" if seat in ins else "out", now)
        events += new
    if state["phase"] == "showdown":
        assert strengths is not None
        assert set(guts.ranking_request(state) or {}) <= set(strengths)
        ranked = {key: Ranked(value, "test", "") for key, value in strengths.items()}
        state, new = guts.settle(state, ranked, now)
        events += new
    assert state["phase"] == "between_deals"
    return state, events


def next_deal(state: GutsTable) -> tuple[GutsTable, list[Event]]:
    deadline = guts.next_deadline(state)
    assert deadline is not None
    return guts.on_deadline(state, deadline, make_deck(state["hand_number"] + 1))


def stacks(state: GutsTable) -> dict[int, int]:
    return {int(key): seat["stack"] for key, seat in state["seats"].items()}


def conserved(state: GutsTable) -> bool:
    return guts.chips_on_table(state) == int(state["chips_bought"]) - int(state["chips_cashed"])


def test_monte_carlo_default() -> None:
    # 4 players, ante 1: every seat antes, pot 4, stacks 99.
    state = started(4)
    assert state["pot"] == 4
    assert stacks(state) == {1: 99, 2: 99, 3: 99, 4: 99}
    # 2 and 3 in, 2 best: 2 takes 4 (103); 3 pays the pot as it stood, 4 (95) -> pot 4.
    state, events = play(state, [2, 3], {"2": 9, "3": 1})
    assert data_of(events, "pot_won") == [{"seat": 2, "amount": 4, "pot": 0}]
    assert data_of(events, "paid") == [
        {"seat": 3, "owed": 4, "amount": 4, "to_pot": 4, "to_reserve": 0, "stack": 95}
    ]
    assert state["pot"] == 4
    assert stacks(state) == {1: 99, 2: 103, 3: 95, 4: 99}
    # Deal 2 (dealer 2): the pot is not empty, so nobody antes.
    state, events = next_deal(state)
    assert data_of(events, "ante") == []
    assert state["pot"] == 4
    assert state["dealer"] == 2
    # 1, 3 and 4 in, 4 best: 4 takes 4 (103); 1 and 3 pay 4 each (95, 91) -> pot 8.
    state, _ = play(state, [1, 3, 4], {"1": 5, "3": 2, "4": 8})
    assert state["pot"] == 8
    assert stacks(state) == {1: 95, 2: 103, 3: 91, 4: 103}
    # Deal 3: only 1 in: 1 takes 8 without showing (103); the pot is empty, game 1 ends.
    state, _ = next_deal(state)
    state, events = play(state, [1])
    assert data_of(events, "showdown") == []
    assert data_of(events, "game_ended") == [{"game_number": 1, "reason": "won"}]
    assert state["pot"] == 0
    assert stacks(state) == {1: 103, 2: 103, 3: 91, 4: 103}
    # Deal 4 starts game 2: everyone antes again -> pot 4.
    state, events = next_deal(state)
    assert data_of(events, "game_started") == [{"game_number": 2, "players": [1, 2, 3, 4]}]
    assert state["pot"] == 4
    assert stacks(state) == {1: 102, 2: 102, 3: 90, 4: 102}
    assert conserved(state)


def test_survivor_only_the_worst_pays() -> None:
    # 4 players, ante 1, losers_pay worst: pot 4, stacks 99.
    state = started(4, losers_pay="worst")
    # 1, 2, 3 in; 1 best, 3 worst: 1 takes 4 (103); only 3 pays 4 (95); 2 pays nothing.
    state, _ = play(state, [1, 2, 3], {"1": 9, "2": 5, "3": 1})
    assert state["pot"] == 4
    assert stacks(state) == {1: 103, 2: 99, 3: 95, 4: 99}
    # Next deal: 1, 2, 3 in; 3 best, 1 and 2 tie for worst: 3 takes 4 (99); 1 and 2 both
    # pay 4 (99, 95) -> pot 8.
    state, _ = next_deal(state)
    state, events = play(state, [1, 2, 3], {"1": 1, "2": 1, "3": 9})
    assert [p["seat"] for p in data_of(events, "paid")] == [1, 2]
    assert state["pot"] == 8
    assert stacks(state) == {1: 99, 2: 95, 3: 99, 4: 99}
    assert conserved(state)


def test_tied_winners_split_with_the_odd_chip_to_the_dealers_left() -> None:
    # 3 players, ante 1: pot 3; dealer 1, so seat 2 is first to the dealer's left.
    state = started(3)
    # 1 and 2 tie for best and 3 loses: 3 is split 2 to seat 2 and 1 to seat 1; the
    # tied winners pay nothing and 3 pays 3 -> pot 3.
    state, events = play(state, [1, 2, 3], {"1": 7, "2": 7, "3": 2})
    assert data_of(events, "pot_split") == [
        {"shares": [{"seat": 2, "amount": 2}, {"seat": 1, "amount": 1}], "reason": "tie", "pot": 0}
    ]
    assert state["pot"] == 3
    assert stacks(state) == {1: 100, 2: 101, 3: 96}
    assert conserved(state)


def test_when_every_in_player_ties_the_pot_is_shared_and_the_game_ends() -> None:
    # 3 players, ante 1: pot 3. All three in with equal hands: 1 chip each, no loser.
    state = started(3)
    state, events = play(state, [1, 2, 3], {"1": 4, "2": 4, "3": 4})
    assert data_of(events, "paid") == []
    assert data_of(events, "game_ended") == [{"game_number": 1, "reason": "won"}]
    assert state["pot"] == 0
    assert stacks(state) == {1: 100, 2: 100, 3: 100}
    # The next deal starts game 2: everyone antes.
    state, _ = next_deal(state)
    assert state["game_number"] == 2
    assert state["pot"] == 3


def test_nobody_in_with_all_out_ante() -> None:
    # 3 players, ante 2: pot 6, stacks 98.
    state = started(3, ante=2)
    # Nobody in: the pot stays at 6 and every player antes again at the next deal: 12.
    state, events = play(state, [])
    assert data_of(events, "pot_carried") == [{"pot": 6, "reason": "nobody_in"}]
    state, _ = next_deal(state)
    assert state["pot"] == 12
    assert stacks(state) == {1: 96, 2: 96, 3: 96}
    # Someone in this time: 1 wins 12 (108), 2 pays 12 (84) -> pot 12, no ante next deal.
    state, _ = play(state, [1, 2], {"1": 3, "2": 1})
    state, _ = next_deal(state)
    assert state["pot"] == 12
    assert stacks(state) == {1: 108, 2: 84, 3: 96}
    assert conserved(state)


def test_nobody_in_without_all_out_ante() -> None:
    # 3 players, ante 2, all_out_ante false: pot 6; nobody in; the pot stays 6, no antes.
    state = started(3, ante=2, all_out_ante=False)
    state, _ = play(state, [])
    state, events = next_deal(state)
    assert data_of(events, "ante") == []
    assert state["pot"] == 6
    assert stacks(state) == {1: 98, 2: 98, 3: 98}


def test_wimp_the_best_hand_pays_an_ante_for_each_other_player() -> None:
    # 4 players, ante 1, wimp (overrides all_out_ante): pot 4, stacks 99.
    state = started(4, wimp=True)
    # Nobody in: all four hands are ranked and shown; 3 holds the best and pays one ante
    # on behalf of each of the 3 others: 3 chips (96) -> pot 7.
    state, events = play(state, [], {"1": 2, "2": 5, "3": 8, "4": 1})
    shown = data_of(events, "showdown")
    assert shown[0]["reason"] == "wimp"
    assert sorted(shown[0]["hands"]) == ["1", "2", "3", "4"]
    assert data_of(events, "wimp_paid") == [
        {"seat": 3, "owed": 3, "amount": 3, "to_pot": 3, "to_reserve": 0, "stack": 96}
    ]
    assert state["pot"] == 7
    # Nobody else antes at the next deal.
    state, events = next_deal(state)
    assert data_of(events, "ante") == []
    assert state["pot"] == 7
    assert stacks(state) == {1: 99, 2: 99, 3: 96, 4: 99}
    assert conserved(state)


def test_wimp_tie_for_best_the_first_from_the_dealers_left_pays() -> None:
    # 3 players, ante 2, wimp: pot 6. Nobody in; 1 and 3 tie for best; from the dealer's
    # left the order is 2, 3, 1, so 3 pays 2 antes: 4 chips -> pot 10.
    state = started(3, ante=2, wimp=True)
    state, events = play(state, [], {"1": 6, "2": 1, "3": 6})
    assert data_of(events, "wimp_paid")[0]["seat"] == 3
    assert state["pot"] == 10
    assert stacks(state) == {1: 98, 2: 98, 3: 94}


def test_every_deal_ante_with_one_skipped_ante_after_matching_the_pot() -> None:
    # 3 players, ante 1, ante_mode every_deal: pot 3, stacks 99. Order 2, 3, 1.
    state = started(3, ante_mode="every_deal")
    # 2 and 3 in, 2 best: 2 takes 3 (102); 3 pays 3 (96) -> pot 3.
    state, _ = play(state, [2, 3], {"2": 9, "3": 1})
    # Deal 2: 1 and 2 ante (98, 101); 3 matched the pot, so it skips this ante -> pot 5.
    state, events = next_deal(state)
    assert data_of(events, "ante_skipped") == [{"seat": 3}]
    assert state["pot"] == 5
    assert stacks(state) == {1: 98, 2: 101, 3: 96}
    # Nobody in: pot stays 5. Deal 3: everyone antes again, 3 included -> pot 8.
    state, _ = play(state, [])
    state, _ = next_deal(state)
    assert state["pot"] == 8
    assert stacks(state) == {1: 97, 2: 100, 3: 95}
    assert conserved(state)


def test_ghost_lone_player_must_beat_the_ghost() -> None:
    # 3 players, ante 1, ghost: pot 3, stacks 99.
    state = started(3, ghost=True)
    # Only 2 in, but the ghost (7) beats it (5): nobody collects, 2 pays the pot 3 (96)
    # -> pot 6; both hands are shown.
    state, events = play(state, [2], {"2": 5, "ghost": 7})
    assert sorted(data_of(events, "showdown")[0]["hands"]) == ["2", "ghost"]
    assert data_of(events, "pot_carried") == [{"pot": 3, "reason": "ghost"}]
    assert state["pot"] == 6
    assert stacks(state) == {1: 99, 2: 96, 3: 99}
    # Only 3 in and it ties the ghost: it neither wins nor pays; the pot stays 6.
    state, _ = next_deal(state)
    state, events = play(state, [3], {"3": 4, "ghost": 4})
    assert data_of(events, "paid") == []
    assert state["pot"] == 6
    # Only 1 in and it beats the ghost: 1 takes 6 (105); the game ends.
    state, _ = next_deal(state)
    state, events = play(state, [1], {"1": 9, "ghost": 2})
    assert state["pot"] == 0
    assert stacks(state) == {1: 105, 2: 96, 3: 99}
    assert data_of(events, "game_ended")[0]["reason"] == "won"
    assert conserved(state)


def test_ghost_best_beaten_players_pay_and_ghost_ties_go_free() -> None:
    # 4 players, ante 1, ghost: pot 4. 1, 2, 3 in; the ghost (8) ties 1 and beats 2 and 3.
    # Nobody collects; 1 neither wins nor pays; 2 and 3 pay 4 each (95) -> pot 12.
    state = started(4, ghost=True)
    state, _ = play(state, [1, 2, 3], {"1": 8, "2": 5, "3": 3, "ghost": 8})
    assert state["pot"] == 12
    assert stacks(state) == {1: 99, 2: 95, 3: 95, 4: 99}


def test_ghost_best_with_survivor_only_the_worst_beaten_pays() -> None:
    # As above with losers_pay worst: only 3 (the worst) pays 4 -> pot 8.
    state = started(4, ghost=True, losers_pay="worst")
    state, _ = play(state, [1, 2, 3], {"1": 8, "2": 5, "3": 3, "ghost": 8})
    assert state["pot"] == 8
    assert stacks(state) == {1: 99, 2: 99, 3: 95, 4: 99}


def test_ghost_beaten_by_the_best_player_the_rest_lose_as_usual() -> None:
    # 4 players, ante 1, ghost: pot 4. 1, 2 in; 1 (9) beats the ghost (5) and 2 (5) who
    # only ties the ghost: 1 takes 4 (103), 2 is a loser and pays 4 (95) -> pot 4.
    state = started(4, ghost=True)
    state, _ = play(state, [1, 2], {"1": 9, "2": 5, "ghost": 5})
    assert state["pot"] == 4
    assert stacks(state) == {1: 103, 2: 95, 3: 99, 4: 99}


def test_cap_per_deal_limits_wins_and_payments() -> None:
    # 4 players, ante 1, cap 5 per deal: pot 4, stacks 99; order 2, 3, 4, 1.
    state = started(4, cap=5)
    # 1, 2, 3 in, 2 best: 2 takes 4 (103); 3 and 1 pay 4 each (95) -> pot 8.
    state, _ = play(state, [1, 2, 3], {"1": 1, "2": 9, "3": 2})
    assert state["pot"] == 8
    # Deal 2: 3 and 4 in, 4 best: 4 takes only 5 (104) and 3 pays only 5 (90): the pot
    # keeps 3 + 5 = 8 and the game goes on.
    state, _ = next_deal(state)
    state, events = play(state, [3, 4], {"3": 1, "4": 9})
    assert data_of(events, "pot_won") == [{"seat": 4, "amount": 5, "pot": 3}]
    assert data_of(events, "paid")[0] == {
        "seat": 3,
        "owed": 5,
        "amount": 5,
        "to_pot": 5,
        "to_reserve": 0,
        "stack": 90,
    }
    assert state["pot"] == 8
    assert stacks(state) == {1: 95, 2: 103, 3: 90, 4: 104}
    # Deal 3: 1 alone in takes 5 (100); the capped win leaves 3, so the game goes on and
    # nobody antes at deal 4.
    state, _ = next_deal(state)
    state, events = play(state, [1])
    assert data_of(events, "game_ended") == []
    assert state["pot"] == 3
    state, events = next_deal(state)
    assert data_of(events, "ante") == []
    assert state["game_number"] == 1
    assert conserved(state)


def test_cap_per_deal_applies_to_each_tied_winner_and_the_wimp() -> None:
    # 4 players, ante 1, cap 2, wimp: pot 4. Nobody in; 2 is best and owes 3 antes, capped
    # to 2 less the ante it paid this deal: 1 (98) -> pot 5.
    state = started(4, cap=2, wimp=True)
    state, events = play(state, [], {"1": 1, "2": 9, "3": 2, "4": 3})
    assert data_of(events, "wimp_paid")[0]["amount"] == 1
    assert state["pot"] == 5
    # Next deal (nobody antes): 3 and 4 tie: shares 3 and 2 are capped at 2 each; the
    # pot keeps 1.
    state, _ = next_deal(state)
    state, events = play(state, [3, 4], {"3": 5, "4": 5})
    assert data_of(events, "pot_split")[0]["shares"] == [
        {"seat": 3, "amount": 2},
        {"seat": 4, "amount": 2},
    ]
    assert state["pot"] == 1
    assert conserved(state)


def test_cap_per_deal_counts_the_ante_paid_in_the_deal() -> None:
    # 3 players, ante 2, cap 5: pot 6, stacks 98; order 2, 3, 1. Nobody pays more than 5
    # into the pot in one deal, the ante included.
    state = started(3, ante=2, cap=5)
    # 1, 2, 3 in, 2 best: 2 takes 5 of 6 (103, the pot keeps 1); 3 and 1 owe 6 and pay
    # 5 - 2 = 3 each (95) -> pot 7.
    state, events = play(state, [1, 2, 3], {"1": 1, "2": 9, "3": 2})
    assert [(p["seat"], p["owed"], p["amount"]) for p in data_of(events, "paid")] == [
        (3, 3, 3),
        (1, 3, 3),
    ]
    assert state["pot"] == 7
    # Deal 2: nobody antes (the pot is not empty), so a loser may pay the whole cap.
    state, events = next_deal(state)
    assert data_of(events, "ante") == []
    state, events = play(state, [3, 1], {"3": 1, "1": 9})
    assert [(p["seat"], p["owed"], p["amount"]) for p in data_of(events, "paid")] == [(3, 5, 5)]
    assert conserved(state)


def test_cap_reserve_overflow_and_reopening() -> None:
    # 4 players, ante 1, cap 5 to the reserve: pot 4, stacks 99; order 2, 3, 4, 1.
    state = started(4, cap=5, cap_mode="reserve")
    # All in, 2 best: 2 takes 4 (103). The others pay 4 in full (95) in turn: 3 puts 4
    # in the pot; 4 puts 1 in the pot (5) and 3 in the reserve; 1 puts all 4 in the
    # reserve -> pot 5, reserve 7.
    state, events = play(state, [1, 2, 3, 4], {"1": 1, "2": 9, "3": 2, "4": 3})
    assert [(p["seat"], p["to_pot"], p["to_reserve"]) for p in data_of(events, "paid")] == [
        (3, 4, 0),
        (4, 1, 3),
        (1, 0, 4),
    ]
    assert (state["pot"], state["reserve"]) == (5, 7)
    assert stacks(state) == {1: 95, 2: 103, 3: 95, 4: 95}
    # Deal 2: 4 alone takes the whole pot of 5 (100); game 1 ends.
    state, _ = next_deal(state)
    state, _ = play(state, [4])
    assert state["pot"] == 0
    assert state["game_in_progress"] is False
    # Deal 3, game 2: the reserve (7) holds at least the 4 the antes would bring, so 5 of
    # it opens the pot, 2 stay in the reserve and nobody antes.
    state, events = next_deal(state)
    assert data_of(events, "reserve_opened") == [{"amount": 5, "pot": 5, "reserve": 2}]
    assert data_of(events, "ante") == []
    assert stacks(state) == {1: 95, 2: 103, 3: 95, 4: 100}
    # A lone winner takes 5 and ends game 2; the reserve (2) is short of 4, so game 3
    # opens with antes as usual -> pot 4.
    state, _ = play(state, [1])
    state, events = next_deal(state)
    assert data_of(events, "reserve_opened") == []
    assert len(data_of(events, "ante")) == 4
    assert (state["pot"], state["reserve"]) == (4, 2)
    assert conserved(state)


def test_cap_reserve_antes_overflow_too() -> None:
    # 4 players, ante 1, cap 3 to the reserve: the antes bring 4, the pot keeps 3.
    state = started(4, cap=3, cap_mode="reserve")
    assert (state["pot"], state["reserve"]) == (3, 1)


def test_a_player_who_cannot_pay_in_full_pays_what_they_have() -> None:
    # 3 players with 100, 100 and 20, ante 1: pot 3, stacks 99, 99, 19.
    state = guts.new_table({}, "t1", 0.0)
    for name, stack in (("Ann", 100), ("Bob", 100), ("Cy", 20)):
        state, _ = guts.sit(state, name, stack, 0.0)
    state, _ = guts.start(state, 1, T0, make_deck())
    # Deal 1: 1, 2 in, 1 wins 3 (102) and 2 pays 3 (96) -> pot 3.
    state, _ = play(state, [1, 2], {"1": 9, "2": 1})
    # Deal 2: 1, 2, 3 in, 2 best: 2 takes 3 (99); 1 pays 3 (99) and 3 pays 3 (16) -> pot 6.
    state, _ = next_deal(state)
    state, _ = play(state, [1, 2, 3], {"1": 1, "2": 9, "3": 2})
    assert state["pot"] == 6
    assert stacks(state) == {1: 99, 2: 99, 3: 16}
    # Deal 3: 1, 3 in, 1 wins 6 (105) and 3 pays 6 (10) -> pot 6.
    state, _ = next_deal(state)
    state, _ = play(state, [1, 3], {"1": 9, "3": 1})
    assert state["pot"] == 6
    assert stacks(state) == {1: 105, 2: 99, 3: 10}
    # Deal 4: all in, 2 best: 2 takes 6 (105); 1 pays 6 (99) and 3 pays 6 (4) -> pot 12.
    state, _ = next_deal(state)
    state, _ = play(state, [2, 3, 1], {"1": 1, "2": 9, "3": 2})
    assert state["pot"] == 12
    assert stacks(state) == {1: 99, 2: 105, 3: 4}
    # Deal 5: 1, 3 in, 1 takes 12 (111); 3 owes 12 but has 4: it pays 4 and is out of
    # chips -> pot 4.
    state, _ = next_deal(state)
    state, events = play(state, [1, 3], {"1": 9, "3": 1})
    assert data_of(events, "paid")[0] == {
        "seat": 3,
        "owed": 12,
        "amount": 4,
        "to_pot": 4,
        "to_reserve": 0,
        "stack": 0,
    }
    assert state["pot"] == 4
    assert stacks(state) == {1: 111, 2: 105, 3: 0}
    # Deal 6 (dealer 1): seat 3 is not dealt in. 1, 2 in, 2 takes 4 (109), 1 pays 4 (107) -> pot 4.
    state, _ = next_deal(state)
    assert state["dealer"] == 1
    assert deal_of(state)["players"] == [2, 1]
    state, _ = play(state, [1, 2], {"1": 1, "2": 9})
    # Seat 3 rebuys 50 between deals and is dealt into deal 7 of the same game.
    state, _ = guts.rebuy(state, 3, 50, deadline_of(state) - 1)
    state, _ = next_deal(state)
    assert 3 in deal_of(state)["players"]
    assert state["game_number"] == 1
    assert state["pot"] == 4
    assert stacks(state) == {1: 107, 2: 109, 3: 50}
    assert conserved(state)


def test_without_rebuy_a_broke_player_leaves_when_the_game_ends() -> None:
    # 100, 100 and 2 chips, rebuy false, min buy-in 1. Antes: pot 3; seat 3 has 1 left.
    state = guts.new_table({"rebuy": False, "min_buy_in": 1}, "t1", 0.0)
    for name, stack in (("Ann", 100), ("Bob", 100), ("Cy", 2)):
        state, _ = guts.sit(state, name, stack, 0.0)
    state, _ = guts.start(state, 1, T0, make_deck())
    # 1 and 3 in, 1 wins 3 (102); 3 owes 3 but pays its last 1 -> pot 1.
    state, _ = play(state, [1, 3], {"1": 9, "3": 1})
    assert state["pot"] == 1
    assert stacks(state) == {1: 102, 2: 99, 3: 0}
    # 2 alone wins 1: the pot is empty, the game ends and seat 3 is removed.
    state, _ = next_deal(state)
    state, events = play(state, [2])
    assert data_of(events, "left") == [{"seat": 3, "name": "Cy", "reason": "out_of_chips"}]
    assert data_of(events, "cashed_out") == [{"seat": 3, "name": "Cy", "amount": 0}]
    assert conserved(state)


def test_the_deal_records_its_pot_flow() -> None:
    # 3 players, ante 1, cap 4 to the reserve. Antes 3; 1, 2, 3 in, 2 best: 2 takes 3;
    # 3 pays 3 (pot 3) and 1 pays 3 (1 to the pot, 2 to the reserve).
    state = started(3, cap=4, cap_mode="reserve")
    state, _ = play(state, [1, 2, 3], {"1": 1, "2": 9, "3": 2})
    flow = [(f["kind"], f["seat"], f["amount"], f["target"]) for f in deal_of(state)["flow"]]
    assert flow == [
        ("ante", 2, 1, "pot"),
        ("ante", 3, 1, "pot"),
        ("ante", 1, 1, "pot"),
        ("win", 2, 3, "seat"),
        ("loss", 3, 3, "pot"),
        ("loss", 1, 1, "pot"),
        ("loss", 1, 2, "reserve"),
    ]
    assert deal_of(state)["pot_at_start"] == 3
    assert deal_of(state)["outcome"] == "won"
