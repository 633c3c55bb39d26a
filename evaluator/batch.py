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
    too_many_wild_cards,
)

NO_LEFTOVER: Final = 255

_GUTS_SIZES: Final = (2, 3)
_PAIUTE_SIZES: Final = (5, 6)
_WILD_SYMBOL: Final = 13
_SYMBOLS: Final = 14  # thirteen ranks and the wild symbol
# Rows ranked at a time: a block's temporaries stay in the cache, and the ones of the
# next block reuse their memory, where a million rows at once would fault in fresh
# pages for each: two to three times the rate on a million hands.
BLOCK_ROWS: Final = 1 << 16
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

U8 = npt.NDArray[np.uint8]
U32 = npt.NDArray[np.uint32]


def validate_batch(hands: npt.NDArray[Any], sizes: Collection[int]) -> None:
    """Raise HandError, naming the first bad hand, unless every row is a valid hand."""
    if hands.ndim != 2:
        raise HandError(f"hands must be a 2-D array of card indexes, got shape {hands.shape}")
    if not np.issubdtype(hands.dtype, np.integer):
        raise HandError(f"hands must hold integer card indexes, got {hands.dtype}")
    count, width = hands.shape
    if count == 0:
        return
    if width not in sizes:
        _refuse(hands, 0, sizes)
    for start in range(0, count, BLOCK_ROWS):
        block = hands[start : start + BLOCK_ROWS]
        _check_block(block, np.ascontiguousarray(block.T), start, sizes)


def _check_block(
    hands: npt.NDArray[Any], columns: npt.NDArray[Any], start: int, sizes: Collection[int]
) -> None:
    """Refuse the first row of a block (its first row is hand `start`) that repeats a
    card or holds an index outside 0..51; `columns` is the block transposed, contiguous."""
    # Compared pair by pair, on the contiguous columns: a tenth of the cost of or-ing one
    # bit a card into 64-bit masks, which needs a wide copy of every column.
    bad: npt.NDArray[np.bool_] = columns[0] == columns[1]
    for left, right in itertools.combinations(range(len(columns)), 2):
        if (left, right) != (0, 1):
            bad |= columns[left] == columns[right]
    if hands.min() < 0 or hands.max() > 51:
        bad |= ((hands < 0) | (hands > 51)).any(axis=1)
    if bad.any():
        _refuse(hands, int(np.argmax(bad)), sizes, start)


def _refuse(hands: npt.NDArray[Any], row: int, sizes: Collection[int], start: int = 0) -> None:
    """Raise the HandError check_hand gives row `row` (hand `start + row`)."""
    first = start + row
    try:
        check_hand(hands[row].tolist(), sizes)
    except HandError as error:
        raise HandError(f"hand {first}: {error}", hand_index=first) from None
    raise AssertionError(f"hand {first} was found bad but passes check_hand")


def rank_guts_batch(
    hands: npt.NDArray[Any], cards_per_hand: int, dtype: type[np.unsignedinteger[Any]] = np.uint32
) -> npt.NDArray[Any]:
    """Return the Guts strength of each row of hands, (N, 2) or (N, 3) card indexes, as
    `dtype`: uint32, or uint16 (every Guts strength is below 2**15) to spare the widening."""
    if cards_per_hand not in _GUTS_SIZES:
        raise HandError(f"Guts is played with 2 or 3 cards, not {cards_per_hand}")
    if hands.dtype != np.uint8 or hands.ndim != 2 or hands.shape[1] != cards_per_hand:
        validate_batch(hands, (cards_per_hand,))
        hands = hands.astype(np.uint8)
    elif hands.size and hands.max() > 51:
        validate_batch(hands, (cards_per_hand,))
    if np.dtype(dtype) not in (np.dtype(np.uint32), np.dtype(np.uint16)):
        raise ValueError(f"Guts strengths are uint32 or uint16, not {np.dtype(dtype)}")
    table = _guts_table(cards_per_hand)
    strengths = np.empty(len(hands), dtype=np.uint16)
    for start in range(0, len(hands), BLOCK_ROWS):
        end = start + BLOCK_ROWS
        _guts_block(hands[start:end], table, strengths[start:end])
    # the table holds 0 where a card repeats: the lookup itself finds repeated cards
    if not strengths.all():
        validate_batch(hands, (cards_per_hand,))
        raise AssertionError("a hand of distinct cards has no strength")
    return strengths.astype(dtype, copy=False)


