"""Move-by-move tests of the Paiute state machine: options, every move, every error code."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Sequence
from typing import Any

import pytest

from api.games import fairness, paiute
from api.games.common import FULL_DECK, Deck, Ranked, RuleError
from api.games.state import PaiuteTable
from api.games.table import deal_of
from tests.support.events import data_of
from tests.support.games import (
    assert_refused,
    commitment,
    make_deck,
    paiute_deal,
    paiute_you,
    pending_of,
    turn_of,
    types,
)

NAMES = ["Ann", "Bob", "Cy", "Dee", "Eve"]
T0 = 1000.0
SALT = "abc123"

# Three seats: seat 1 deals first, so the dealing order is 2, 3, 1.
HAND_2 = ["Ah", "Ad", "Ac", "Kh", "Kd"]
HAND_3 = ["2c", "3c", "4c", "5c", "9d"]
HAND_1 = ["7h", "7d", "8s", "9s", "Th"]
WILD = "Js"
STARTER = "As"
STOCK_TOP = ["6c", "Kc", "Qd", "2d", "3h", "4s"]

STRONG = Ranked(6 << 16 | 14, "five_of_a_kind", "Five of a kind, aces")
FLUSH = Ranked(4 << 16 | 6, "straight_flush", "Straight flush, 6-high")
PAIRS = Ranked(1 << 16 | 0x975, "two_two_two", "Three pairs, nines, sevens and fives")
NOTHING = Ranked(0, "no_combination", "No winning combination")


def stacked(
    hands: Sequence[Sequence[str]],
    wild: str = WILD,
    starter: str = STARTER,
    stock: Sequence[str] = (),
    salt: str = SALT,
) -> Deck:
    """A deck that deals `hands` in dealing order, then the wild card, starter and stock."""
    top = [hand[r] for r in range(5) for hand in hands] + [wild, starter, *stock]
    assert len(set(top)) == len(top)
    return Deck((*top, *(card for card in FULL_DECK if card not in top)), salt)


THREE = stacked([HAND_2, HAND_3, HAND_1], stock=STOCK_TOP)


def seated(players: int, stack: int = 100, **options: Any) -> PaiuteTable:
    state = paiute.new_table(options, "t1", 0.0)
    for name in NAMES[:players]:
        state, _ = paiute.sit(state, name, stack, 0.0)
    return state


def started(players: int = 3, deck: Deck = THREE, stack: int = 100, **options: Any) -> PaiuteTable:
    state, _ = paiute.start(seated(players, stack, **options), 1, T0, deck)
    return state


def hand(state: PaiuteTable, seat: int) -> list[str]:
    cards: list[str] = deal_of(state)["hands"][str(seat)]
    return cards


def play(state: PaiuteTable, seat: int, now: float = T0 + 1) -> PaiuteTable:
    """One plain turn: draw from the stock and throw that card away."""
    state, _ = paiute.draw(state, seat, "stock", now)
    state, _ = paiute.discard(state, seat, hand(state, seat)[-1], now)
    return state


def sha_order(cards: Sequence[str], salt: str, number: int) -> list[str]:
    return sorted(cards, key=lambda c: hashlib.sha256(f"{salt}:{number}:{c}".encode()).hexdigest())


# --------------------------------------------------------------------------- options


def test_defaults_are_filled_in() -> None:
    assert paiute.validate_options({}) == paiute.PAIUTE_DEFAULTS
    assert list(paiute.validate_options({})) == list(paiute.PAIUTE_DEFAULTS)


def test_buy_in_limits_follow_the_ante_and_each_other() -> None:
    options = paiute.validate_options({"ante": 5})
    assert (options["min_buy_in"], options["max_buy_in"]) == (100, 2500)
    assert paiute.validate_options({"min_buy_in": 1000})["max_buy_in"] == 1000
    assert paiute.validate_options({"max_buy_in": 10})["min_buy_in"] == 10


def test_every_option_accepts_its_documented_values() -> None:
    raw = {
        "ante": 2,
        "turn_seconds": 3600,
        "max_reshuffles": 10,
        "deal_pause_seconds": 0.5,
        "min_players": 5,
        "max_players": 5,
        "min_buy_in": 40,
        "max_buy_in": 40,
        "rebuy": False,
        "away_after": 10,
    }
    assert paiute.validate_options(raw) == raw
    assert paiute.validate_options({"away_after": 0})["away_after"] == 0
    assert paiute.validate_options({"max_reshuffles": 0})["max_reshuffles"] == 0


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ({"cards": 3}, "cards"),
        ({"ghost": True}, "ghost"),
        ({"ante": 0}, "ante"),
        ({"ante": True}, "ante"),
        ({"ante": "1"}, "ante"),
        ({"turn_seconds": 0}, "turn_seconds"),
        ({"turn_seconds": 3601}, "turn_seconds"),
        ({"max_reshuffles": -1}, "max_reshuffles"),
        ({"max_reshuffles": 11}, "max_reshuffles"),
        ({"max_reshuffles": True}, "max_reshuffles"),
        ({"max_reshuffles": 1.5}, "max_reshuffles"),
        ({"deal_pause_seconds": 61}, "deal_pause_seconds"),
        ({"deal_pause_seconds": "3"}, "deal_pause_seconds"),
        ({"min_players": 1}, "min_players"),
        ({"min_players": 6}, "min_players"),
        ({"max_players": 6}, "max_players"),
        ({"max_players": None}, "max_players"),
        ({"min_players": 4, "max_players": 3}, "max_players"),
        ({"min_buy_in": 0}, "min_buy_in"),
        ({"min_buy_in": 50, "max_buy_in": 40}, "max_buy_in"),
        ({"rebuy": 1}, "rebuy"),
        ({"away_after": -1}, "away_after"),
        ({"away_after": 11}, "away_after"),
        ({"away_after": True}, "away_after"),
    ],
)
def test_bad_options_are_refused_naming_the_field(raw: dict[str, Any], field: str) -> None:
    with pytest.raises(RuleError, match=field) as caught:
        paiute.validate_options(raw)
    assert (caught.value.code, caught.value.field) == ("invalid_option", field)


def test_options_must_be_a_mapping() -> None:
    with pytest.raises(RuleError) as caught:
        paiute.validate_options([("ante", 2)])  # type: ignore[arg-type]
    assert caught.value.code == "invalid_option"


def test_new_table_is_waiting_and_json_safe() -> None:
    state = paiute.new_table({"ante": 2}, "t9", 5.0)
    assert state["game"] == "paiute"
    assert state["phase"] == "waiting"
    assert state["options"]["ante"] == 2
    assert (state["hand_number"], state["game_number"], state["pot"]) == (0, 0, 0)
    assert state["seats"] == {}
    assert state["deal"] is None
    assert paiute.next_deadline(state) is None
    assert paiute.wild_rank(state) is None
    assert paiute.finished_deal(state) is None
    assert paiute.ranking_request(state) is None
    assert json.loads(json.dumps(state)) == state
    with pytest.raises(RuleError):
        paiute.new_table({"max_players": 7}, "t9", 5.0)


# --------------------------------------------------------------------------- seats


def test_seat_moves_follow_the_guts_rules() -> None:
    state = seated(2, max_players=2)
    assert_refused("table_full", paiute.sit, state, "New", 100, 0.0)
    assert_refused("name_taken", paiute.sit, seated(1), "ANN", 100, 0.0)
    assert_refused("invalid_name", paiute.sit, seated(1), " ", 100, 0.0)
    assert_refused("invalid_buy_in", paiute.sit, seated(1), "New", 19, 0.0)
    assert_refused("rebuy_not_allowed", paiute.rebuy, seated(2, rebuy=False), 1, 10, 0.0)
    assert_refused("not_seated", paiute.leave, state, 3, 0.0)
    state, events = paiute.rebuy(state, 1, 50, 0.0)
    assert events[0]["data"] == {"seat": 1, "amount": 50, "stack": 150}
    state, events = paiute.leave(state, 1, 0.0)
    assert types(events) == ["cashed_out", "left"]
    assert events[0]["type"] == "cashed_out"
    assert events[0]["data"]["amount"] == 150
    assert paiute.chips_on_table(state) == state["chips_bought"] - state["chips_cashed"] == 100


def test_start_error_codes() -> None:
    assert_refused("not_seated", paiute.start, seated(2), 3, T0, make_deck())
    assert_refused("not_enough_players", paiute.start, seated(1), 1, T0, make_deck())
    assert_refused("not_enough_players", paiute.start, seated(2, min_players=3), 1, T0, THREE)
    assert_refused("invalid_deck", paiute.start, seated(2), 1, T0, None)
    assert_refused("invalid_deck", paiute.start, seated(2), 1, T0, Deck(FULL_DECK[:51], "ab"))
    assert_refused("already_started", paiute.start, started(), 1, T0, make_deck())


def test_rebuy_waits_until_the_deal_is_settled() -> None:
    state = started()
    assert_refused("game_in_progress", paiute.rebuy, state, 2, 10, T0)
    state, _ = paiute.sit(state, "Late", 50, T0)
    state, events = paiute.rebuy(state, 4, 10, T0)
    assert events[0]["type"] == "rebought"
    assert events[0]["data"]["stack"] == 60


# --------------------------------------------------------------------------- the deal


def test_start_antes_deals_and_turns_up_the_wild_card() -> None:
    state, events = paiute.start(seated(3), 2, T0, THREE)
    assert types(events) == [
        "game_started",
        "deal_started",
        *["ante"] * 3,
        *["cards_dealt"] * 3,
        "dealt",
        "wild_card",
        "discard_started",
        "phase",
        "turn",
    ]
    assert events[1]["data"] == {
        "hand_number": 1,
        "game_number": 1,
        "dealer": 1,
        "commitment": commitment(THREE),
        "players": [2, 3, 1],
    }
    assert events[2]["data"] == {
        "seat": 2,
        "owed": 1,
        "amount": 1,
        "to_pot": 1,
        "to_reserve": 0,
        "stack": 99,
    }
    assert events[5] == {
        "type": "cards_dealt",
        "data": {"seat": 2, "cards": HAND_2},
        "visible_to": [2],
    }
    assert data_of(events, "wild_card") == [{"card": "Js", "rank": 11}]
    assert data_of(events, "discard_started") == [{"card": "As"}]
    assert events[-1]["data"] == {"seat": 2, "deadline": T0 + 30}
    deal = deal_of(state)
    assert (hand(state, 2), hand(state, 3), hand(state, 1)) == (HAND_2, HAND_3, HAND_1)
    assert deal["wild_card"] == "Js"
    assert paiute.wild_rank(state) == 11
    assert deal["discard_pile"] == ["As"]
    assert deal["stock"] == list(THREE.cards[17:])
    assert deal["stock"][: len(STOCK_TOP)] == STOCK_TOP
    assert state["phase"] == "playing"
    assert state["pot"] == 3
    assert deal_of(state)["pot_at_start"] == 3
    assert state["deadline"] == T0 + 30
    assert json.loads(json.dumps(state)) == state


def test_an_ace_wild_card_is_rank_14_and_a_short_stack_antes_what_it_has() -> None:
    state = seated(1, ante=5, min_buy_in=3)
    state, _ = paiute.sit(state, "Poor", 3, 0.0)
    state, events = paiute.start(state, 1, T0, stacked([HAND_1, HAND_3], wild="Ac"))
    assert paiute.wild_rank(state) == 14
    assert data_of(events, "ante")[0] == {
        "seat": 2,
        "owed": 5,
        "amount": 3,
        "to_pot": 3,
        "to_reserve": 0,
        "stack": 0,
    }
    assert state["pot"] == 8
    assert deal_of(state)["players"] == [2, 1]


# --------------------------------------------------------------------------- turns


def test_drawing_from_the_stock_is_seen_only_by_the_drawer() -> None:
    state, events = paiute.draw(started(), 2, "stock", T0 + 1)
    assert events == [
        {"type": "drew", "data": {"seat": 2, "source": "stock"}, "visible_to": None},
        {"type": "drew_card", "data": {"seat": 2, "card": "6c"}, "visible_to": [2]},
    ]
    assert hand(state, 2) == [*HAND_2, "6c"]
    assert deal_of(state)["drawn"] == {"card": "6c", "source": "stock"}
    assert paiute.view(state, 2)["you"] == {
        "seat": 2,
        "cards": [*HAND_2, "6c"],
        "drawn": {"card": "6c", "source": "stock"},
    }
    assert '"6c"' not in json.dumps(paiute.view(state, 3))
    assert '"6c"' not in json.dumps(paiute.view(state, None))
    public = paiute_deal(paiute.view(state, None))
    assert public["drawn"] == {"seat": 2, "source": "stock", "card": None}
    assert public["hand_sizes"] == {"2": 6, "3": 5, "1": 5}
    assert paiute.view(state, None)["pending"] == {
        "action": "discard_or_call",
        "seats": [2],
        "deadline": T0 + 30,
    }
    # The card drawn may be thrown away at once.
    state, events = paiute.discard(state, 2, "6c", T0 + 2)
    assert events[0]["data"] == {"seat": 2, "card": "6c"}
    assert deal_of(state)["discard_pile"] == ["As", "6c"]


def test_a_card_taken_from_the_discard_pile_cannot_go_straight_back() -> None:
    state, events = paiute.draw(started(), 2, "discard", T0 + 1)
    assert events == [
        {"type": "drew", "data": {"seat": 2, "source": "discard", "card": "As"}, "visible_to": None}
    ]
    assert deal_of(state)["discard_pile"] == []
    assert paiute_deal(paiute.view(state, 3))["drawn"] == {
        "seat": 2,
        "source": "discard",
        "card": "As",
    }
    assert_refused("cannot_discard_drawn", paiute.discard, state, 2, "As", T0 + 2)
    state, events = paiute.discard(state, 2, "Kd", T0 + 5)
    assert types(events) == ["discarded", "turn"]
    assert events[1]["data"] == {"seat": 3, "deadline": T0 + 35}
    assert hand(state, 2) == ["Ah", "Ad", "Ac", "Kh", "As"]
    assert deal_of(state)["discard_pile"] == ["Kd"]
    assert deal_of(state)["turn"] == 3
    assert state["deadline"] == T0 + 35


def test_turns_go_clockwise_from_the_dealers_left_and_wrap() -> None:
    state = started()
    turns = []
    for _ in range(7):
        seat = turn_of(state)
        turns.append(seat)
        state = play(state, seat)
        assert all(len(cards) == 5 for cards in deal_of(state)["hands"].values())
    assert turns == [2, 3, 1, 2, 3, 1, 2]


def test_turn_error_codes() -> None:
    assert_refused("no_hand_in_progress", paiute.draw, seated(3), 1, "stock", T0)
    state = started()
    assert_refused("not_seated", paiute.draw, state, 5, "stock", T0 + 1)
    assert_refused("not_your_turn", paiute.draw, state, 3, "stock", T0 + 1)
    assert_refused("not_your_turn", paiute.discard, state, 1, "7h", T0 + 1)
    assert_refused("invalid_choice", paiute.draw, state, 2, "deck", T0 + 1)
    assert_refused("invalid_choice", paiute.draw, state, 2, None, T0 + 1)
    assert_refused("too_late", paiute.draw, state, 2, "stock", T0 + 30)
    assert_refused("must_draw_first", paiute.discard, state, 2, "Ah", T0 + 1)
    assert_refused("must_draw_first", paiute.call, state, 2, HAND_2, None, STRONG, T0 + 1)
    late, _ = paiute.sit(state, "Late", 100, T0)
    assert_refused("not_your_turn", paiute.draw, late, 4, "stock", T0 + 1)
    state, _ = paiute.draw(state, 2, "stock", T0 + 1)
    assert_refused("already_drawn", paiute.draw, state, 2, "discard", T0 + 1)
    assert_refused("card_not_held", paiute.discard, state, 2, "7h", T0 + 1)
    assert_refused("card_not_held", paiute.discard, state, 2, None, T0 + 1)
    assert_refused("too_late", paiute.discard, state, 2, "Ah", T0 + 30)


def test_an_empty_discard_pile_cannot_be_drawn_from() -> None:
    state, _ = paiute.draw(started(), 2, "discard", T0 + 1)
    # Six cards shown, nothing discarded: the pile stays empty for the last turns.
    state, _ = paiute.call(state, 2, [*HAND_2, "As"], None, STRONG, T0 + 2)
    assert deal_of(state)["discard_pile"] == []
    assert paiute_deal(paiute.view(state, None))["discard_top"] is None
    assert_refused("empty_discard_pile", paiute.draw, state, 3, "discard", T0 + 3)
    state, _ = paiute.draw(state, 3, "stock", T0 + 3)
    assert hand(state, 3)[-1] == "6c"


# --------------------------------------------------------------------------- calling


def test_a_five_card_call_discards_the_sixth_and_gives_last_turns_up_to_the_dealer() -> None:
    state = started()
    state = play(state, 2)  # seat 2 throws away 6c
    state, _ = paiute.draw(state, 3, "discard", T0 + 2)
    assert hand(state, 3) == [*HAND_3, "6c"]
    flush = ["2c", "3c", "4c", "5c", "6c"]
    state, events = paiute.call(state, 3, flush, "9d", FLUSH, T0 + 3)
    assert types(events) == ["called", "phase", "turn"]
    assert events[0]["data"] == {
        "seat": 3,
        "cards": flush,
        "discard": "9d",
        "category": "straight_flush",
        "description": "Straight flush, 6-high",
    }
    assert events[1]["data"] == {"phase": "last_turns", "deadline": T0 + 33}
    assert events[2]["data"] == {"seat": 1, "deadline": T0 + 33}
    deal = deal_of(state)
    assert deal["caller"] == 3
    assert deal["shown"] == {"3": flush}
    assert deal["discard_pile"][-1] == "9d"
    assert state["phase"] == "last_turns"
    public = paiute_deal(paiute.view(state, 2))
    assert public["caller"] == 3
    assert public["shown"] == {"3": flush}
    assert public["claims"]["3"]["description"] == "Straight flush, 6-high"
    # The dealer's last turn: draw, and without a combination, discard.
    state, _ = paiute.draw(state, 1, "stock", T0 + 4)
    state, events = paiute.discard(state, 1, "Kc", T0 + 5)
    assert types(events) == ["discarded", "phase"]
    assert state["phase"] == "showdown"
    assert state["deadline"] is None
    assert paiute.ranking_request(state) == {"3": flush}
    assert paiute.view(state, None)["pending"] == {
        "action": "rank_hands",
        "seats": [],
        "deadline": None,
    }
    state, events = paiute.settle(state, {"3": FLUSH}, T0 + 6)
    assert data_of(events, "showdown") == [
        {
            "reason": "showdown",
            "hands": {
                "3": {
                    "cards": flush,
                    "strength": FLUSH.strength,
                    "category": "straight_flush",
                    "description": "Straight flush, 6-high",
                }
            },
        }
    ]
    assert data_of(events, "pot_won") == [{"seat": 3, "amount": 3, "pot": 0}]
    assert data_of(events, "deal_ended")[0]["outcome"] == "won"
    assert state["seats"]["3"]["stack"] == 102
    assert state["phase"] == "between_deals"
    assert state["deadline"] == T0 + 9


def test_a_six_card_call_shows_all_six_without_a_discard() -> None:
    state, _ = paiute.draw(started(), 2, "discard", T0 + 1)
    six = ["As", "Ah", "Ad", "Ac", "Kh", "Kd"]
    state, events = paiute.call(state, 2, six, None, STRONG, T0 + 2)
    assert events[0]["type"] == "called"
    assert events[0]["data"]["cards"] == six
    assert events[0]["data"]["discard"] is None
    assert deal_of(state)["shown"] == {"2": six}
    assert deal_of(state)["last_turns"] == [1]  # seat 3 plays now, then the dealer
    assert paiute_deal(paiute.view(state, None))["hand_sizes"]["2"] == 6


def test_six_cards_are_shown_whole_only_as_a_six_card_combination() -> None:
    """A five-card combination discards the sixth card, under the discard rule too."""
    state = play(started(), 2)  # seat 2 throws away 6c
    state, _ = paiute.draw(state, 3, "discard", T0 + 2)
    six = [*HAND_3, "6c"]  # 2c-6c is a straight flush; 9d is the sixth card
    assert_refused("invalid_combination", paiute.call, state, 3, six, None, FLUSH, T0 + 3)
    assert_refused("invalid_combination", paiute.verify_call, state, 3, six, None, None, T0 + 3)
    # nor can the card just taken from the pile stay in hand that way
    state = play(started(), 2)
    state, _ = paiute.draw(state, 3, "discard", T0 + 2)
    straight = ["2c", "3c", "4c", "5c", "6c"]
    assert_refused("cannot_discard_drawn", paiute.call, state, 3, ["2c", "3c", "4c", "5c", "9d"],
                   "6c", FLUSH, T0 + 3)  # fmt: skip
    state, events = paiute.call(state, 3, straight, "9d", FLUSH, T0 + 3)
    assert data_of(events, "called")[0]["discard"] == "9d"


@pytest.mark.parametrize(
    ("cards", "expected"),
    [
        (["Ah", "Ad", "Ac", "As", "Kh", "Kd"], True),  # four + two
        (["Ah", "Ad", "Ac", "Kh", "Kd", "Ks"], True),  # three + three
        (["Ah", "Ad", "Kh", "Kd", "2h", "2d"], True),  # two + two + two
        (["Ah", "Ad", "Ac", "Kh", "Kd", "2h"], False),  # three + two + one
        (["Ah", "Ad", "Ac", "Js", "Kd", "2h"], False),  # a jack (wild) makes one pair only
        (["Ah", "Ad", "Ac", "Js", "Kd", "Kh"], True),  # the jack makes four aces or three kings
        (["Ah", "Kd", "Qc", "Js", "Jh", "Jd"], True),  # three wilds: two + two + two
        (["2c", "3c", "4c", "5c", "6c", "9d"], False),  # a straight flush and a spare
        (["Ah", "Ad", "Ac", "Kh", "Kd"], False),  # five cards
    ],
)
def test_which_six_cards_form_a_six_card_combination(cards: list[str], expected: bool) -> None:
    assert paiute.forms_six_card_combination(cards, 11) is expected


def _partitions(total: int, largest: int) -> list[list[int]]:
    if total == 0:
        return [[]]
    return [
        [part, *rest]
        for part in range(min(total, largest), 0, -1)
        for rest in _partitions(total - part, part)
    ]


def test_six_card_combinations_match_every_way_to_place_the_wild_cards() -> None:
    """Every count of natural ranks and of wild cards, against placing each wild card."""
    ranks = "AKQT98765432"  # every rank but the wild jack
    for wilds in range(5):
        for natural in _partitions(6 - wilds, 4):
            if len(natural) > len(ranks):
                continue
            cards = [f"{ranks[i]}h" for i, count in enumerate(natural) for _ in range(count)]
            cards += ["Js"] * wilds
            patterns = ([2, 4], [3, 3], [2, 2, 2])
            placements = itertools.combinations_with_replacement(range(len(ranks) + 1), wilds)
            brute = any(
                sorted(
                    count
                    for count in [
                        *(n + places.count(i) for i, n in enumerate(natural)),
                        *(places.count(i) for i in range(len(natural), len(ranks) + 1)),
                    ]
                    if count
                )
                in patterns
                for places in placements
            )
            assert paiute.forms_six_card_combination(cards, 11) is brute, (natural, wilds)


@pytest.mark.parametrize(
    ("cards", "discard", "code"),
    [
        (HAND_2, None, "invalid_combination"),  # five shown need a discard
        ([*HAND_2, "6c"], "6c", "invalid_combination"),  # six shown take none
        (HAND_2[:4], "6c", "invalid_combination"),
        ([*HAND_2[:4], "Ah"], "6c", "invalid_combination"),  # a card twice
        (HAND_2, "Ah", "invalid_combination"),  # the discard among the shown
        ("AhAdAcKhKd", "6c", "invalid_combination"),
        ([*HAND_2[:4], 7], "6c", "invalid_combination"),
        (HAND_2, 7, "invalid_combination"),
        (["Ah", "Ad", "Ac", "Kh", "Qs"], "6c", "cards_not_held"),
        (["Ah", "Ad", "Ac", "Kh", "Kd", "Qs"], None, "cards_not_held"),
        (["Ah", "Ad", "Ac", "Kh", "Kd"], "Qs", "cards_not_held"),
    ],
)
def test_a_call_must_name_exactly_the_six_cards_held(cards: Any, discard: Any, code: str) -> None:
    state, _ = paiute.draw(started(), 2, "stock", T0 + 1)
    assert_refused(code, paiute.call, state, 2, cards, discard, STRONG, T0 + 2)


def test_a_call_needs_a_winning_combination() -> None:
    state, _ = paiute.draw(started(), 2, "stock", T0 + 1)
    cards = ["Ah", "Ad", "Ac", "Kh", "Kd"]
    assert_refused("no_combination", paiute.call, state, 2, cards, "6c", NOTHING, T0 + 2)
    assert_refused("invalid_ranking", paiute.call, state, 2, cards, "6c", 7, T0 + 2)
    assert_refused("invalid_ranking", paiute.call, state, 2, cards, "6c", None, T0 + 2)
    bad = Ranked(True, "x", "x")
    assert_refused("invalid_ranking", paiute.call, state, 2, cards, "6c", bad, T0 + 2)
    assert_refused("not_your_turn", paiute.call, state, 3, cards, "6c", STRONG, T0 + 2)
    assert_refused("too_late", paiute.call, state, 2, cards, "6c", STRONG, T0 + 30)
    # verify_call without a rank checks the move only, for the adapter to ask first.
    paiute.verify_call(state, 2, cards, "6c", None, T0 + 2)


def test_a_call_that_cannot_be_ranked_holds_the_turn_open() -> None:
    state, _ = paiute.draw(started(), 2, "stock", T0 + 1)
    cards = ["Ah", "Ad", "Ac", "Kh", "Kd"]
    assert state["deadline"] == T0 + 30
    held, events = paiute.hold_turn(state, 2, cards, "6c", T0 + 25, 15.0)
    assert events == [
        {
            "type": "turn_held",
            "data": {"seat": 2, "deadline": T0 + 40, "reason": "evaluator_unavailable"},
            "visible_to": None,
        }
    ]
    assert held["deadline"] == paiute.next_deadline(held) == T0 + 40
    assert {k: v for k, v in held.items() if k != "deadline"} == {
        k: v for k, v in state.items() if k != "deadline"
    }
    assert state["deadline"] == T0 + 30  # the state given is not changed
    # the timer leaves the held turn alone until its new deadline, then plays it
    assert paiute.on_deadline(held, T0 + 35, make_deck(1)) == (held, [])
    # held again later: a later deadline; while it is already later: nothing changes
    again, more = paiute.hold_turn(held, 2, cards, "6c", T0 + 30, 15.0)
    assert again["deadline"] == T0 + 45
    assert len(more) == 1
    assert paiute.hold_turn(held, 2, cards, "6c", T0 + 20, 15.0) == (held, [])
    # only a call the rules accept without its rank holds the turn
    assert_refused("not_your_turn", paiute.hold_turn, state, 3, cards, "6c", T0 + 2, 15.0)
    assert_refused("too_late", paiute.hold_turn, state, 2, cards, "6c", T0 + 30, 15.0)
    assert_refused("cards_not_held", paiute.hold_turn, state, 2, cards, "2c", T0 + 2, 15.0)
    fresh = started()
    assert_refused("must_draw_first", paiute.hold_turn, fresh, 2, cards, "6c", T0 + 2, 15.0)


def test_a_call_cannot_discard_the_card_taken_from_the_discard_pile() -> None:
    state, _ = paiute.draw(started(), 2, "discard", T0 + 1)
    cards = ["Ah", "Ad", "Ac", "Kh", "Kd"]
    assert_refused("cannot_discard_drawn", paiute.call, state, 2, cards, "As", STRONG, T0 + 2)
    state, _ = paiute.call(state, 2, ["Ah", "Ad", "Ac", "Kh", "As"], "Kd", STRONG, T0 + 2)
    assert deal_of(state)["discard_pile"] == ["Kd"]


def test_the_dealer_calling_ends_the_deal_at_once() -> None:
    state = play(play(started(), 2), 3)
    state, _ = paiute.draw(state, 1, "stock", T0 + 2)
    cards = hand(state, 1)
    state, events = paiute.call(state, 1, cards[:5], cards[5], PAIRS, T0 + 3)
    assert types(events) == ["called", "phase"]
    assert state["phase"] == "showdown"
    assert deal_of(state)["last_turns"] == []
    assert paiute.ranking_request(state) == {"1": cards[:5]}


def test_a_last_turn_lay_down_can_beat_the_caller() -> None:
    state, _ = paiute.draw(started(), 2, "stock", T0 + 1)
    state, _ = paiute.call(state, 2, ["Ah", "Ad", "Ac", "Kh", "Kd"], "6c", PAIRS, T0 + 2)
    assert deal_of(state)["last_turns"] == [1]
    state, _ = paiute.draw(state, 3, "discard", T0 + 3)
    flush = ["2c", "3c", "4c", "5c", "6c"]
    state, events = paiute.call(state, 3, flush, "9d", FLUSH, T0 + 4)
    assert types(events) == ["laid_down", "turn"]
    assert events[0]["type"] == "laid_down"
    assert events[0]["data"]["seat"] == 3
    assert deal_of(state)["caller"] == 2
    assert state["phase"] == "last_turns"
    state = play(state, 1, T0 + 5)
    assert paiute.ranking_request(state) == {"2": ["Ah", "Ad", "Ac", "Kh", "Kd"], "3": flush}
    assert_refused("invalid_ranking", paiute.settle, state, {"2": PAIRS}, T0 + 6)
    state, events = paiute.settle(state, {"2": PAIRS, "3": FLUSH}, T0 + 6)
    assert data_of(events, "pot_won") == [{"seat": 3, "amount": 3, "pot": 0}]
    assert sorted(paiute_deal(paiute.view(state, None))["ranks"]) == ["2", "3"]


def test_equal_best_combinations_split_the_pot_odd_chip_from_the_dealers_left() -> None:
    state, _ = paiute.draw(started(), 2, "stock", T0 + 1)
    state, _ = paiute.call(state, 2, ["Ah", "Ad", "Ac", "Kh", "Kd"], "6c", PAIRS, T0 + 2)
    state = play(state, 3, T0 + 3)
    state, _ = paiute.draw(state, 1, "stock", T0 + 4)
    state, _ = paiute.call(state, 1, hand(state, 1)[:5], hand(state, 1)[5], PAIRS, T0 + 5)
    assert state["phase"] == "showdown"
    state, events = paiute.settle(state, {"2": PAIRS, "1": PAIRS}, T0 + 6)
    assert data_of(events, "pot_split") == [
        {"shares": [{"seat": 2, "amount": 2}, {"seat": 1, "amount": 1}], "reason": "tie", "pot": 0}
    ]
    assert data_of(events, "deal_ended")[0]["outcome"] == "split"
    assert (state["seats"]["2"]["stack"], state["seats"]["1"]["stack"]) == (101, 100)


def test_the_showdown_blocks_play_until_settled() -> None:
    state = play(play(started(), 2), 3)
    state, _ = paiute.draw(state, 1, "stock", T0 + 2)
    state, _ = paiute.call(state, 1, hand(state, 1)[:5], hand(state, 1)[5], PAIRS, T0 + 3)
    assert_refused("showdown_pending", paiute.draw, state, 2, "stock", T0 + 4)
    assert_refused("showdown_pending", paiute.rebuy, state, 2, 10, T0 + 4)
    assert_refused("showdown_pending", paiute.start, state, 2, T0 + 4, make_deck())
    assert_refused("not_in_showdown", paiute.settle, started(), {}, T0)
    assert paiute.on_deadline(state, 10**9, make_deck()) == (state, [])
    state, _ = paiute.sit(state, "Late", 100, T0 + 4)
    state, events = paiute.leave(state, 2, T0 + 4)
    assert types(events) == ["leaving"]
    state, events = paiute.settle(state, {"1": PAIRS}, T0 + 5)
    assert [e["seat"] for e in data_of(events, "cashed_out")] == [2]
    assert "2" not in state["seats"]


# --------------------------------------------------------------------------- the stock


def exhaust(state: PaiuteTable, now: float = T0 + 1) -> PaiuteTable:
    """Play plain turns until the stock is empty."""
    while deal_of(state)["stock"]:
        state = play(state, turn_of(state), now)
    return state


def test_an_empty_stock_is_made_again_from_the_discard_pile_but_its_top() -> None:
    state = exhaust(started(2, stacked([HAND_1, HAND_2])))
    deal = deal_of(state)
    pile = list(deal["discard_pile"])
    assert len(pile) == 52 - 1 - 10
    assert paiute_deal(paiute.view(state, None))["stock_size"] == 0
    seat = turn_of(state)
    state, events = paiute.draw(state, seat, "stock", T0 + 2)
    key = hashlib.shake_256(f"cardroom:reshuffle:{SALT}".encode()).hexdigest(16)
    expected = sha_order(pile[:-1], key, 1)
    assert events[0] == {
        "type": "reshuffled",
        "data": {
            "number": 1,
            "stock": len(expected),
            "commitment": fairness.reshuffle_commitment(expected, SALT, 1),
        },
        "visible_to": None,
    }
    assert deal_of(state)["reshuffle_orders"] == [expected]
    assert hand(state, seat)[-1] == expected[0]
    assert deal_of(state)["stock"] == expected[1:]
    assert deal_of(state)["discard_pile"] == pile[-1:]
    assert deal_of(state)["reshuffles"] == 1
    assert paiute.reshuffle_order(pile[:-1], key, 1) == expected
    # The wild card stays out of play.
    assert WILD not in deal_of(state)["stock"] + deal_of(state)["discard_pile"]
    for event in events:
        assert '"stock": [' not in json.dumps(event)


def test_drawing_the_discard_top_from_an_empty_stock_does_not_reshuffle() -> None:
    state = exhaust(started(2, stacked([HAND_1, HAND_2])))
    seat = turn_of(state)
    state, events = paiute.draw(state, seat, "discard", T0 + 2)
    assert types(events) == ["drew"]
    assert deal_of(state)["reshuffles"] == 0


def test_the_deal_is_void_when_the_stock_runs_out_after_max_reshuffles() -> None:
    state = started(2, stacked([HAND_1, HAND_2]), max_reshuffles=1)
    state = exhaust(state)
    state = play(state, turn_of(state), T0 + 2)
    assert deal_of(state)["reshuffles"] == 1
    state = exhaust(state, T0 + 3)
    seat = turn_of(state)
    # The discard pile may still be drawn from; only the stock's end voids the deal.
    paiute.verify_draw(state, seat, "discard", T0 + 4)
    state, events = paiute.draw(state, seat, "stock", T0 + 4)
    assert types(events) == ["deal_void", "pot_carried", "deal_ended", "phase"]
    assert events[0]["data"] == {"reason": "stock_exhausted", "reshuffles": 1}
    assert events[1]["data"] == {"pot": 2, "reason": "void"}
    assert events[2]["type"] == "deal_ended"
    assert events[2]["data"]["outcome"] == "void"
    assert state["phase"] == "between_deals"
    assert state["pot"] == 2
    assert state["game_in_progress"]
    assert paiute.finished_deal(state)["outcome"] == "void"  # type: ignore[index]
    # The pot carries: the next deal of the same game adds the antes to it.
    state, events = paiute.on_deadline(state, T0 + 10, make_deck(1))
    assert "game_started" not in types(events)
    assert state["pot"] == 4
    assert deal_of(state)["pot_at_start"] == 4
    assert state["dealer"] == 2
    assert deal_of(state)["players"] == [1, 2]


def test_no_reshuffle_allowed_voids_at_the_first_empty_stock() -> None:
    state = exhaust(started(2, stacked([HAND_1, HAND_2]), max_reshuffles=0))
    state, events = paiute.draw(state, turn_of(state), "stock", T0 + 2)
    assert types(events)[0] == "deal_void"


def test_after_a_call_the_stock_is_reshuffled_whatever_the_limit() -> None:
    state = exhaust(started(3, max_reshuffles=0))
    while deal_of(state)["turn"] != 2:
        seat = turn_of(state)
        state, _ = paiute.draw(state, seat, "discard", T0 + 1)
        state, _ = paiute.discard(state, seat, hand(state, seat)[0], T0 + 1)
    state, _ = paiute.draw(state, 2, "discard", T0 + 2)
    cards = hand(state, 2)
    state, _ = paiute.call(state, 2, cards[1:], cards[0], PAIRS, T0 + 3)
    assert deal_of(state)["stock"] == []
    state, events = paiute.draw(state, 3, "stock", T0 + 4)
    assert types(events)[0] == "reshuffled"
    assert deal_of(state)["reshuffles"] == 1


# --------------------------------------------------------------------------- timers


def test_a_missed_turn_draws_from_the_stock_and_discards_that_card() -> None:
    state = started()
    same, events = paiute.on_deadline(state, T0 + 29.9, make_deck(1))
    assert (same, events) == (state, [])
    state, events = paiute.on_deadline(state, T0 + 31, make_deck(1))
    assert events == [
        {"type": "timeout", "data": {"seat": 2, "reason": "deadline"}, "visible_to": None},
        {"type": "drew", "data": {"seat": 2, "source": "stock"}, "visible_to": None},
        {"type": "drew_card", "data": {"seat": 2, "card": "6c"}, "visible_to": [2]},
        {"type": "discarded", "data": {"seat": 2, "card": "6c"}, "visible_to": None},
        {"type": "turn", "data": {"seat": 3, "deadline": T0 + 61}, "visible_to": None},
    ]
    assert hand(state, 2) == HAND_2
    assert deal_of(state)["timeouts"] == [{"seat": 2, "reason": "deadline"}]
    assert paiute.next_deadline(state) == T0 + 61


def test_a_timeout_after_drawing_discards_the_drawn_card_or_the_first_other() -> None:
    state, _ = paiute.draw(started(), 2, "stock", T0 + 1)
    state, events = paiute.on_deadline(state, T0 + 30)
    assert types(events) == ["timeout", "discarded", "turn"]
    assert events[1]["data"] == {"seat": 2, "card": "6c"}
    state, _ = paiute.draw(state, 3, "discard", T0 + 31)
    state, events = paiute.on_deadline(state, T0 + 60)
    assert events[1]["data"] == {"seat": 3, "card": "2c"}
    assert hand(state, 3) == ["3c", "4c", "5c", "9d", "6c"]


def test_a_timed_out_last_turn_lays_nothing_down() -> None:
    state, _ = paiute.draw(started(), 2, "stock", T0 + 1)
    state, _ = paiute.call(state, 2, ["Ah", "Ad", "Ac", "Kh", "Kd"], "6c", PAIRS, T0 + 2)
    state, _ = paiute.on_deadline(state, T0 + 40)
    state, events = paiute.on_deadline(state, T0 + 80)
    assert types(events) == ["timeout", "drew", "drew_card", "discarded", "phase"]
    assert state["phase"] == "showdown"
    assert paiute.ranking_request(state) == {"2": ["Ah", "Ad", "Ac", "Kh", "Kd"]}


def test_settle_and_the_next_deal_in_place_change_only_the_state_given() -> None:
    """In place, a settle and the next deal make what they make of a copy, change the
    state given rather than a copy, and leave the finished deal's record as it was."""
    state, _ = paiute.draw(started(), 2, "stock", T0 + 1)
    state, _ = paiute.call(state, 2, HAND_2, "6c", PAIRS, T0 + 2)
    state = play(play(state, 3), 1)
    showdown = json.loads(json.dumps(state))
    settled, events = paiute.settle(state, {"2": PAIRS}, T0 + 3)
    assert state == showdown
    mine = json.loads(json.dumps(showdown))
    same, same_events = paiute.settle(mine, {"2": PAIRS}, T0 + 3, True)
    assert same is mine
    assert (same, same_events) == (settled, events)
    finished = paiute.finished_deal(settled)
    kept = json.loads(json.dumps(finished))
    dealt, events = paiute.on_deadline(settled, T0 + 6, make_deck(2))
    again, again_events = paiute.on_deadline(same, T0 + 6, make_deck(2), True)
    assert again is same
    assert (again, again_events) == (dealt, events)
    assert finished == kept


