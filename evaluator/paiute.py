"""Paiute winning combinations with a wild rank (docs/rules.md, "Winning combinations").

Every card of the wild rank is wild: it stands for any card, its own included, even for a
card the hand already holds. The other cards are natural.

A five-card hand is valued as a five-card combination. A six-card hand is valued by its
`Valuation`: under the rules (SIX_CARD_COMBINATIONS, the default) six cards shown are a
six-card combination or nothing, since a five-card combination is shown as five cards and
the sixth discarded under the pile rule; BEST_OF_ANY (for bulk callers asking what six
cards hold) takes the best five-card or six-card combination, with a leftover card when
it is a five-card one.

Strength is 0 for no winning combination, else (order << 16) | tiebreak, the tiebreak
packing the ranks that decide, in the order they decide, one 4-bit nibble each:
    6 five of a kind     its rank
    5 royal flush        nothing: all royal flushes tie
    4 straight flush     the top card (A-2-3-4-5 is 5-high; topped by the ace it is royal)
    3 four + two         the four, then the pair
    2 three + three      the higher three, then the lower
    1 two + two + two    the three pairs from the highest

The best combination is found by reasoning, not by trying wild assignments. A five-card
combination has five target cards (five of one rank, or a sequence of one suit); it can be
formed when the natural cards among its targets plus the wild cards reach five, because
then at most the one spare card of a six-card hand is left out. A six-card combination
uses all six cards: every natural card must fall in one of its groups, no group may hold
more natural cards than its size, and the wild cards fill the rest. A group no natural card
falls in is best given the highest rank no natural card has, so only the ranks present and
the few highest absent ones need trying.

Leftover rule, for a five-card combination taken from six cards (BEST_OF_ANY only): the
natural card that is not one of the combination's targets is left over; when every natural
card is a target, a wild card is spare, and the wild card with the lowest index is left
over. used holds the other five cards in the order of the hand. The combination's targets
are unique whenever it is the best one (two suits can share a straight flush only with four
wild cards, and then five of a kind is better), so the rule never has to choose between
targets. Under SIX_CARD_COMBINATIONS a six-card hand uses all six cards or none.

Descriptions: "Five of a kind, kings", "Royal flush", "Straight flush, 9-high" (short
labels 2..10, J, Q, K, A for the top card), "Four queens and two sevens", "Three aces and
three fours", "Three pairs, kings, nines and twos", "No winning combination".
"""

import enum
import functools
import itertools
import operator
from collections.abc import Sequence
from typing import Final

from evaluator.cards import RANK_LABELS, RANK_NAMES, HandError, check_hand, rank_of, suit_of
from evaluator.hands import Category, PaiuteValue

ORDER_SHIFT: Final = 16
TWO_TWO_TWO: Final = 1
THREE_THREE: Final = 2
FOUR_TWO: Final = 3
STRAIGHT_FLUSH: Final = 4
ROYAL_FLUSH: Final = 5
FIVE_OF_A_KIND: Final = 6

# The Category of each order, index 0 being no winning combination.
CATEGORY_BY_ORDER: Final = (
    Category.NO_COMBINATION,
    Category.TWO_TWO_TWO,
    Category.THREE_THREE,
    Category.FOUR_TWO,
    Category.STRAIGHT_FLUSH,
    Category.ROYAL_FLUSH,
    Category.FIVE_OF_A_KIND,
)


class Valuation(enum.IntEnum):
    """How a six-card hand is valued; the values are the wire enum numbers."""

    # docs/rules.md: six cards shown are valued only as a six-card combination.
    SIX_CARD_COMBINATIONS = 1
    # The best of any combination, five of the six cards or all six.
    BEST_OF_ANY = 2


_RANKS_DESCENDING: Final = tuple(range(14, 1, -1))
# Bit (rank - 2) set for each rank of the sequence topped by the key; the ace (bit 12)
# also sits below the two in the 5-high sequence.
_SEQUENCE_MASKS: Final = {
    top: (0b1111 | 1 << 12) if top == 5 else 0b11111 << (top - 6) for top in range(14, 4, -1)
}
# Group sizes of each six-card combination, in the order their ranks decide.
_SIX_CARD_GROUPS: Final = (
    (FOUR_TWO, (4, 2)),
    (THREE_THREE, (3, 3)),
    (TWO_TWO_TWO, (2, 2, 2)),
)


