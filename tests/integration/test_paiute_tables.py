"""Paiute tables through the HTTP API, on a real Redis and the real evaluator."""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import pytest

from api.app import create_app
from api.bootstrap import bootstrap
from api.games.common import FULL_DECK, Deck
from api.service.decks import shuffled_deck
from cardroom_client import FairnessError, HandHistory, verify_fairness
from tests.support.gateway import Gateway, gateway_settings
from tests.support.play import (
    chips,
    opened_cards,
    paiute_table,
    play_paiute_turns,
    seeded_decks,
    wait_for,
)
from tests.support.problems import assert_problem
from tests.support.tables_api import Player
from tests.support.transcript import Transcript


class DeckQueue:
    """Rigged decks first, then fair ones: a test sets up the deal it wants."""

    def __init__(self) -> None:
        self.decks: list[Deck] = []

    def rig(self, hands: list[list[str]], wild: str, discard: str, stock: list[str]) -> None:
        """The deck that deals `hands` (in dealing order), then the wild, discard, stock."""
        order: list[str] = []
        for round_ in range(5):
            order += [hand[round_] for hand in hands]
        order += [wild, discard, *stock]
        rest = [card for card in FULL_DECK if card not in order]
        self.decks.append(Deck(tuple(order + rest), "5a1f"))

    def __call__(self) -> Deck:
        return self.decks.pop(0) if self.decks else shuffled_deck()


@pytest.fixture
def rigged(redis_url: str, evaluator_address: str) -> Iterator[tuple[Gateway, DeckQueue]]:
    settings = gateway_settings(redis_url, evaluator_address)
    decks = DeckQueue()
    app = create_app(settings, bootstrap(settings, deck_source=decks))
    yield Gateway(app, app.test_client()), decks
    app.extensions["cardroom.clock"].stop()


def start_two_seats(
    gateway: Gateway, decks: DeckQueue, hands: list[list[str]], **deck: Any
) -> tuple[str, Player, Player]:
    """A two-seat table started on a rigged deck: seat 2 plays first, seat 1 deals."""
    decks.rig(hands, **deck)
    table_id, (one, two) = paiute_table(gateway, players=2)
    act(gateway, table_id, one, action="start")
    return table_id, one, two


def act(gateway: Gateway, table_id: str, player: Player, **action: Any) -> dict[str, Any]:
    response = gateway.act(table_id, player, **action)
    assert response.status_code == 200, response.get_json()
    return dict(response.get_json())


def refused(gateway: Gateway, table_id: str, player: Player, code: str, **action: Any) -> None:
    assert_problem(gateway.act(table_id, player, **action), (409, 422), code)


# Seats 1, 2, 3; seat 1 deals, so seats 2, 3, 1 are dealt in that order.
KINGS = ["Kc", "Kd", "Kh", "Ks", "2c"]
HEARTS = ["5h", "6h", "8h", "9h", "3c"]
DEALER = ["4d", "Jc", "Qd", "2s", "3s"]


def test_create_a_paiute_table(gateway: Gateway) -> None:
    response = gateway.call("POST", "/v1/tables", json={"game": "paiute"})
    assert response.status_code == 201
    options = response.get_json()["table"]["options"]
    assert (options["ante"], options["turn_seconds"], options["max_reshuffles"]) == (1, 30, 2)
    assert options["max_players"] == 5
    bad = gateway.call("POST", "/v1/tables", json={"game": "paiute", "max_players": 6})
    assert bad.status_code == 422
    assert bad.get_json()["field"] == "max_players"
    bad = gateway.call("POST", "/v1/tables", json={"game": "paiute", "cards": 3})
    assert bad.status_code == 422


