"""The value of a ranked hand, shared by the Guts and Paiute evaluators."""

import enum
from dataclasses import dataclass


class Category(enum.IntEnum):
    """Hand categories; the values are the wire enum numbers."""

    # Guts, in Guts order from worst to best (STRAIGHT_FLUSH is Paiute's as well).
    HIGH_CARD = 1
    PAIR = 2
    FLUSH = 3
    STRAIGHT = 4
    THREE_OF_A_KIND = 5
    STRAIGHT_FLUSH = 6
    # Paiute.
    NO_COMBINATION = 7
    TWO_TWO_TWO = 8
    THREE_THREE = 9
    FOUR_TWO = 10
    ROYAL_FLUSH = 11
    FIVE_OF_A_KIND = 12


@dataclass(frozen=True, slots=True)
class HandValue:
    """A ranked Guts hand: higher strength wins, equal strength ties."""

    strength: int
    category: Category
    description: str


@dataclass(frozen=True, slots=True)
class PaiuteValue:
    """A ranked Paiute hand and the cards it shows.

    used holds the cards that form the combination, in the order of the hand; leftover is
    the card left out when a five-card combination is taken from six cards, else None.
    """

    strength: int
    category: Category
    description: str
    used: tuple[int, ...]
    leftover: int | None