def rank_paiute(
    cards: Sequence[int],
    wild_rank: int,
    valuation: Valuation = Valuation.SIX_CARD_COMBINATIONS,
) -> PaiuteValue:
    """Rank a 5- or 6-card Paiute hand in which every card of wild_rank is wild."""
    check_hand(cards, (5, 6))
    check_wild_rank(wild_rank)
    hand = tuple(int(card) for card in cards)
    rank_counts = [0] * 15
    suit_masks = [0] * 4
    wild_count = 0
    for card in hand:
        rank = rank_of(card)
        if rank == wild_rank:
            wild_count += 1
        else:
            rank_counts[rank] += 1
            suit_masks[suit_of(card)] |= 1 << (rank - 2)
    strength = group_strength(rank_counts, wild_count, len(hand), valuation)
    flush_suit = -1
    if takes_five(len(hand), valuation):
        for suit, mask in enumerate(suit_masks):
            flush = flush_strength(mask, wild_count)
            if flush > strength:
                strength, flush_suit = flush, suit
    order = strength >> ORDER_SHIFT
    used, leftover = hand, None
    if strength == 0:
        used = ()
    elif len(hand) == 6 and order >= STRAIGHT_FLUSH:
        leftover = _leftover(hand, wild_rank, strength, flush_suit)
        used = tuple(card for card in hand if card != leftover)
    category = CATEGORY_BY_ORDER[order]
    return PaiuteValue(strength, category, describe_paiute(strength), used, leftover)


# docs/rules.md: the turned-up card of the wild rank stays out of play, so a hand (or the
# hands of a showdown together) holds at most three cards of that rank
LIVE_WILD_CARDS: Final = 3


def too_many_wild_cards(wild_rank: int, holder: str = "holds") -> str:
    """Why a hand holding all four cards of the wild rank is refused."""
    return (
        f"{holder} all four {RANK_NAMES[wild_rank][1]}, the wild rank; the turned-up card is"
        f" out of play, so at most {LIVE_WILD_CARDS} are live"
    )


def takes_five(size: int, valuation: Valuation) -> bool:
    """Whether a hand of this size is valued by its five-card combinations as well."""
    return size == 5 or valuation is Valuation.BEST_OF_ANY


def describe_paiute(strength: int) -> str:
    """Return the description of any Paiute hand of this strength."""
    description = _descriptions().get(strength)
    if description is None:
        raise ValueError(f"{strength} is not the strength of a Paiute hand")
    return description


def check_wild_rank(wild_rank: int) -> None:
    """Raise HandError unless wild_rank is a rank, 2..14."""
    try:
        rank = operator.index(wild_rank)
    except TypeError:
        rank = 0
    if not 2 <= rank <= 14:
        raise HandError(f"wild rank {wild_rank} is out of range 2..14")


def group_strength(
    rank_counts: Sequence[int],
    wild_count: int,
    size: int,
    valuation: Valuation = Valuation.SIX_CARD_COMBINATIONS,
) -> int:
    """Return the best five of a kind or six-card combination, or 0, from rank counts.

    rank_counts[rank] counts the natural cards of each rank 2..14; size is 5 or 6. Five of
    a kind counts only where `takes_five` says five-card combinations do.
    """
    present = [rank for rank in _RANKS_DESCENDING if rank_counts[rank]]
    absent = [rank for rank in _RANKS_DESCENDING if not rank_counts[rank]]
    if takes_five(size, valuation):
        for rank in sorted(present + absent[:1], reverse=True):
            if rank_counts[rank] + wild_count >= 5:
                return FIVE_OF_A_KIND << ORDER_SHIFT | rank
    if size != 6:
        return 0
    for order, group_sizes in _SIX_CARD_GROUPS:
        ranks = _best_group_ranks(rank_counts, present, absent, group_sizes)
        if ranks is not None:
            return order << ORDER_SHIFT | _nibbles(ranks)
    return 0