def _guts_block(hands: U8, table: npt.NDArray[np.uint16], out: npt.NDArray[np.uint16]) -> None:
    """Write into `out` the strengths of card indexes 0..51 (uint8): the table at
    c0 * 2704 + c1 * 52 + c2."""
    # the index is made in uint32 (52**3 fits), half the bytes of intp
    columns = hands.T
    index = columns[0].astype(np.uint32)
    for column in columns[1:]:
        index *= 52
        index += column
    table.take(index, out=out)


def rank_paiute_batch(
    hands: npt.NDArray[Any],
    wild_rank: int,
    valuation: Valuation = Valuation.SIX_CARD_COMBINATIONS,
    live_wild_cards: int | None = None,
) -> tuple[npt.NDArray[np.uint32], npt.NDArray[np.uint8]]:
    """Return the Paiute strength of each row of hands and its leftover card (255 for none).

    With `live_wild_cards`, a hand holding more cards of the wild rank is refused too
    (`LIVE_WILD_CARDS` as the rules deal), after every other fault of the batch."""
    check_wild_rank(wild_rank)
    if hands.dtype != np.uint8 or hands.ndim != 2:
        validate_batch(hands, _PAIUTE_SIZES)
        hands = hands.astype(np.uint8)  # every index is 0..51 now
    count, size = hands.shape
    if size not in _PAIUTE_SIZES:
        _refuse(hands, 0, _PAIUTE_SIZES)
    five = takes_five(size, valuation)
    strengths = np.empty(count, dtype=np.uint32)
    leftovers = np.empty(count, dtype=np.uint8)
    too_wild: int | None = None
    for start in range(0, count, BLOCK_ROWS):
        block = hands[start : start + BLOCK_ROWS]
        # transposed once, for the checks and the ranking both
        columns = np.ascontiguousarray(block.T)
        _check_block(block, columns, start, _PAIUTE_SIZES)
        ranked, left, wild_counts = _paiute_block(block, columns, int(wild_rank), five)
        strengths[start : start + len(block)] = ranked
        leftovers[start : start + len(block)] = left
        if live_wild_cards is not None and too_wild is None:
            over = np.flatnonzero(wild_counts > live_wild_cards)
            if over.size:
                too_wild = start + int(over[0])
    if too_wild is not None:
        raise HandError(f"hand {too_wild}: {too_many_wild_cards(wild_rank)}", hand_index=too_wild)
    return strengths, leftovers


