"""Vectorised ranking of many hands at once, agreeing with the scalar evaluators hand by hand.

Every table here is built once, lazily, from the scalar functions of evaluator.guts and
evaluator.paiute, so both paths share one definition of the rules.

Guts: a direct table over every ordered tuple of card indexes (52**2 or 52**3 entries),
indexed by c0 * 2704 + c1 * 52 + c2, so the cards need no sorting.

Paiute: the best of two table lookups per hand (one for a six-card hand valued, as the
rules value six cards shown, only as a six-card combination: `Valuation`).
- Groups (five of a kind and the six-card combinations) depend only on the multiset of
  ranks with every wild card written as a fourteenth symbol. A sorting network orders the
  symbols of each hand and their combinadic index (the sum of C(s_i + i, i + 1)) addresses
  a table over all multisets of 5 or 6 of the 14 symbols.
- Flushes depend, per suit, on the 13-bit mask of natural ranks and the wild count k. Each
  card adds its rank bit to its suit's 16-bit field of a 64-bit word, and each wild card
  adds 1 << 13 to every field, so a field read as a number is k << 13 | mask: the index
  of the flush table. Natural cards are distinct, so adding their bits is or-ing them.
Leftovers follow the scalar rule (evaluator.paiute): the natural card that is not one of
the combination's targets, else the wild card with the lowest index.
"""

import functools
import itertools
import math
from collections.abc import Collection
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from evaluator.cards import HandError, check_hand
from evaluator.guts import rank_guts2, rank_guts3
from evaluator.paiute import (
    CATEGORY_BY_ORDER,
    FIVE_OF_A_KIND,
    ORDER_SHIFT,
    ROYAL_FLUSH,
    STRAIGHT_FLUSH,
    Valuation,
    check_wild_rank,
    flush_strength,
    group_strength,
    takes_five,
)

NO_LEFTOVER: Final = 255

_GUTS_SIZES: Final = (2, 3)
_PAIUTE_SIZES: Final = (5, 6)
_WILD_SYMBOL: Final = 13
_MAX_WILD_CARDS: Final = 4
_FIELD_BITS: Final = 16
_FIELD_MASK: Final = (1 << _FIELD_BITS) - 1
# Added by a wild card: one to the wild count in bits 13..15 of each suit's field.
_WILD_BITS: Final = sum(1 << (13 + _FIELD_BITS * suit) for suit in range(4))
# Optimal sorting networks (Knuth, TAOCP 5.3.4): 9 comparators for 5, 12 for 6.
_SORTING_NETWORKS: Final = {
    5: ((0, 3), (1, 4), (0, 2), (1, 3), (0, 1), (2, 4), (1, 2), (3, 4), (2, 3)),
    6: (
        (0, 5), (1, 3), (2, 4), (1, 2), (3, 4), (0, 3),
        (2, 5), (0, 1), (2, 3), (4, 5), (1, 2), (3, 4),
    ),
}  # fmt: skip
# The wire Category number of each strength order; 0 marks an order no hand has (Guts
# strengths carry the Category number itself as their order).
_CATEGORY_NUMBERS: Final = {
    "guts2": np.arange(3, dtype=np.uint8),
    "guts3": np.arange(7, dtype=np.uint8),
    "paiute": np.array([int(category) for category in CATEGORY_BY_ORDER], dtype=np.uint8),
}
_CATEGORY_SHIFTS: Final = {"guts2": 12, "guts3": 12, "paiute": ORDER_SHIFT}


def validate_batch(hands: npt.NDArray[Any], sizes: Collection[int]) -> None:
    """Raise HandError, naming the first bad hand, unless every row is a valid hand."""
    if hands.ndim != 2:
        raise HandError(f"hands must be a 2-D array of card indexes, got shape {hands.shape}")
    if not np.issubdtype(hands.dtype, np.integer):
        raise HandError(f"hands must hold integer card indexes, got {hands.dtype}")
    count, width = hands.shape
    if count == 0:
        return
    if width in sizes:
        in_range = hands.min() >= 0 and hands.max() <= 51
        cards = hands if in_range else np.clip(hands, 0, 51)
        # Distinct cards set distinct bits, so a repeated card leaves fewer bits set. The
        # columns are or-ed one by one: `bitwise_or.reduce` over the transposed array
        # walks it with a stride and costs seven times as much.
        columns = cards.T
        seen = np.left_shift(np.uint64(1), columns[0].astype(np.uint64))
        for column in columns[1:]:
            seen |= np.left_shift(np.uint64(1), column.astype(np.uint64))
        bad = np.bitwise_count(seen) != width
        if not in_range:
            bad |= ((hands < 0) | (hands > 51)).any(axis=1)
        if not bad.any():
            return
        first = int(np.argmax(bad))
    else:
        first = 0
    try:
        check_hand(hands[first].tolist(), sizes)
    except HandError as error:
        raise HandError(f"hand {first}: {error}", hand_index=first) from None
    raise AssertionError(f"hand {first} was found bad but passes check_hand")


