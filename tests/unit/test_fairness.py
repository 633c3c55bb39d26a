"""The fairness proof: one commitment over 52 salted leaves, opened card by card."""

from __future__ import annotations

import hashlib
import random

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


def test_a_paiute_proof_gives_the_reshuffle_key() -> None:
    cards = shuffled(3)
    proof = fairness.proof(cards, SECRET, {cards[10]}, reshuffles=True)
    expected = hashlib.shake_256(f"cardroom:reshuffle:{SECRET}".encode()).hexdigest(16)
    assert proof["reshuffle_key"] == expected


def test_an_unopened_leaf_cannot_be_matched_to_a_card_without_its_salt() -> None:
    cards = shuffled(4)
    leaves = fairness.leaves(cards, SECRET)
    guesses = {fairness.leaf(0, card, "") for card in FULL_DECK}
    guesses |= {fairness.leaf(0, card, SECRET) for card in FULL_DECK}
    assert leaves[0] not in guesses


def test_cards_are_found_in_the_fields_that_hold_cards() -> None:
    events = [
        {"type": "deal_started", "data": {"players": [1, 2], "cards": 3, "commitment": "ab"}},
        {"type": "dealt", "data": {"players": [1, 2], "cards": 5}},
        {"type": "cards_dealt", "data": {"seat": 1, "cards": ["Ah", "Kd", "2c"]}},
        {"type": "wild_card", "data": {"card": "7h", "rank": "7"}},
        {"type": "drew", "data": {"seat": 2, "source": "discard", "card": "Td"}},
        {"type": "called", "data": {"seat": 2, "cards": ["9s", "9c"], "discard": "3s"}},
        {"type": "left", "data": {"seat": 3, "name": "Qs", "reason": "left"}},
        {
            "type": "showdown",
            "data": {"reason": "showdown", "hands": {"1": {"cards": ["Jc"]}, "ghost": {}}},
        },
        {"type": "declared", "data": {"seat": 1}},
    ]
    assert fairness.cards_in(events) == {"Ah", "Kd", "2c", "7h", "Td", "9s", "9c", "3s", "Jc"}
    assert fairness.cards_in([]) == set()