def _paiute_block(
    hands: U8, columns: U8, wild_rank: int, five: bool
) -> tuple[U32, U8, npt.NDArray[np.uint8]]:
    """The strengths, leftovers and wild-card counts of valid card indexes (uint8, and
    `columns` the same transposed, contiguous) under one wild rank."""
    count, size = hands.shape
    # each card's symbol: its rank - 2, or 13 for the wild rank
    symbols = columns >> 2
    wild = (symbols == wild_rank - 2).view(np.uint8)
    wild_counts = wild[0] + wild[1]
    for place in range(2, size):
        wild_counts += wild[place]
    wild *= _WILD_SYMBOL - (wild_rank - 2)
    symbols += wild
    rows = list(symbols)
    for low, high in _SORTING_NETWORKS[size]:
        rows[low], rows[high] = np.minimum(rows[low], rows[high]), np.maximum(rows[low], rows[high])
    index = _combinadic_index(rows)
    strengths: U32 = _group_table(size, five).take(index)

    leftovers = np.full(count, NO_LEFTOVER, dtype=np.uint8)
    if not five:
        return strengths, leftovers, wild_counts
    bits_of_card = _card_bits(wild_rank)
    suit_fields = bits_of_card.take(columns[0])
    for place in range(1, size):
        suit_fields += bits_of_card.take(columns[place])
    # Read little-endian, the four 16-bit fields of each word come in suit order.
    fields = suit_fields.astype("<u8", copy=False).view("<u2").reshape(count, 4)
    flushes = _flush_table()[fields]
    for suit in range(4):
        np.maximum(strengths, flushes[:, suit], out=strengths)

    if size == 6:
        rows_of_flushes = np.flatnonzero(strengths >= STRAIGHT_FLUSH << ORDER_SHIFT)
        if rows_of_flushes.size:
            leftovers[rows_of_flushes] = _leftovers(
                hands[rows_of_flushes].astype(np.int64),
                strengths[rows_of_flushes].astype(np.int64),
                flushes[rows_of_flushes],
                wild_rank,
            )
    return strengths, leftovers, wild_counts


def _combinadic_index(rows: list[U8]) -> U32:
    """The combinadic index of sorted symbols (one array per place), summed from tables
    over three places at a time (two lookups for six places instead of six)."""
    index: U32 | None = None
    for first in range(0, len(rows), 3):
        places = rows[first : first + 3]
        key = places[0].astype(np.uint16)
        for place in places[1:]:
            key *= _SYMBOLS
            key += place
        part = _place_sums(first, len(places)).take(key)
        if index is None:
            index = part
        else:
            index += part
    assert index is not None
    return index


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
def _guts_table(cards_per_hand: int) -> npt.NDArray[np.uint16]:
    """Map c0 * 2704 + c1 * 52 + c2 (or c0 * 52 + c1) to the strength of the hand.

    In uint16 (every Guts strength is below 2**15): half the bytes of uint32, so more
    of it stays in the cache while a batch is ranked."""
    rank = rank_guts2 if cards_per_hand == 2 else rank_guts3
    combinations = np.array(list(itertools.combinations(range(52), cards_per_hand)))
    strengths = np.array([rank(hand).strength for hand in combinations.tolist()])
    weights = 52 ** np.arange(cards_per_hand - 1, -1, -1)
    if strengths.max() >= 1 << 15:
        raise AssertionError("a Guts strength does not fit 15 bits")
    # Repeated cards are not hands; their entries stay 0, below every real strength.
    table = np.zeros(52**cards_per_hand, dtype=np.uint16)
    for order in itertools.permutations(range(cards_per_hand)):
        table[combinations[:, order] @ weights] = strengths
    table.flags.writeable = False
    return table


@functools.cache
def _card_bits(wild_rank: int) -> npt.NDArray[np.uint64]:
    """Each card's bits in the suit fields: its rank's bit in its suit's field, or for a
    card of the wild rank one more wild card in every field."""
    bits = np.zeros(52, dtype=np.uint64)
    for card in range(52):
        rank, suit = card // 4 + 2, card % 4
        bits[card] = _WILD_BITS if rank == wild_rank else 1 << (rank - 2 + _FIELD_BITS * suit)
    bits.flags.writeable = False
    return bits


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
def _place_sums(first: int, places: int) -> npt.NDArray[np.uint32]:
    """The combinadic weights of places first .. first + places - 1 summed, by the key
    s_0 * 14 ** (places - 1) + ... + s_last of their symbols."""
    weights = _combinadic_weights(first + places)[first:]
    sums = np.zeros(_SYMBOLS**places, dtype=np.uint32)
    for symbols in itertools.product(range(_SYMBOLS), repeat=places):
        key = 0
        for symbol in symbols:
            key = key * _SYMBOLS + symbol
        sums[key] = sum(int(weights[place][symbol]) for place, symbol in enumerate(symbols))
    sums.flags.writeable = False
    return sums


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