def rank_guts_batch(hands: npt.NDArray[Any], cards_per_hand: int) -> npt.NDArray[np.uint32]:
    """Return the Guts strength of each row of hands, (N, 2) or (N, 3) card indexes."""
    if cards_per_hand not in _GUTS_SIZES:
        raise HandError(f"Guts is played with 2 or 3 cards, not {cards_per_hand}")
    validate_batch(hands, (cards_per_hand,))
    columns = hands.T.astype(np.intp)
    index = columns[0] * 52 + columns[1]
    if cards_per_hand == 3:
        index *= 52
        index += columns[2]
    strengths: npt.NDArray[np.uint32] = _guts_table(cards_per_hand)[index]
    return strengths


def rank_paiute_batch(
    hands: npt.NDArray[Any],
    wild_rank: int,
    valuation: Valuation = Valuation.SIX_CARD_COMBINATIONS,
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint8]]:
    """Return the Paiute strength of each row of hands and its leftover card (255 for none)."""
    check_wild_rank(wild_rank)
    validate_batch(hands, _PAIUTE_SIZES)
    count, size = hands.shape
    cards = hands.T.astype(np.intp)
    symbol_of_card, bits_of_card = _card_tables(int(wild_rank))
    five = takes_five(size, valuation)

    symbols = list(symbol_of_card[cards])
    for low, high in _SORTING_NETWORKS[size]:
        symbols[low], symbols[high] = (
            np.minimum(symbols[low], symbols[high]),
            np.maximum(symbols[low], symbols[high]),
        )
    weights = _combinadic_weights(size)
    index = weights[0][symbols[0].astype(np.intp)]
    for place in range(1, size):
        index += weights[place][symbols[place].astype(np.intp)]
    strengths = _group_table(size, five)[index]

    leftovers = np.full(count, NO_LEFTOVER, dtype=np.uint8)
    if not five:
        return strengths, leftovers
    card_bits = bits_of_card[cards]
    suit_fields = card_bits[0] + card_bits[1]
    for place in range(2, size):
        suit_fields += card_bits[place]
    # Read little-endian, the four 16-bit fields of each word come in suit order.
    fields = suit_fields.astype("<u8", copy=False).view("<u2").reshape(count, 4)
    flushes = _flush_table()[fields]
    for suit in range(4):
        np.maximum(strengths, flushes[:, suit], out=strengths)

    if size == 6:
        rows = np.flatnonzero(strengths >= STRAIGHT_FLUSH << ORDER_SHIFT)
        if rows.size:
            leftovers[rows] = _leftovers(
                hands[rows].astype(np.int64),
                strengths[rows].astype(np.int64),
                flushes[rows],
                int(wild_rank),
            )
    return strengths, leftovers


def strength_categories(game: str, strengths: npt.NDArray[Any]) -> npt.NDArray[np.uint8]:
    """Return the wire Category number of each strength of game guts2, guts3 or paiute."""
    numbers = _CATEGORY_NUMBERS.get(game)
    if numbers is None:
        raise ValueError(f"unknown game {game!r}, expected guts2, guts3 or paiute")
    orders = np.asarray(strengths).astype(np.int64) >> _CATEGORY_SHIFTS[game]
    if orders.size and (orders.min() < 0 or orders.max() >= numbers.size):
        raise ValueError(f"strengths out of range for {game}")
    result: npt.NDArray[np.uint8] = numbers[orders]
    if not result.all():
        raise ValueError(f"strengths out of range for {game}")
    return result


@functools.cache
def category_table(game: str, size: int) -> npt.NDArray[np.uint8]:
    """The wire Category number of every strength below `size` of game guts2, guts3 or
    paiute (0 for a strength no hand has): one lookup categorises a ranked batch."""
    numbers = _CATEGORY_NUMBERS.get(game)
    if numbers is None:
        raise ValueError(f"unknown game {game!r}, expected guts2, guts3 or paiute")
    orders = np.arange(size) >> _CATEGORY_SHIFTS[game]
    table: npt.NDArray[np.uint8] = np.where(
        orders < numbers.size, numbers[np.minimum(orders, numbers.size - 1)], 0
    ).astype(np.uint8)
    table.flags.writeable = False
    return table


