"""Guts hand ranking for 2- and 3-card hands (docs/rules.md, "Hand ranking").

Strength is (category << 12) | tiebreak. The category is the Category value itself, since
the wire numbers of the Guts categories run in ranking order (HIGH_CARD 1 .. STRAIGHT_FLUSH
6). The tiebreak packs the ranks that decide, in the order they decide, one 4-bit nibble
each, the first in the most significant place:
    straight flush, straight   the top card (A-2-3 counts as 3-high, A-K-Q as A-high)
    three of a kind            its rank
    flush, high card           the three ranks from the highest (two ranks with 2 cards)
    pair                       the pair, then the odd card (3 cards only)
Suits never break ties, so equal strengths tie.

Descriptions name grouped cards with words and single cards with short labels (2..10, J,
Q, K, A): "Straight flush, 7-high", "Three queens", "Straight, 3-high", "Flush, K-J-6",
"Pair of kings, 9 kicker", "A-K-8 high"; with two cards "Pair of aces", "A-9 high".
"""

import functools
import itertools
from collections.abc import Sequence
from typing import Final

from evaluator.cards import RANK_LABELS, RANK_NAMES, check_hand, rank_of, suit_of
from evaluator.hands import Category, HandValue

_CATEGORY_SHIFT: Final = 12
_RANKS: Final = range(2, 15)


def rank_guts2(cards: Sequence[int]) -> HandValue:
    """Rank a 2-card Guts hand."""
    check_hand(cards, (2,))
    high, low = sorted((rank_of(card) for card in cards), reverse=True)
    category, deciding = _classify2(high, low)
    return _value(2, category, deciding)


def rank_guts3(cards: Sequence[int]) -> HandValue:
    """Rank a 3-card Guts hand."""
    check_hand(cards, (3,))
    high, middle, low = sorted((rank_of(card) for card in cards), reverse=True)
    suited = len({suit_of(card) for card in cards}) == 1
    category, deciding = _classify3(high, middle, low, suited)
    return _value(3, category, deciding)


def describe_guts(cards_per_hand: int, strength: int) -> str:
    """Return the description of any Guts hand of this size and strength."""
    description = _descriptions(cards_per_hand).get(strength)
    if description is None:
        raise ValueError(f"{strength} is not the strength of a {cards_per_hand}-card Guts hand")
    return description


def _classify2(high: int, low: int) -> tuple[Category, tuple[int, ...]]:
    if high == low:
        return Category.PAIR, (high,)
    return Category.HIGH_CARD, (high, low)


def _classify3(high: int, middle: int, low: int, suited: bool) -> tuple[Category, tuple[int, ...]]:
    if high == low:
        return Category.THREE_OF_A_KIND, (high,)
    top = _sequence_top(high, middle, low)
    if top:
        return (Category.STRAIGHT_FLUSH if suited else Category.STRAIGHT), (top,)
    if suited:
        return Category.FLUSH, (high, middle, low)
    if high == middle:
        return Category.PAIR, (high, low)
    if middle == low:
        return Category.PAIR, (middle, high)
    return Category.HIGH_CARD, (high, middle, low)


def _sequence_top(high: int, middle: int, low: int) -> int:
    """Return the top card of a 3-card sequence given ranks from the highest, else 0."""
    if high - middle == 1 and middle - low == 1:
        return high
    # The ace may also sit below the two, but never between the king and the two.
    if (high, middle, low) == (14, 3, 2):
        return 3
    return 0


def _value(cards_per_hand: int, category: Category, deciding: tuple[int, ...]) -> HandValue:
    strength = _encode(category, deciding)
    return HandValue(strength, category, describe_guts(cards_per_hand, strength))


def _encode(category: Category, deciding: tuple[int, ...]) -> int:
    tiebreak = 0
    for rank in deciding:
        tiebreak = tiebreak << 4 | rank
    return int(category) << _CATEGORY_SHIFT | tiebreak


def _describe(category: Category, deciding: tuple[int, ...]) -> str:
    labels = [RANK_LABELS[rank] for rank in deciding]
    first = deciding[0]
    match category:
        case Category.STRAIGHT_FLUSH:
            return f"Straight flush, {labels[0]}-high"
        case Category.THREE_OF_A_KIND:
            return f"Three {RANK_NAMES[first][1]}"
        case Category.STRAIGHT:
            return f"Straight, {labels[0]}-high"
        case Category.FLUSH:
            return "Flush, " + "-".join(labels)
        case Category.PAIR if len(deciding) == 2:
            return f"Pair of {RANK_NAMES[first][1]}, {labels[1]} kicker"
        case Category.PAIR:
            return f"Pair of {RANK_NAMES[first][1]}"
        case _:
            return "-".join(labels) + " high"


@functools.cache
def _descriptions(cards_per_hand: int) -> dict[int, str]:
    """Map every strength a hand of this size can have to its description."""
    classified: list[tuple[Category, tuple[int, ...]]] = []
    if cards_per_hand == 2:
        for high, low in itertools.combinations_with_replacement(reversed(_RANKS), 2):
            classified.append(_classify2(high, low))
    elif cards_per_hand == 3:
        for high, middle, low in itertools.combinations_with_replacement(reversed(_RANKS), 3):
            classified.append(_classify3(high, middle, low, suited=False))
            if high > middle > low:
                classified.append(_classify3(high, middle, low, suited=True))
    return {
        _encode(category, deciding): _describe(category, deciding)
        for category, deciding in classified
    }