def test_a_deal_with_a_call_last_turns_and_a_showdown(rigged: tuple[Gateway, DeckQueue]) -> None:
    gateway, decks = rigged
    # 7s are wild; seat 2 draws the 7c and holds five kings; seat 3 draws 7d for 5-9 of hearts
    decks.rig([KINGS, HEARTS, DEALER], wild="7h", discard="Td", stock=["7c", "7d", "As"])
    table_id, (one, two, three) = paiute_table(gateway)
    transcript = Transcript(gateway, table_id)
    act(gateway, table_id, one, action="start")
    table = gateway.table(table_id, two)
    assert table["dealer"] == one.seat
    assert table["deal"]["wild_card"] == "7h"
    assert table["deal"]["discard_top"] == "Td"
    assert table["pending"] == {
        "action": "draw",
        "seats": [two.seat],
        "deadline": table["deadline"],
    }
    assert sorted(table["you"]["cards"]) == sorted(KINGS)
    assert table["pot"] == 3
    refused(gateway, table_id, three, "not_your_turn", action="draw", source="stock")
    refused(gateway, table_id, two, "must_draw_first", action="discard", card="2c")
    drew = act(gateway, table_id, two, action="draw", source="stock")
    assert drew["table"]["you"]["drawn"]["card"] == "7c"
    refused(gateway, table_id, two, "already_drawn", action="draw", source="stock")
    for viewer in (three, None):
        transcript.call(viewer, "GET", f"/v1/tables/{table_id}")
    refused(
        gateway,
        table_id,
        two,
        "cards_not_held",
        action="call",
        cards=["Kc", "Kd", "Kh", "Ks", "As"],
        discard="2c",
    )
    refused(
        gateway,
        table_id,
        two,
        "invalid_card",
        action="call",
        cards=["Kc", "Kd", "Kh", "Ks", "Zz"],
        discard="2c",
    )
    refused(
        gateway,
        table_id,
        two,
        "invalid_combination",
        action="call",
        cards=["Kc", "Kd", "Kh", "Ks"],
        discard="2c",
    )
    refused(gateway, table_id, two, "unsupported_action", action="declare", choice="in")
    called = transcript.call(
        two,
        "POST",
        f"/v1/tables/{table_id}/actions",
        json={"action": "call", "cards": ["kc", "kd", "kh", "ks", "7c"], "discard": "2c"},
    )
    assert called.status_code == 200, called.get_json()
    table = gateway.table(table_id)
    assert table["phase"] == "last_turns"
    assert table["pending"]["seats"] == [three.seat]
    act(gateway, table_id, three, action="draw", source="stock")
    laid = act(
        gateway, table_id, three, action="call", cards=["5h", "6h", "7d", "8h", "9h"], discard="3c"
    )
    assert laid["table"]["pending"]["seats"] == [one.seat]
    act(gateway, table_id, one, action="draw", source="stock")
    act(gateway, table_id, one, action="discard", card="As")
    table = gateway.table(table_id)
    assert table["phase"] == "between_deals"
    assert table["seats"][str(two.seat)]["stack"] == 52
    assert table["seats"][str(three.seat)]["stack"] == 49
    events = gateway.events(table_id)["events"]
    showdown = next(e for e in events if e["type"] == "showdown")["data"]["hands"]
    assert showdown[str(two.seat)]["category"] == "FIVE_OF_A_KIND"
    assert showdown[str(three.seat)]["category"] == "STRAIGHT_FLUSH"
    history = gateway.call("GET", f"/v1/tables/{table_id}/hands/1").get_json()
    started = next(e for e in history["events"] if e["type"] == "deal_started")
    commitment = started["data"]["commitment"]
    seen = set(opened_cards(history["fairness"], commitment).values())
    # to everyone, the places of the cards turned up; a discarded or laid-down card is
    # seen, but not where it came from (dealt, or drawn when)
    assert seen == {"7h", "Td"}
    assert history["wild_card"] == "7h"
    assert history["fairness"]["reshuffles"] == []
    for seat, own in ((one, {*DEALER, "As"}), (two, {*KINGS, "7c"}), (three, {*HEARTS, "7d"})):
        mine = gateway.call("GET", f"/v1/tables/{table_id}/hands/1", seat).get_json()
        assert set(opened_cards(mine["fairness"], commitment).values()) == seen | own
    for viewer in (one, two, three, None):
        transcript.call(viewer, "GET", f"/v1/tables/{table_id}/events")
        transcript.call(viewer, "GET", f"/v1/tables/{table_id}/hands/1")
    assert transcript.check() > 20