def _leftovers(
    cards: npt.NDArray[np.int64],
    strengths: npt.NDArray[np.int64],
    flushes: npt.NDArray[np.uint32],
    wild_rank: int,
) -> npt.NDArray[np.uint8]:
    """Return the leftover card of six-card hands whose best combination takes five cards."""
    ranks = cards // 4 + 2
    suits = cards % 4
    wild = ranks == wild_rank
    orders = strengths >> ORDER_SHIFT
    low_nibble = strengths & 0xF
    top = np.where(orders == ROYAL_FLUSH, 14, low_nibble)[:, None]
    # Only one suit can reach the best flush when a flush is best (see evaluator.paiute).
    flush_suit = np.argmax(flushes == strengths[:, None], axis=1)[:, None]
    in_sequence = ((ranks <= top) & (ranks >= top - 4)) | ((top == 5) & (ranks == 14))
    fits = np.where(
        (orders == FIVE_OF_A_KIND)[:, None],
        ranks == low_nibble[:, None],
        (suits == flush_suit) & in_sequence,
    )
    strays = ~(fits | wild)
    stray_card = np.where(strays, cards, 0).max(axis=1)
    lowest_wild = np.where(wild, cards, NO_LEFTOVER).min(axis=1)
    leftovers: npt.NDArray[np.uint8] = np.where(strays.any(axis=1), stray_card, lowest_wild)
    return leftovers.astype(np.uint8)


@functools.cache
def guts_strength_list(cards_per_hand: int) -> list[int]:
    """The Guts lookup table as a list, for ranking a handful of hands without numpy."""
    strengths: list[int] = _guts_table(cards_per_hand).tolist()
    return strengths


@functools.cache
def _guts_table(cards_per_hand: int) -> npt.NDArray[np.uint32]:
    """Map c0 * 2704 + c1 * 52 + c2 (or c0 * 52 + c1) to the strength of the hand."""
    rank = rank_guts2 if cards_per_hand == 2 else rank_guts3
    combinations = np.array(list(itertools.combinations(range(52), cards_per_hand)))
    strengths = np.array([rank(hand).strength for hand in combinations.tolist()])
    weights = 52 ** np.arange(cards_per_hand - 1, -1, -1)
    # Repeated cards are not hands; their entries stay 0, below every real strength.
    table = np.zeros(52**cards_per_hand, dtype=np.uint32)
    for order in itertools.permutations(range(cards_per_hand)):
        table[combinations[:, order] @ weights] = strengths
    table.flags.writeable = False
    return table


@functools.cache
def _card_tables(wild_rank: int) -> tuple[npt.NDArray[np.uint8], npt.NDArray[np.uint64]]:
    """Return each card's rank symbol (13 if wild) and its bits in the suit fields."""
    symbols = np.zeros(52, dtype=np.uint8)
    bits = np.zeros(52, dtype=np.uint64)
    for card in range(52):
        rank, suit = card // 4 + 2, card % 4
        if rank == wild_rank:
            symbols[card] = _WILD_SYMBOL
            bits[card] = _WILD_BITS
        else:
            symbols[card] = rank - 2
            bits[card] = 1 << (rank - 2 + _FIELD_BITS * suit)
    symbols.flags.writeable = bits.flags.writeable = False
    return symbols, bits


@functools.cache
def _combinadic_weights(size: int) -> tuple[npt.NDArray[np.intp], ...]:
    """Return, per place of the sorted symbols, C(symbol + place, place + 1) by symbol."""
    weights = tuple(
        np.array([math.comb(symbol + place, place + 1) for symbol in range(14)], dtype=np.intp)
        for place in range(size)
    )
    for place_weights in weights:
        place_weights.flags.writeable = False
    return weights


@functools.cache
def _group_table(size: int, five: bool) -> npt.NDArray[np.uint32]:
    """Map the combinadic index of every multiset of size symbols to its group strength.

    `five` counts five of a kind as well (`takes_five`); a six-card hand valued only as a
    six-card combination has a table of its own without it.
    """
    valuation = Valuation.BEST_OF_ANY if five else Valuation.SIX_CARD_COMBINATIONS
    table = np.zeros(math.comb(14 + size - 1, size), dtype=np.uint32)
    for symbols in itertools.combinations_with_replacement(range(14), size):
        rank_counts = [0] * 15
        for symbol in symbols:
            if symbol != _WILD_SYMBOL:
                rank_counts[symbol + 2] += 1
        index = sum(math.comb(symbol + place, place + 1) for place, symbol in enumerate(symbols))
        wild_count = symbols.count(_WILD_SYMBOL)
        table[index] = group_strength(rank_counts, wild_count, size, valuation)
    table.flags.writeable = False
    return table


@functools.cache
def _flush_table() -> npt.NDArray[np.uint32]:
    """Map k << 13 | mask (k wild cards, mask of one suit's natural ranks) to its flush."""
    table = np.zeros((_MAX_WILD_CARDS + 1) << 13, dtype=np.uint32)
    for wild_count in range(_MAX_WILD_CARDS + 1):
        for mask in range(1 << 13):
            table[wild_count << 13 | mask] = flush_strength(mask, wild_count)
    table.flags.writeable = False
    return table
