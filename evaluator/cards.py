"""Cards as the 0..51 indexes used on the wire, and their text form.

index = (rank - 2) * 4 + suit, rank 2..14 (14 is the ace), suit 0 clubs, 1 diamonds,
2 hearts, 3 spades: 2c is 0, 2d is 1, 3c is 4, As is 51. Text is a rank (2-9, T or 10,
J, Q, K, A) followed by a suit (c, d, h, s), in either case: "Ah", "10c", "td".
"""

import operator
import re
from collections.abc import Collection, Mapping, Sequence
from typing import Final

RANK_CHARS: Final = "23456789TJQKA"
SUIT_CHARS: Final = "cdhs"

# Singular and plural word for each rank, for descriptions such as "Pair of sixes".
RANK_NAMES: Final[Mapping[int, tuple[str, str]]] = {
    2: ("two", "twos"),
    3: ("three", "threes"),
    4: ("four", "fours"),
    5: ("five", "fives"),
    6: ("six", "sixes"),
    7: ("seven", "sevens"),
    8: ("eight", "eights"),
    9: ("nine", "nines"),
    10: ("ten", "tens"),
    11: ("jack", "jacks"),
    12: ("queen", "queens"),
    13: ("king", "kings"),
    14: ("ace", "aces"),
}

# Short label of each rank for descriptions such as "A-K-8 high"; people write 10, not T.
RANK_LABELS: Final[Mapping[int, str]] = {
    rank: "10" if char == "T" else char for rank, char in enumerate(RANK_CHARS, start=2)
}

_RANK_BY_TEXT: Final[Mapping[str, int]] = {
    **{char.lower(): rank for rank, char in enumerate(RANK_CHARS, start=2)},
    "10": 10,
}
_CARD_SEPARATORS: Final = re.compile(r"[\s,]+")


class CardError(ValueError):
    """A card written as text that is not a card."""


class HandError(ValueError):
    """A hand that is not a valid hand; hand_index names the hand within a batch."""

    def __init__(self, message: str, hand_index: int | None = None) -> None:
        super().__init__(message)
        self.hand_index = hand_index


def parse_card(text: str) -> int:
    """Return the index of a card written as text, such as "Ah", "10c" or "td"."""
    if not isinstance(text, str):
        raise CardError(f"a card must be text such as 'Ah', got {text!r}")
    cleaned = text.strip()
    if not cleaned.isascii():
        # str.lower() folds look-alikes such as the Kelvin sign into "k"
        raise CardError(f"unknown card {cleaned!r}")
    rank = _RANK_BY_TEXT.get(cleaned[:-1].lower())
    suit = SUIT_CHARS.find(cleaned[-1:].lower()) if cleaned else -1
    if rank is None or suit < 0:
        raise CardError(f"unknown card {cleaned!r}")
    return (rank - 2) * 4 + suit


def parse_cards(text: str | Sequence[str]) -> tuple[int, ...]:
    """Return the indexes of cards given as "Ah Kd 10c", "Ah,Kd" or a sequence of card texts."""
    if isinstance(text, str):
        return tuple(parse_card(part) for part in _CARD_SEPARATORS.split(text) if part)
    return tuple(parse_card(part) for part in text)


def card_text(index: int) -> str:
    """Return the canonical text of a card index, such as "Ah", "Td" or "2c"."""
    if not 0 <= index <= 51:
        raise CardError(f"unknown card index {index}")
    return RANK_CHARS[index // 4] + SUIT_CHARS[index % 4]


def rank_of(index: int) -> int:
    """Return the rank (2..14, ace 14) of a card index 0..51."""
    return index // 4 + 2


def suit_of(index: int) -> int:
    """Return the suit (0 clubs, 1 diamonds, 2 hearts, 3 spades) of a card index 0..51."""
    return index % 4


def check_hand(cards: Sequence[int], sizes: Collection[int]) -> None:
    """Raise HandError unless cards are distinct card indexes and their count is one of sizes."""
    seen: set[int] = set()
    for card in cards:
        # operator.index accepts numpy integers as well and rejects floats and text.
        try:
            index = operator.index(card)
        except TypeError:
            raise HandError(f"unknown card index {card!r}") from None
        if not 0 <= index <= 51:
            raise HandError(f"unknown card index {index}")
        if index in seen:
            raise HandError(f"duplicate card {card_text(index)}")
        seen.add(index)
    if len(cards) not in sizes:
        count = len(cards)
        raise HandError(f"{count} card{'' if count == 1 else 's'}, expected {_either(sizes)}")


def _either(sizes: Collection[int]) -> str:
    words = [str(size) for size in sorted(sizes)]
    if len(words) < 2:
        return "".join(words) or "no cards"
    return ", ".join(words[:-1]) + " or " + words[-1]