def flush_strength(rank_mask: int, wild_count: int) -> int:
    """Return the best straight or royal flush in one suit, or 0.

    rank_mask has bit (rank - 2) set for each natural card of the suit in the hand.
    """
    for top, sequence in _SEQUENCE_MASKS.items():
        if (rank_mask & sequence).bit_count() + wild_count >= 5:
            if top == 14:
                return ROYAL_FLUSH << ORDER_SHIFT
            return STRAIGHT_FLUSH << ORDER_SHIFT | top
    return 0


def _best_group_ranks(
    rank_counts: Sequence[int], present: list[int], absent: list[int], group_sizes: tuple[int, ...]
) -> tuple[int, ...] | None:
    """Return the best distinct ranks for groups of these sizes holding all six cards."""
    if len(present) > len(group_sizes):
        return None
    candidates = sorted(present + absent[: len(group_sizes)], reverse=True)
    # Candidates run from the highest, so permutations come best first; with groups of
    # equal size the first that fits is also the one written from the highest.
    for ranks in itertools.permutations(candidates, len(group_sizes)):
        if all(rank in ranks for rank in present) and all(
            rank_counts[rank] <= group_size
            for rank, group_size in zip(ranks, group_sizes, strict=True)
        ):
            return ranks
    return None


def _leftover(hand: tuple[int, ...], wild_rank: int, strength: int, flush_suit: int) -> int:
    """Return the card a six-card hand leaves out of its five-card combination."""
    if strength >> ORDER_SHIFT == FIVE_OF_A_KIND:
        rank = strength & 0xF
        strays = [card for card in hand if rank_of(card) not in (rank, wild_rank)]
    else:
        top = 14 if strength >> ORDER_SHIFT == ROYAL_FLUSH else strength & 0xF
        sequence = _SEQUENCE_MASKS[top]
        strays = [
            card
            for card in hand
            if rank_of(card) != wild_rank
            and (suit_of(card) != flush_suit or not sequence >> (rank_of(card) - 2) & 1)
        ]
    if strays:
        return strays[0]
    return min(card for card in hand if rank_of(card) == wild_rank)


def _nibbles(ranks: Sequence[int]) -> int:
    packed = 0
    for rank in ranks:
        packed = packed << 4 | rank
    return packed


@functools.cache
def _descriptions() -> dict[int, str]:
    """Map every strength a Paiute hand can have to its description."""
    descriptions = {0: "No winning combination", ROYAL_FLUSH << ORDER_SHIFT: "Royal flush"}
    for rank in _RANKS_DESCENDING:
        descriptions[FIVE_OF_A_KIND << ORDER_SHIFT | rank] = (
            f"Five of a kind, {RANK_NAMES[rank][1]}"
        )
    for top in range(5, 14):
        descriptions[STRAIGHT_FLUSH << ORDER_SHIFT | top] = (
            f"Straight flush, {RANK_LABELS[top]}-high"
        )
    for four, two in itertools.permutations(_RANKS_DESCENDING, 2):
        descriptions[FOUR_TWO << ORDER_SHIFT | _nibbles((four, two))] = (
            f"Four {RANK_NAMES[four][1]} and two {RANK_NAMES[two][1]}"
        )
    for high, low in itertools.combinations(_RANKS_DESCENDING, 2):
        descriptions[THREE_THREE << ORDER_SHIFT | _nibbles((high, low))] = (
            f"Three {RANK_NAMES[high][1]} and three {RANK_NAMES[low][1]}"
        )
    for high, middle, low in itertools.combinations(_RANKS_DESCENDING, 3):
        descriptions[TWO_TWO_TWO << ORDER_SHIFT | _nibbles((high, middle, low))] = (
            f"Three pairs, {RANK_NAMES[high][1]}, {RANK_NAMES[middle][1]} and {RANK_NAMES[low][1]}"
        )
    return descriptions
