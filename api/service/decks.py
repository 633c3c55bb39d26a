"""Table ids and shuffled decks: what a new table and a new deal are made from."""

from __future__ import annotations

import re
import secrets
import struct
from collections.abc import Iterator
from typing import TypeVar

from api.games.common import FULL_DECK, Deck


def shuffled_deck() -> Deck:
    """A fresh deck, shuffled from the operating system's secure random source."""
    cards = list(FULL_DECK)
    secure_shuffle(cards)
    return Deck(tuple(cards), secrets.token_hex(16))


_WORD = 1 << 64
Item = TypeVar("Item")


def secure_shuffle(items: list[Item]) -> None:
    """Shuffle `items` in place (Fisher-Yates), every order equally likely.

    Each swap takes a 64-bit word of one read from the secure source, and a word that
    would favour some places (at or past the largest multiple of the span) is drawn
    again: `SystemRandom.shuffle` asks the operating system once a card, which cost a
    deal about 70 µs more.
    """
    words = _secure_words(len(items))
    for last in range(len(items) - 1, 0, -1):
        span = last + 1
        fair = _WORD - _WORD % span
        word = next(words)
        while word >= fair:
            word = next(words)
        other = word % span
        items[last], items[other] = items[other], items[last]


def _secure_words(count: int) -> Iterator[int]:
    """64-bit words from the secure source, read `count` at a time."""
    while True:
        yield from struct.unpack(f"<{count}Q", secrets.token_bytes(8 * count))


# what new_table_id makes (and a little more, for ids of other lengths)
TABLE_ID = re.compile(r"[0-9a-f]{1,64}")


def new_table_id() -> str:
    """A short random table id, safe in a URL and a Redis hash tag."""
    return secrets.token_hex(8)
