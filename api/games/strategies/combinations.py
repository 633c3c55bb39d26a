"""Paiute hands as a computer player reads them: which winning combination six cards
form, the best call to show, and how many unseen cards would complete five kept ones.

The rules rank a call through the evaluator; these are a player's own reckonings, in
the order docs/rules.md gives the combinations (five of a kind, royal flush, straight
flush, then four + two, three + three, two + two + two). A wild card stands for any card.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import combinations, permutations

from api.games.cards import SUITS, rank_value

FIVE_OF_A_KIND, ROYAL_FLUSH, STRAIGHT_FLUSH = 6, 5, 4
FOUR_TWO, THREE_THREE, TWO_TWO_TWO = 3, 2, 1
ACE = 14
# each straight's ranks as a bit mask, by its top card; an ace is bit 1 as well as 14
WINDOWS = tuple((top, sum(1 << r for r in range(top - 4, top + 1))) for top in range(ACE, 4, -1))


@dataclass(frozen=True)
class Shown:
    """A call: the cards shown, the one discarded (None when six are shown), its value.

    `value` orders calls as the rules rank them, best highest: the combination first,
    then its ranks.
    """

    cards: tuple[str, ...]
    discard: str | None
    value: tuple[int, ...]


@dataclass(frozen=True)
class Counted:
    """Cards as the quick checks read them: natural ranks' counts, suits' rank masks, wilds."""

    counts: tuple[int, ...]  # by rank, 0..14
    masks: tuple[int, ...]  # by suit: the natural ranks held (bit 1 too for an ace)
    wilds: int


def count(cards: Iterable[str], wild_rank: int) -> Counted:
    """`cards` as `completes` reads them."""
    counts = [0] * (ACE + 1)
    masks = [0] * len(SUITS)
    wilds = 0
    for card in cards:
        rank = rank_value(card)
        if rank == wild_rank:
            wilds += 1
            continue
        counts[rank] += 1
        masks[SUITS.index(card[1])] |= 1 << rank | (2 if rank == ACE else 0)
    return Counted(tuple(counts), tuple(masks), wilds)


def with_card(hand: Counted, card: str, wild_rank: int) -> Counted:
    """`hand` and one more card."""
    rank = rank_value(card)
    if rank == wild_rank:
        return Counted(hand.counts, hand.masks, hand.wilds + 1)
    counts = list(hand.counts)
    counts[rank] += 1
    masks = list(hand.masks)
    masks[SUITS.index(card[1])] |= 1 << rank | (2 if rank == ACE else 0)
    return Counted(tuple(counts), tuple(masks), hand.wilds)


def completes(hand: Counted) -> bool:
    """Whether six counted cards can show a winning combination (five or six of them)."""
    natural = sorted((c for c in hand.counts if c), reverse=True)
    wilds = hand.wilds
    if natural and natural[0] + wilds >= 5:
        return True  # five of a kind
    if _six_card(natural):
        return True
    need = 5 - wilds
    return any(
        (mask & window).bit_count() >= need
        for mask in hand.masks
        if mask.bit_count() >= need
        for _, window in WINDOWS
    )


def _six_card(natural: Sequence[int]) -> bool:
    """Whether natural groups of these sizes (largest first) fit four + two, three +
    three or two + two + two, wild cards filling the rest."""
    return any(
        len(natural) <= len(groups)
        and all(size <= room for size, room in zip(natural, groups, strict=False))
        for groups in ((4, 2), (3, 3), (2, 2, 2))
    )


def outs(kept: Sequence[str], unseen: Iterable[str], wild_rank: int) -> int:
    """How many of the `unseen` cards would complete the five `kept`."""
    base = count(kept, wild_rank)
    return sum(1 for card in unseen if completes(with_card(base, card, wild_rank)))


def five_card_value(cards: Sequence[str], wild_rank: int) -> tuple[int, ...] | None:
    """The value of five cards as five of a kind, a royal or a straight flush, or None."""
    natural = [c for c in cards if rank_value(c) != wild_rank]
    ranks = {rank_value(c) for c in natural}
    if len(ranks) <= 1:
        return (FIVE_OF_A_KIND, max(ranks, default=ACE))
    if len({c[1] for c in natural}) != 1 or len(ranks) != len(natural):
        return None
    mask = count(natural, wild_rank).masks[SUITS.index(natural[0][1])]
    for top, window in WINDOWS:
        if mask & window == mask & ~(1 << ACE if top == 5 else 2):
            return (ROYAL_FLUSH, ACE) if top == ACE else (STRAIGHT_FLUSH, top)
    return None


def six_card_value(cards: Sequence[str], wild_rank: int) -> tuple[int, ...] | None:
    """The value of six cards as their best six-card combination, or None."""
    held = [0] * (ACE + 1)
    for card in cards:
        if rank_value(card) != wild_rank:
            held[rank_value(card)] += 1
    if not _six_card(sorted((c for c in held if c), reverse=True)):
        return None
    # a wild card makes the highest rank it can: the ranks held and the top three suffice
    ranks = sorted({r for r in range(2, ACE + 1) if held[r]} | {ACE, ACE - 1, ACE - 2})[::-1]
    for shape, value in ((4, 2), FOUR_TWO), ((3, 3), THREE_THREE), ((2, 2, 2), TWO_TWO_TWO):
        for chosen in permutations(ranks, len(shape)):
            if shape[0] == shape[-1] and list(chosen) != sorted(chosen, reverse=True):
                continue  # equal groups: each choice once, the higher first
            naturals_fit = all(held[r] <= size for r, size in zip(chosen, shape, strict=True))
            if naturals_fit and sum(held[r] for r in chosen) == sum(held):
                return (value, *chosen)
    return None


def calls(hand: Sequence[str], wild_rank: int, kept: str | None) -> list[Shown]:
    """Every call six cards allow (six-card ones first), never discarding `kept`."""
    found: list[Shown] = []
    six = six_card_value(hand, wild_rank)
    if six is not None:
        found.append(Shown(tuple(hand), None, six))
    for shown in combinations(hand, 5):
        discard = next(c for c in hand if c not in shown)
        if discard == kept:
            continue
        five = five_card_value(shown, wild_rank)
        if five is not None:
            found.append(Shown(shown, discard, five))
    return found


def best_call(hand: Sequence[str], wild_rank: int, kept: str | None) -> Shown | None:
    """The best call six cards allow, never discarding `kept`; None without one."""
    return max(calls(hand, wild_rank, kept), key=lambda shown: shown.value, default=None)