def test_the_dealer_calling_ends_the_deal_at_once(rigged: tuple[Gateway, DeckQueue]) -> None:
    gateway, decks = rigged
    # seat 2 is dealt first, then the dealer (seat 1)
    table_id, one, two = start_two_seats(
        gateway,
        decks,
        [["Qs", "Js", "4h", "5d", "6d"], ["2c", "3c", "4c", "5c", "9d"]],
        wild="8s",
        discard="Th",
        stock=["Ks", "6c"],
    )
    # seat 2 plays first and discards; then the dealer draws 6c for 2-6 of clubs
    act(gateway, table_id, two, action="draw", source="stock")
    refused(
        gateway,
        table_id,
        two,
        "no_combination",
        action="call",
        cards=["Qs", "Js", "Ks", "5d", "6d"],
        discard="4h",
    )
    act(gateway, table_id, two, action="discard", card="4h")
    act(gateway, table_id, one, action="draw", source="stock")
    act(gateway, table_id, one, action="call", cards=["2c", "3c", "4c", "5c", "6c"], discard="9d")
    table = gateway.table(table_id)
    assert table["phase"] == "between_deals"
    assert table["seats"][str(one.seat)]["stack"] == 51


def test_the_discard_rule_and_a_split_pot(rigged: tuple[Gateway, DeckQueue]) -> None:
    gateway, decks = rigged
    # two players each lay down a royal flush with a wild card: equal best split the pot
    decks.rig(
        [
            ["Ah", "Kh", "Qh", "Jh", "2c"],
            ["As", "Ks", "Qs", "Js", "3d"],
            ["4c", "5d", "6s", "8c", "9d"],
        ],
        wild="7c",
        discard="7d",
        stock=["7s", "Tc", "2h"],
    )
    table_id, (one, two, three) = paiute_table(gateway)
    act(gateway, table_id, one, action="start")
    act(gateway, table_id, two, action="draw", source="discard")
    refused(gateway, table_id, two, "cannot_discard_drawn", action="discard", card="7d")
    act(gateway, table_id, two, action="call", cards=["Ah", "Kh", "Qh", "Jh", "7d"], discard="2c")
    act(gateway, table_id, three, action="draw", source="stock")
    act(gateway, table_id, three, action="call", cards=["As", "Ks", "Qs", "Js", "7s"], discard="3d")
    act(gateway, table_id, one, action="draw", source="stock")
    act(gateway, table_id, one, action="discard", card="Tc")
    table = gateway.table(table_id)
    stacks = {seat: table["seats"][str(seat)]["stack"] for seat in (two.seat, three.seat)}
    # pot 3: the odd chip goes to the first winner from the dealer's left (seat 2)
    assert stacks == {two.seat: 51, three.seat: 50}
    assert table["pot"] == 0


def test_reshuffles_then_a_void_deal_carries_the_pot(gateway: Gateway) -> None:
    table_id, players = paiute_table(gateway, players=2, max_reshuffles=1)
    act(gateway, table_id, players[0], action="start")
    reshuffled = 0
    for _ in range(200):
        table = gateway.table(table_id)
        if table["phase"] != "playing":
            break
        seat = table["pending"]["seats"][0]
        player = next(p for p in players if p.seat == seat)
        drew = act(gateway, table_id, player, action="draw", source="stock")
        reshuffled += sum(1 for e in drew["events"] if e["type"] == "reshuffled")
        if drew["table"]["phase"] != "playing":
            break  # the stock ran out once more than the table allows
        card = drew["table"]["you"]["drawn"]["card"]
        act(gateway, table_id, player, action="discard", card=card)
    table = gateway.table(table_id)
    events = gateway.events(table_id)["events"]
    assert reshuffled == 1
    if any(e["type"] == "called" for e in events):  # pragma: no cover - nobody calls here
        pytest.fail("nobody called")
    assert [e["data"]["outcome"] for e in events if e["type"] == "deal_ended"] == ["void"]
    assert table["pot"] == 2
    assert chips(table) == 100
    # the reshuffle published a commitment; each seat's history opens the places it drew
    published = next(e for e in events if e["type"] == "reshuffled")["data"]
    path = f"/v1/tables/{table_id}/hands/1"
    spectator = gateway.call("GET", path).get_json()["fairness"]["reshuffles"]
    assert [(r["number"], r["commitment"], r["opened"]) for r in spectator] == [
        (1, published["commitment"], [])
    ]
    drawn_after: set[str] = set()
    for player in players:
        body = gateway.call("GET", path, player).get_json()
        history = HandHistory.from_json(body)
        report = verify_fairness(history)
        assert any(check.startswith("reshuffle 1: ") for check in report.checks)
        (proof,) = history.fairness.reshuffles
        assert len(proof.opened) >= 10  # about half of the 39 draws from the new stock
        drawn_after |= {opening.card for opening in proof.opened}
        forged = replace(proof.opened[0], card=proof.opened[1].card)
        tampered = replace(proof, opened=(forged, *proof.opened[1:]))
        with pytest.raises(FairnessError, match="reshuffle 1"):
            verify_fairness(
                replace(history, fairness=replace(history.fairness, reshuffles=(tampered,)))
            )
    assert len(drawn_after) == published["stock"]  # the two seats drew the whole stock