def test_the_pause_between_deals_starts_the_next_deal() -> None:
    state, _ = paiute.draw(started(), 2, "stock", T0 + 1)
    state, _ = paiute.call(state, 2, HAND_2, "6c", PAIRS, T0 + 2)
    state = play(play(state, 3), 1)
    state, _ = paiute.settle(state, {"2": PAIRS}, T0 + 3)
    assert not state["game_in_progress"]
    assert paiute.next_deadline(state) == T0 + 6
    assert pending_of(paiute.view(state, None))["action"] == "next_deal"
    assert_refused("no_hand_in_progress", paiute.draw, state, 2, "stock", T0 + 4)
    assert_refused("invalid_deck", paiute.on_deadline, state, T0 + 6, None)
    state, events = paiute.on_deadline(state, T0 + 6, make_deck(2))
    assert types(events)[:2] == ["game_started", "deal_started"]
    assert state["hand_number"] == 2
    assert state["game_number"] == 2
    assert state["dealer"] == 2
    assert deal_of(state)["players"] == [3, 1, 2]
    assert deal_of(state)["turn"] == 3
    assert state["pot"] == 3


# --------------------------------------------------------------------------- leaving


def test_a_player_leaving_mid_deal_stays_in_but_nobody_waits_for_them() -> None:
    state = started()
    state, events = paiute.leave(state, 3, T0 + 1)
    assert types(events) == ["leaving"]
    assert paiute.view(state, None)["seats"]["3"]["in_hand"]
    state, _ = paiute.draw(state, 2, "stock", T0 + 2)
    state, events = paiute.discard(state, 2, "6c", T0 + 3)
    # Seat 3's turn is played at once, and seat 1's begins.
    assert types(events) == [
        "discarded",
        "turn",
        "timeout",
        "drew",
        "drew_card",
        "discarded",
        "turn",
    ]
    assert events[2]["data"] == {"seat": 3, "reason": "leaving"}
    assert deal_of(state)["turn"] == 1
    # Seat 1 leaves during its own turn: it is played for it, then seat 2 plays.
    state, events = paiute.leave(state, 1, T0 + 4)
    assert types(events)[:2] == ["leaving", "timeout"]
    assert deal_of(state)["turn"] == 2
    state, _ = paiute.draw(state, 2, "stock", T0 + 5)
    state, events = paiute.call(state, 2, hand(state, 2)[:5], hand(state, 2)[5], PAIRS, T0 + 5)
    assert state["phase"] == "showdown"
    state, events = paiute.settle(state, {"2": PAIRS}, T0 + 6)
    assert sorted(e["seat"] for e in data_of(events, "left")) == [1, 3]
    assert state["seats"]["2"]["stack"] == 102


