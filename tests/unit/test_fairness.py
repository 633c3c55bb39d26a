"""The fairness proof: one commitment over 52 salted leaves, opened card by card."""

from __future__ import annotations

import hashlib
import random
from typing import Any

from api.games import fairness
from api.games.common import FULL_DECK

SECRET = "5f0c2a9e8d7b6a5f4e3d2c1b0a998877"


def shuffled(seed: int) -> list[str]:
    cards = list(FULL_DECK)
    random.Random(seed).shuffle(cards)
    return cards


def by_hand(cards: list[str], secret: str) -> tuple[str, list[str], list[str]]:
    """The commitment, leaves and salts, computed from the formula's words alone."""
    stream = hashlib.shake_256(f"cardroom:card-salts:{secret}".encode()).hexdigest(52 * 16)
    salts = [stream[32 * i : 32 * (i + 1)] for i in range(52)]
    leaves = [
        hashlib.sha256(f"{i}:{card}:{salts[i]}".encode()).hexdigest()
        for i, card in enumerate(cards)
    ]
    return hashlib.sha256(",".join(leaves).encode()).hexdigest(), leaves, salts


def test_the_commitment_follows_the_published_formula() -> None:
    for seed in range(20):
        cards = shuffled(seed)
        commitment, leaves, salts = by_hand(cards, SECRET)
        assert fairness.commitment(cards, SECRET) == commitment
        assert fairness.leaves(cards, SECRET) == leaves
        assert fairness.card_salts(SECRET) == salts


def test_the_commitment_binds_every_card_to_its_place() -> None:
    cards = shuffled(1)
    commitment = fairness.commitment(cards, SECRET)
    for i in range(51):
        swapped = [*cards]
        swapped[i], swapped[i + 1] = swapped[i + 1], swapped[i]
        assert fairness.commitment(swapped, SECRET) != commitment
    assert fairness.commitment(cards, SECRET[:-1] + "0") != commitment


def test_salts_differ_by_place_and_by_deal() -> None:
    salts = set(fairness.card_salts(SECRET))
    other = set(fairness.card_salts("00" * 16))
    assert len(salts) == 52
    assert not salts & other
    assert fairness.reshuffle_key(SECRET) not in salts
    assert all(len(salt) == 32 for salt in salts)


def test_the_proof_opens_exactly_the_cards_seen() -> None:
    cards = shuffled(2)
    commitment, leaves, salts = by_hand(cards, SECRET)
    seen = {cards[3], cards[17], cards[51], "not a card", "Zz"}
    proof = fairness.proof(cards, SECRET, seen)
    assert proof["commitment"] == commitment
    assert proof["leaves"] == leaves
    assert proof["opened"] == [
        {"position": i, "card": cards[i], "salt": salts[i]} for i in (3, 17, 51)
    ]
    assert proof["formula"] == fairness.FORMULA
    assert "reshuffle_key" not in proof
    text = str(proof)
    hidden = set(cards) - seen
    assert not any(f"'{card}'" in text for card in hidden)
    assert SECRET not in text
    assert fairness.proof(cards, SECRET, set())["opened"] == []


def test_a_paiute_proof_proves_each_reshuffle_and_opens_the_readers_draws() -> None:
    cards = shuffled(3)
    first, second = cards[20:30], cards[30:36]
    proof = fairness.proof(cards, SECRET, {cards[10]}, [first, second], {1: [0, 3], 2: [9]})
    one, two = proof["reshuffles"]
    stream = hashlib.shake_256(f"cardroom:reshuffle-1-salts:{SECRET}".encode()).hexdigest(160)
    salts = [stream[32 * j : 32 * (j + 1)] for j in range(10)]
    leaves = [
        hashlib.sha256(f"r1:{j}:{card}:{salts[j]}".encode()).hexdigest()
        for j, card in enumerate(first)
    ]
    assert one == {
        "number": 1,
        "commitment": hashlib.sha256(",".join(leaves).encode()).hexdigest(),
        "leaves": leaves,
        "opened": [{"position": j, "card": first[j], "salt": salts[j]} for j in (0, 3)],
    }
    assert one["commitment"] == fairness.reshuffle_commitment(first, SECRET, 1)
    assert two["number"] == 2
    assert two["opened"] == []  # place 9 is past the end of a stock of 6
    assert "reshuffle_key" not in proof
    assert fairness.reshuffle_key(SECRET) not in str(proof)
    assert "reshuffles" not in fairness.proof(cards, SECRET, set())