def test_a_missed_turn_is_played_by_the_server(gateway: Gateway) -> None:
    table_id, players = paiute_table(gateway, players=2, turn_seconds=1)
    act(gateway, table_id, players[0], action="start")
    first = gateway.table(table_id)["pending"]["seats"][0]
    cursor = 0
    seen: list[dict[str, Any]] = []
    while not any(e["type"] == "discarded" for e in seen):
        page = gateway.events(table_id, after=cursor, wait=3)
        seen += page["events"]
        cursor = page["next"]
    timeout = next(e for e in seen if e["type"] == "timeout")
    assert timeout["data"]["seat"] == first
    drawn = next(e for e in seen if e["type"] == "drew")
    assert drawn["data"]["source"] == "stock"
    assert "card" not in drawn["data"]  # a card from the stock stays private until discarded
    assert wait_for(lambda: gateway.table(table_id)["pending"]["seats"][0] != first)


def test_random_games_keep_cards_private_and_chips_whole(gateway: Gateway) -> None:
    rng = random.Random(11)
    # the outcomes below depend on the cards: deal them from a seed, not the OS
    gateway.app.extensions["cardroom.service"].changes.deck_source = seeded_decks(12)
    table_id, players = paiute_table(gateway, players=3, deal_pause_seconds=0, max_reshuffles=0)
    transcript = Transcript(gateway, table_id)
    act(gateway, table_id, players[0], action="start")

    def look() -> None:
        for viewer in [*players, None]:
            transcript.call(viewer, "GET", f"/v1/tables/{table_id}")
        assert chips(gateway.table(table_id)) == 150

    play_paiute_turns(gateway, table_id, players, 150, rng, send=transcript.call, after_turn=look)
    for viewer in [*players, None]:
        transcript.call(viewer, "GET", f"/v1/tables/{table_id}/events")
    for event in gateway.stream(table_id, players[1], blocks=60):
        transcript.add(players[1], event)
    assert gateway.table(table_id)["hand_number"] >= 2
    outcomes = {
        e["data"]["outcome"]
        for e in gateway.events(table_id)["events"]
        if e["type"] == "deal_ended"
    }
    assert "won" in outcomes  # the seeded run has calls, not only void deals
    assert transcript.check() > 200


@pytest.mark.parametrize(
    ("hand", "wild", "pile", "category", "description", "dealer_calls"),
    [
        # Twos wild: with 7s from the pile, four sixes and two sevens, not the five sixes
        # that would leave 7s out; the dealer's J-high straight flush beats them.
        (
            ["2c", "6d", "6h", "6s", "2s"],
            "2h",
            "7s",
            "FOUR_TWO",
            "Four sixes and two sevens",
            True,
        ),
        # Queens wild: with 9h from the pile, three pairs, not the 6-high straight flush
        # that would leave 9h out; the dealer does not call.
        (
            ["3s", "2s", "Qh", "Qd", "Qs"],
            "Qc",
            "9h",
            "TWO_TWO_TWO",
            "Three pairs, nines, threes and twos",
            False,
        ),
    ],
)
def test_six_cards_shown_after_a_draw_from_the_pile_are_a_six_card_combination(
    rigged: tuple[Gateway, DeckQueue],
    hand: list[str],
    wild: str,
    pile: str,
    category: str,
    description: str,
    dealer_calls: bool,
) -> None:
    gateway, decks = rigged
    dealer_hand = ["8c", "9c", "Tc", "Jc", "3d"]
    table_id, one, two = start_two_seats(
        gateway, decks, [hand, dealer_hand], wild=wild, discard=pile, stock=["7c", "4h"]
    )
    act(gateway, table_id, two, action="draw", source="discard")
    # the five-card combination is shown as five with the sixth discarded: not the pile's
    refused(gateway, table_id, two, "cannot_discard_drawn", action="call", cards=hand, discard=pile)
    called = act(gateway, table_id, two, action="call", cards=[*hand, pile], discard=None)
    claim = next(e for e in called["events"] if e["type"] == "called")["data"]
    assert (claim["category"], claim["description"]) == (category, description)
    act(gateway, table_id, one, action="draw", source="stock")
    if dealer_calls:
        flush = ["7c", "8c", "9c", "Tc", "Jc"]
        act(gateway, table_id, one, action="call", cards=flush, discard="3d")
    else:
        act(gateway, table_id, one, action="discard", card="7c")
    table = gateway.table(table_id)
    assert table["phase"] == "between_deals"
    showdown = next(e for e in gateway.events(table_id)["events"] if e["type"] == "showdown")
    shown = showdown["data"]["hands"][str(two.seat)]
    assert (shown["category"], shown["description"]) == (category, description)
    winner, loser = (one, two) if dealer_calls else (two, one)
    assert table["seats"][str(winner.seat)]["stack"] == 51
    assert table["seats"][str(loser.seat)]["stack"] == 49