def test_a_deal_everyone_leaves_is_void_and_the_pot_shared() -> None:
    state = started(2, stacked([HAND_1, HAND_2]))
    state, _ = paiute.leave(state, 1, T0 + 1)
    state, events = paiute.leave(state, 2, T0 + 2)
    assert "deal_void" in types(events)
    assert data_of(events, "deal_void") == [{"reason": "abandoned", "reshuffles": 0}]
    assert data_of(events, "pot_split")[0]["reason"] == "abandoned"
    assert state["seats"] == {}
    assert paiute.chips_on_table(state) == 0


def test_a_seat_not_dealt_in_leaves_at_once() -> None:
    state, _ = paiute.sit(started(), "Late", 100, T0)
    state, events = paiute.leave(state, 4, T0 + 1)
    assert types(events) == ["cashed_out", "left"]


# --------------------------------------------------------------------------- views


def test_views_show_the_public_table_and_never_another_seats_cards() -> None:
    state, _ = paiute.draw(started(), 2, "stock", T0 + 1)
    spectator = paiute.view(state, None)
    assert spectator["game"] == "paiute"
    assert spectator["you"] is None
    public = paiute_deal(spectator)
    assert public["wild_card"] == WILD
    assert public["wild_rank"] == 11
    assert public["discard_top"] == "As"
    assert public["stock_size"] == len(deal_of(state)["stock"])
    assert public["turn"] == 2
    assert spectator["deadline"] == T0 + 30
    assert public["caller"] is None
    secret = set(deal_of(state)["stock"])
    for seat in (None, 1, 2, 3):
        text = json.dumps(paiute.view(state, seat))
        assert '"deck"' not in text
        assert '"salt"' not in text
        assert '"stock":' not in text
        for key, cards in deal_of(state)["hands"].items():
            for card in cards:
                assert (f'"{card}"' in text) == (str(seat) == key), (seat, card)
        for card in secret:
            assert f'"{card}"' not in text
    assert json.loads(json.dumps(spectator)) == spectator


