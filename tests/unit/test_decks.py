"""The production deck source: every deal a permutation of the full deck."""

from __future__ import annotations

from api.games.common import FULL_DECK
from api.service.decks import secure_shuffle, shuffled_deck


def test_a_shuffled_deck_is_the_full_deck_in_some_order_with_a_fresh_salt() -> None:
    decks = [shuffled_deck() for _ in range(200)]
    assert all(sorted(deck.cards) == sorted(FULL_DECK) for deck in decks)
    assert len({deck.cards for deck in decks}) == len(decks)
    assert len({deck.salt for deck in decks}) == len(decks)
    assert all(len(deck.salt) == 32 for deck in decks)


def test_the_shuffle_reaches_every_order() -> None:
    seen = set()
    for _ in range(600):  # each of six orders is missed with a chance of (5/6)^600
        items = ["a", "b", "c"]
        secure_shuffle(items)
        seen.add(tuple(items))
    assert len(seen) == 6
    empty: list[str] = []
    secure_shuffle(empty)
    assert empty == []