def test_six_cards_with_no_six_card_combination_cannot_be_shown_whole(
    rigged: tuple[Gateway, DeckQueue],
) -> None:
    gateway, decks = rigged
    # A straight flush of five beside a stray: shown whole, six cards make no six-card
    # combination, so the call is refused; shown as five with the stray discarded, it counts.
    table_id, _, two = start_two_seats(
        gateway,
        decks,
        [["5h", "6h", "8h", "9h", "Ac"], ["Kd", "Qs", "4c", "3s", "Td"]],
        wild="7c",
        discard="Jc",
        stock=["7d", "2s"],
    )
    act(gateway, table_id, two, action="draw", source="stock")
    hand = ["5h", "6h", "8h", "9h", "Ac", "7d"]
    refused(gateway, table_id, two, "invalid_combination", action="call", cards=hand, discard=None)
    shown = ["5h", "6h", "7d", "8h", "9h"]
    called = act(gateway, table_id, two, action="call", cards=shown, discard="Ac")
    claim = next(e for e in called["events"] if e["type"] == "called")["data"]
    assert claim["description"] == "Straight flush, 9-high"


def test_evaluate_values_six_paiute_cards_as_the_rule_unless_asked(gateway: Gateway) -> None:
    def results(**body: Any) -> list[dict[str, Any]]:
        response = gateway.call("POST", "/v1/evaluate", json={"game": "paiute", **body})
        assert response.status_code == 200, response.get_json()
        return list(response.get_json()["results"])

    hands = ["9h 9d Th Jh 2c 2s", "2c 6d 6h 6s 2s 7s", "9h 9d 9s 9c 2d"]
    rule = [
        ("TWO_TWO_TWO", "Three pairs, jacks, tens and nines", None),
        ("FOUR_TWO", "Four sixes and two sevens", None),
        ("FIVE_OF_A_KIND", "Five of a kind, nines", None),
    ]
    for body in ({}, {"paiute_valuation": "six_card_combinations"}):
        got = results(wild_rank=2, hands=hands, **body)
        assert [(r["category"], r["description"], r["leftover"]) for r in got] == rule
    anything = results(wild_rank=2, hands=hands, paiute_valuation="best_of_any")
    assert [(r["category"], r["description"], r["leftover"]) for r in anything] == [
        ("STRAIGHT_FLUSH", "Straight flush, K-high", "9d"),
        ("FIVE_OF_A_KIND", "Five of a kind, sixes", "7s"),
        ("FIVE_OF_A_KIND", "Five of a kind, nines", None),
    ]
    refusals: list[dict[str, Any]] = [
        {"game": "guts3", "hands": ["Ah Kd Qc"], "paiute_valuation": "best_of_any"},
        {"game": "paiute", "wild_rank": 2, "hands": hands, "paiute_valuation": "best"},
    ]
    for body in refusals:
        bad = gateway.call("POST", "/v1/evaluate", json=body)
        assert bad.status_code == 422, bad.get_json()
        assert (bad.get_json()["code"], bad.get_json()["field"]) == (
            "invalid_field",
            "paiute_valuation",
        )