def test_a_new_player_in_a_reused_seat_does_not_see_the_old_cards() -> None:
    state = started()
    state, _ = paiute.leave(state, 1, T0)
    state, _ = paiute.draw(state, 2, "stock", T0 + 1)
    state, _ = paiute.call(state, 2, HAND_2, "6c", PAIRS, T0 + 2)
    state = play(state, 3)
    state, _ = paiute.settle(state, {"2": PAIRS}, T0 + 3)
    state, _ = paiute.sit(state, "New", 100, T0 + 4)
    assert state["seats"]["1"]["name"] == "New"
    assert paiute.view(state, 1)["you"] == {"seat": 1, "cards": None, "drawn": None}
    assert paiute_you(paiute.view(state, 2))["cards"] == HAND_2


def test_finished_deal_reveals_the_deck_and_salt_only_after_the_deal() -> None:
    state = started()
    assert paiute.finished_deal(state) is None
    state, _ = paiute.draw(state, 2, "stock", T0 + 1)
    state, _ = paiute.call(state, 2, HAND_2, "6c", PAIRS, T0 + 2)
    state = play(play(state, 3), 1)
    assert paiute.finished_deal(state) is None
    state, _ = paiute.settle(state, {"2": PAIRS}, T0 + 3)
    record = paiute.finished_deal(state)
    assert record is not None
    for key in (
        "number",
        "game_number",
        "dealer",
        "outcome",
        "showdown_reason",
        "shown",
        "ranks",
        "flow",
        "commitment",
        "deck",
        "salt",
    ):
        assert key in record
    assert commitment(Deck(tuple(record["deck"]), record["salt"])) == record["commitment"]
    assert record["shown"] == {"2": HAND_2}
    assert record["ranks"]["2"]["strength"] == PAIRS.strength
    assert record["flow"][-1] == {
        "kind": "win",
        "seat": 2,
        "amount": 3,
        "source": "pot",
        "target": "seat",
    }