def test_the_draws_a_reader_saw_from_each_reshuffled_stock() -> None:
    def drew(seat: int, card: str | None = None) -> list[dict[str, Any]]:
        public = {"type": "drew", "data": {"seat": seat, "source": "stock"}}
        own = {"type": "drew_card", "data": {"seat": seat, "card": card}}
        return [public, own] if card else [public]

    events: list[Any] = [  # abbreviated: the fields the reader reads
        *drew(1, "2c"),  # the deck's stock: not a reshuffle's
        {"type": "reshuffled", "data": {"number": 1, "stock": 5}},
        *drew(1, "3c"),
        *drew(2),
        {"type": "drew", "data": {"seat": 1, "source": "discard", "card": "9d"}},
        *drew(1, "4c"),
        {"type": "reshuffled", "data": {"number": 2, "stock": 3}},
        *drew(2),
        *drew(1, "5c"),
    ]
    assert fairness.stock_draws_seen(events) == {1: [0, 2], 2: [1]}


def test_an_unopened_leaf_cannot_be_matched_to_a_card_without_its_salt() -> None:
    cards = shuffled(4)
    leaves = fairness.leaves(cards, SECRET)
    guesses = {fairness.leaf(0, card, "") for card in FULL_DECK}
    guesses |= {fairness.leaf(0, card, SECRET) for card in FULL_DECK}
    assert leaves[0] not in guesses


def test_the_places_opened_are_those_of_cards_seen_coming_off_the_deck() -> None:
    events: list[Any] = [  # abbreviated: the fields the reader reads
        {"type": "deal_started", "data": {"players": [1, 2], "cards": 3, "commitment": "ab"}},
        {"type": "dealt", "data": {"players": [1, 2], "cards": 5}},
        {"type": "cards_dealt", "data": {"seat": 1, "cards": ["Ah", "Kd", "2c"]}},
        {"type": "wild_card", "data": {"card": "7h", "rank": 7}},
        {"type": "discard_started", "data": {"card": "8h"}},
        {"type": "drew_card", "data": {"seat": 1, "card": "Qs"}},
        {"type": "drew", "data": {"seat": 2, "source": "discard", "card": "Td"}},
        {"type": "discarded", "data": {"seat": 2, "card": "4d"}},
        {"type": "called", "data": {"seat": 2, "cards": ["9s", "9c"], "discard": "3s"}},
        {"type": "left", "data": {"seat": 3, "name": "Qs", "reason": "left"}},
        {"type": "reshuffled", "data": {"number": 1, "stock": 9}},
        {"type": "drew_card", "data": {"seat": 1, "card": "4d"}},
        {
            "type": "showdown",
            "data": {"reason": "showdown", "hands": {"1": {"cards": ["Jc"]}, "ghost": {}}},
        },
    ]
    # Paiute: discards, shown and reshuffled cards were seen, not where they came from
    assert fairness.cards_off_the_deck(events, "paiute") == {"Ah", "Kd", "2c", "7h", "8h", "Qs"}
    # Guts: the hands shown at a showdown are the hands as dealt
    guts = fairness.cards_off_the_deck(events, "guts")
    assert guts == {"Ah", "Kd", "2c", "7h", "8h", "Qs", "Jc"}
    assert fairness.cards_off_the_deck([], "guts") == set()
