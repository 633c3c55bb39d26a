"""Paiute winning combinations (docs/rules.md), proved against a brute-force oracle.

The oracle knows nothing of the evaluator's reasoning: it gives every wild card every one
of the 52 cards (a card of the hand included), takes the cards as they then are, and
checks each combination by its definition, for all six cards and for each five of them.
Six cards are checked under both valuations: the rule's (six cards shown are only a
six-card combination) and the best of any combination.
"""

import collections
import functools
import itertools
import random
from collections.abc import Iterator, Sequence

import numpy as np
import numpy.typing as npt
import pytest

from evaluator.cards import HandError, card_text, parse_cards
from evaluator.hands import Category
from evaluator.paiute import Valuation, describe_paiute, group_strength, rank_paiute

IntArray = npt.NDArray[np.int64]
Hand = tuple[int, ...]
RULE = Valuation.SIX_CARD_COMBINATIONS
ANY = Valuation.BEST_OF_ANY


def five_card_strengths(cards: IntArray) -> IntArray:
    """Strength of each row of five concrete cards (repeats allowed), by definition."""
    ranks = np.sort(cards // 4 + 2, axis=1)
    suits = cards % 4
    one_suit = (suits == suits[:, :1]).all(axis=1)
    one_rank = ranks[:, 0] == ranks[:, 4]
    consecutive = (np.diff(ranks, axis=1) == 1).all(axis=1)
    ace_low = (ranks == [2, 3, 4, 5, 14]).all(axis=1)
    top = np.where(ace_low, 5, ranks[:, 4])
    flush = np.where(top == 14, 5 << 16, 4 << 16 | top)
    strengths = np.where(one_suit & (consecutive | ace_low), flush, 0)
    result: IntArray = np.where(one_rank, 6 << 16 | ranks[:, 0], strengths)
    return result


def six_card_strengths(cards: IntArray) -> IntArray:
    """Strength of each row of six concrete cards as a six-card combination, by definition."""
    ranks = np.sort(cards // 4 + 2, axis=1)
    # How many cards of the hand share each card's rank.
    counts = (ranks[:, :, None] == ranks[:, None, :]).sum(axis=2)
    four_two = ((counts == 4).sum(axis=1) == 4) & ((counts == 2).sum(axis=1) == 2)
    four = np.where(counts == 4, ranks, 0).max(axis=1)
    two = np.where(counts == 2, ranks, 0).max(axis=1)
    three_three = (counts == 3).all(axis=1)
    two_two_two = (counts == 2).all(axis=1)
    strengths = np.zeros(len(cards), dtype=np.int64)
    pairs = 1 << 16 | ranks[:, 5] << 8 | ranks[:, 3] << 4 | ranks[:, 1]
    strengths = np.where(two_two_two, pairs, strengths)
    strengths = np.where(three_three, 2 << 16 | ranks[:, 5] << 4 | ranks[:, 0], strengths)
    result: IntArray = np.where(four_two, 3 << 16 | four << 4 | two, strengths)
    return result


@functools.cache
def wild_assignments(wild_count: int) -> IntArray:
    """Every multiset of wild_count cards; wild cards are interchangeable, so order is moot.

    The multisets are sorted tuples; dropping any one place of them still leaves every
    multiset of one card fewer, so the five cards left by each wild card are covered too.
    """
    rows = list(itertools.combinations_with_replacement(range(52), wild_count))
    return np.array(rows, dtype=np.int64).reshape(len(rows), wild_count)


def brute_force(hand: Hand, wild_rank: int) -> tuple[int, list[int], int]:
    """Best strength over every wild assignment and, for six cards, the best of each five
    and the best six-card combination.

    without[place] is the best five-card combination of the cards other than hand[place];
    the last value is the best under the rule's valuation: a five-card hand's best, or a
    six-card hand's best six-card combination.
    """
    wild_places = [place for place, card in enumerate(hand) if card // 4 + 2 == wild_rank]
    assignments = wild_assignments(len(wild_places))
    concrete = np.tile(np.array(hand, dtype=np.int64), (len(assignments), 1))
    concrete[:, wild_places] = assignments
    if len(hand) == 5:
        best = int(five_card_strengths(concrete).max())
        return best, [], best
    without = [
        int(five_card_strengths(np.delete(concrete, place, axis=1)).max()) for place in range(6)
    ]
    six = int(six_card_strengths(concrete).max())
    return max(six, *without), without, six


def expected_leftover(hand: Hand, wild_rank: int, best: int, without: list[int]) -> int | None:
    """The documented leftover rule, stated through the oracle's five-card results.

    A natural card fits when some best five-card choice includes it; the natural card that
    fits none is left over, else (every natural card fits) the lowest-index wild card.
    """
    if len(hand) == 5 or best >> 16 < 4:
        return None
    wilds = [card for card in hand if card // 4 + 2 == wild_rank]
    strays = [
        card
        for card in hand
        if card not in wilds
        and not any(without[place] == best for place in range(6) if hand[place] != card)
    ]
    assert len(strays) <= 1, (hand, wild_rank)
    return strays[0] if strays else min(wilds)


def assert_agrees_with_oracle(hand: Hand, wild_rank: int) -> tuple[int, int]:
    """Check rank_paiute against the brute force under both valuations; return the
    strengths, the best of any and the rule's."""
    best, without, as_shown = brute_force(hand, wild_rank)
    shown = [card_text(card) for card in hand]
    rule = rank_paiute(hand, wild_rank)
    assert rule == rank_paiute(hand, wild_rank, RULE)
    assert rule.strength == as_shown, (shown, wild_rank, rule)
    assert rule.description == describe_paiute(as_shown)
    if len(hand) == 5:
        assert rule == rank_paiute(hand, wild_rank, ANY)
    else:
        assert rule.leftover is None
        assert rule.used == (hand if as_shown else ())
    value = rank_paiute(hand, wild_rank, ANY)
    assert value.strength == best, (shown, wild_rank, value)
    assert value.description == describe_paiute(best)
    leftover = expected_leftover(hand, wild_rank, best, without)
    assert value.leftover == leftover, (shown, wild_rank, value)
    if best == 0:
        assert value.used == ()
    elif leftover is None:
        assert value.used == hand
    else:
        assert without[hand.index(leftover)] == best
        assert value.used == tuple(card for card in hand if card != leftover)
    return best, as_shown


def sample_hands(seed: int, size: int, wild_count: int, count: int) -> Iterator[tuple[Hand, int]]:
    """Random hands with exactly wild_count wild cards, most of them built to combine."""
    rng = random.Random(seed)
    for _ in range(count):
        wild_rank = rng.randint(2, 14)
        wilds = rng.sample([(wild_rank - 2) * 4 + suit for suit in range(4)], wild_count)
        natural = [card for card in range(52) if card // 4 + 2 != wild_rank]
        style = rng.choice(("any", "few ranks", "few ranks", "one suit", "one suit"))
        if style == "few ranks":
            ranks = rng.sample([rank for rank in range(2, 15) if rank != wild_rank], 3)
            preferred = [card for card in natural if card // 4 + 2 in ranks[: rng.randint(1, 3)]]
        elif style == "one suit":
            suit, top, width = rng.randrange(4), rng.randint(5, 14), rng.randint(5, 7)
            ranks = [14 if rank == 1 else rank for rank in range(top - 4, top - 4 + width)]
            preferred = [card for card in natural if card % 4 == suit and card // 4 + 2 in ranks]
        else:
            preferred = natural
        needed = size - wild_count
        strays = 1 if rng.random() < 0.25 else 0
        naturals = rng.sample(preferred, min(len(preferred), needed - strays))
        others = [card for card in natural if card not in naturals]
        naturals += rng.sample(others, needed - len(naturals))
        hand = wilds + naturals
        rng.shuffle(hand)
        yield tuple(hand), wild_rank


ORACLE_SAMPLES = [
    # (size, wild cards, hands): fewer hands where the oracle has more to try.
    (5, 0, 1500),
    (5, 1, 1500),
    (5, 2, 800),
    (5, 3, 150),
    (6, 0, 1500),
    (6, 1, 1500),
    (6, 2, 600),
    (6, 3, 100),
]
# The orders each sample must reach, and no other: five cards make no six-card combination,
# five of a kind needs a wild card, three + three is never best with one (four + two is
# better), nor four + two with three (five of a kind is), and three natural cards beside
# three wild cards always make at least two + two + two.
REACHABLE_ORDERS = {
    (5, 0): {0, 4, 5},
    (5, 1): {0, 4, 5, 6},
    (5, 2): {0, 4, 5, 6},
    (5, 3): {0, 4, 5, 6},
    (6, 0): {0, 1, 2, 3, 4, 5},
    (6, 1): {0, 1, 3, 4, 5, 6},
    (6, 2): {0, 1, 3, 4, 5, 6},
    (6, 3): {1, 4, 5, 6},
}


# Under the rule's valuation six cards reach only the six-card orders (and 0, unless the
# three wild cards always complete two + two + two); five cards rank as before.
REACHABLE_RULE_ORDERS = {
    key: orders if key[0] == 5 else orders & {0, 1, 2, 3}
    for key, orders in REACHABLE_ORDERS.items()
}
REACHABLE_RULE_ORDERS[6, 3] = {1, 3}


@pytest.mark.parametrize(("size", "wild_count", "count"), ORACLE_SAMPLES)
def test_agrees_with_brute_force(size: int, wild_count: int, count: int) -> None:
    orders: collections.Counter[int] = collections.Counter()
    rule_orders: collections.Counter[int] = collections.Counter()
    for hand, wild_rank in sample_hands(size * 10 + wild_count, size, wild_count, count):
        best, as_shown = assert_agrees_with_oracle(hand, wild_rank)
        orders[best >> 16] += 1
        rule_orders[as_shown >> 16] += 1
    assert set(orders) == REACHABLE_ORDERS[size, wild_count], orders
    assert set(rule_orders) == REACHABLE_RULE_ORDERS[size, wild_count], rule_orders
    # Most of the sample must form combinations, so that it tests them.
    assert orders[0] < count * 0.9, orders


@pytest.mark.parametrize("wild_rank", range(2, 15))
def test_every_one_suit_five_card_hand(wild_rank: int) -> None:
    straight_flushes = 0
    for hand in itertools.combinations(range(3, 52, 4), 5):
        straight_flushes += assert_agrees_with_oracle(hand, wild_rank)[0] > 0
    assert straight_flushes >= 10


@pytest.mark.parametrize("wild_rank", [2, 5, 10, 14])
def test_every_one_suit_six_card_hand(wild_rank: int) -> None:
    leftovers: collections.Counter[str] = collections.Counter()
    for hand in itertools.combinations(range(3, 52, 4), 6):
        # six ranks of one suit, at most one of them wild: never a six-card combination
        assert assert_agrees_with_oracle(hand, wild_rank)[1] == 0
        leftover = rank_paiute(hand, wild_rank, ANY).leftover
        if leftover is not None:
            leftovers["wild" if leftover // 4 + 2 == wild_rank else "natural"] += 1
    assert leftovers["natural"] > 100
    # A spare wild card needs five natural targets, which a two or a five can leave free.
    assert (leftovers["wild"] > 0) == (wild_rank in (2, 5))


@pytest.mark.parametrize("text", ["2c 2d 2h 2s Kd", "2c 2d 2h 2s 9h Ah", "2c 2d 2h 2s Ah As"])
def test_four_wild_cards_against_brute_force(text: str) -> None:
    assert_agrees_with_oracle(parse_cards(text), 2)


@pytest.mark.parametrize("wild_rank", range(2, 15))
def test_four_wild_cards_make_five_of_a_kind(wild_rank: int) -> None:
    wilds = [(wild_rank - 2) * 4 + suit for suit in range(4)]
    naturals = [card for card in range(52) if card not in wilds]
    for card in naturals:
        value = rank_paiute([*wilds, card], wild_rank)
        assert value.category == Category.FIVE_OF_A_KIND
        assert value.strength & 0xF == card // 4 + 2
    for low, high in itertools.combinations(naturals, 2):
        value = rank_paiute([low, *wilds, high], wild_rank, ANY)
        assert value.category == Category.FIVE_OF_A_KIND
        assert value.strength & 0xF == high // 4 + 2
        if low // 4 == high // 4:
            assert value.leftover == wilds[0]
        else:
            assert value.leftover == low
        # shown as six, the same cards are four of the higher rank and two of the lower
        rule = rank_paiute([low, *wilds, high], wild_rank)
        assert rule.category == Category.FOUR_TWO
        assert rule.leftover is None
        four, two = high // 4 + 2, low // 4 + 2
        if four == two:  # a natural pair: four wild aces beside it, or aces and kings
            four, two = 14, (two if two != 14 else 13)
        assert rule.strength == 3 << 16 | four << 4 | two


def strength(text: str, wild_rank: int, valuation: Valuation = ANY) -> int:
    return rank_paiute(parse_cards(text), wild_rank, valuation).strength


@pytest.mark.parametrize(
    ("text", "wild_rank", "description", "leftover"),
    [
        # Five of a kind: never without a wild card.
        ("Ks Kh Kd 2c 2s", 2, "Five of a kind, kings", None),
        ("Ks Kh Kd Kc 2s 2h", 2, "Five of a kind, kings", "2h"),
        ("Ks Kh Kd 2c 2s 9h", 2, "Five of a kind, kings", "9h"),
        ("7s 7h 7d Ac 3c 3d", 7, "Five of a kind, threes", "Ac"),
        ("Qs 3h 3d 3c 7s 7h", 3, "Five of a kind, sevens", "Qs"),
        # Royal flush, natural and wild.
        ("As Ks Qs Js Ts", 2, "Royal flush", None),
        ("As Ks Qs Js Ts 3h", 2, "Royal flush", "3h"),
        ("As Ks Qs Js Ts 2h", 2, "Royal flush", "2h"),
        ("Ah Kh 2d Jh Th 9s", 2, "Royal flush", "9s"),
        ("Ad 5c Kd Jd 5s Td", 5, "Royal flush", "5c"),
        # Straight flush, natural and wild; A-2-3-4-5 is 5-high.
        ("9s 8s 7s 6s 5s", 3, "Straight flush, 9-high", None),
        ("As 2s 3s 4s 5s", 7, "Straight flush, 5-high", None),
        ("As 2s 3s 4s 9h 5s", 7, "Straight flush, 5-high", "9h"),
        ("As 2s 3s 4s 6s 7h", 7, "Straight flush, 6-high", "As"),
        ("9s 8s 7s 6s 2d 2h", 2, "Straight flush, J-high", "6s"),
        ("9s 8s 7s 6s 5s 2h", 2, "Straight flush, 10-high", "5s"),
        ("Kc Qc Jc Tc 9c 8c", 4, "Straight flush, K-high", "8c"),
        # A wild card standing for its own card.
        ("5s 6s 7s 8s 9s", 9, "Straight flush, 9-high", None),
        ("5s 6s 7s 8s 9h", 9, "Straight flush, 9-high", None),
        # Four + two.
        ("Qs Qh Qd Qc 7s 7h", 3, "Four queens and two sevens", None),
        ("Qs Qh Qd 3c 7s 7h", 3, "Four queens and two sevens", None),
        ("Qs Qh 3d 3c 7s 7h", 3, "Four queens and two sevens", None),
        ("Qs Qh Qd 3c 3s 7h", 3, "Five of a kind, queens", "7h"),
        ("As Ah 2d 4s 4h 4c", 2, "Four fours and two aces", None),
        # Three + three.
        ("As Ah Ad 4s 4h 4c", 2, "Three aces and three fours", None),
        # Two + two + two, natural and wild.
        ("Ks Kh 9d 9c 2s 2h", 3, "Three pairs, kings, nines and twos", None),
        ("Ks Kh 9d 9c 2s 3h", 3, "Three pairs, kings, nines and twos", None),
        ("Ks 3h 9d 9c 2s 2h", 3, "Three pairs, kings, nines and twos", None),
        ("Ks Kh 9d 9c 2s 3h", 2, "Three pairs, kings, nines and threes", None),
        # Six cards with a five-card and a six-card combination: the better one.
        ("Js Ts 9s 2h 2d Jh", 2, "Straight flush, K-high", "Jh"),
        ("Qs Qh Qd Qc 2s 2h", 2, "Five of a kind, queens", "2h"),
        # No winning combination.
        ("Ks Qh 9d 8c 2s 3h", 2, "No winning combination", None),
        ("Ks Kh Kd 9c 9d", 2, "No winning combination", None),
        ("Qs Qh Qd Qc 7s 8h", 2, "No winning combination", None),
        ("9s 8s 7s 6s 4s 4h", 2, "No winning combination", None),
    ],
)
def test_examples(text: str, wild_rank: int, description: str, leftover: str | None) -> None:
    hand = parse_cards(text)
    value = rank_paiute(hand, wild_rank, ANY)
    assert value.description == description
    assert value.leftover == (None if leftover is None else parse_cards(leftover)[0])
    if description == "No winning combination":
        assert value.used == ()
    else:
        assert value.used == tuple(card for card in hand if card != value.leftover)
    assert_agrees_with_oracle(hand, wild_rank)


@pytest.mark.parametrize(
    ("text", "wild_rank", "rule", "best", "leftover"),
    [
        # Shown as six after taking 7s from the pile: four + two, not the five sixes that
        # would need 7s left out.
        ("2c 6d 6h 6s 2s 7s", 2, "Four sixes and two sevens", "Five of a kind, sixes", "7s"),
        # 9h from the pile: three pairs, not the 6-high straight flush without it.
        (
            "3s 2s Qh Qd Qs 9h",
            12,
            "Three pairs, nines, threes and twos",
            "Straight flush, 6-high",
            "9h",
        ),
        (
            "9h 9d Th Jh 2c 2s",
            2,
            "Three pairs, jacks, tens and nines",
            "Straight flush, K-high",
            "9d",
        ),
        # A wild pair takes the best rank the hand lacks.
        ("Qs Qh Qd Qc 2s 2h", 2, "Four queens and two aces", "Five of a kind, queens", "2h"),
        ("Ah Kh Qh Jh Th 2c", 7, "No winning combination", "Royal flush", "2c"),
        (
            "Js Ts 9s 2h 2d Jh",
            2,
            "Three pairs, jacks, tens and nines",
            "Straight flush, K-high",
            "Jh",
        ),
        # Six-card combinations are valued alike under both.
        ("Ks Kh 9d 9c 2s 3h", 3, "Three pairs, kings, nines and twos", None, None),
        ("As Ah Ad 4s 4h 4c", 2, "Three aces and three fours", None, None),
        # Five cards are a five-card combination under both.
        ("2c 6d 6h 6s 2s", 2, "Five of a kind, sixes", None, None),
        ("3s 2s Qh Qd Qs", 12, "Straight flush, 6-high", None, None),
        ("Ks Kh Kd 9c 9d", 2, "No winning combination", None, None),
    ],
)
def test_six_cards_shown_are_only_a_six_card_combination(
    text: str, wild_rank: int, rule: str, best: str | None, leftover: str | None
) -> None:
    hand = parse_cards(text)
    value = rank_paiute(hand, wild_rank)
    assert value == rank_paiute(hand, wild_rank, RULE)
    assert (value.description, value.leftover) == (rule, None)
    assert value.used == (() if value.strength == 0 else hand)
    anything = rank_paiute(hand, wild_rank, ANY)
    assert anything.description == (best or rule)
    assert anything.leftover == (None if leftover is None else parse_cards(leftover)[0])
    assert anything.strength >= value.strength
    assert_agrees_with_oracle(hand, wild_rank)


def test_every_rank_multiset_under_both_valuations() -> None:
    # Exhaustive for the part that depends on ranks alone: every multiset of natural ranks
    # (at most four of a rank) beside 0..4 wild cards, each wild card given every rank.
    checked: collections.Counter[int] = collections.Counter()
    for wild_count in range(5):
        naturals = np.array(
            [
                ranks
                for ranks in itertools.combinations_with_replacement(range(2, 15), 6 - wild_count)
                if max(collections.Counter(ranks).values(), default=0) <= 4
            ],
            dtype=np.int64,
        ).reshape(-1, 6 - wild_count)
        # the ranks the wild cards stand for
        stand_for = list(itertools.combinations_with_replacement(range(2, 15), wild_count))
        standings = np.array(stand_for, dtype=np.int64).reshape(len(stand_for), wild_count)
        ranks = np.concatenate(
            [
                np.repeat(naturals, len(standings), axis=0),
                np.tile(standings, (len(naturals), 1)),
            ],
            axis=1,
        )
        # the oracle's six-card definition reads ranks only: give every card the suit 0
        rule = six_card_strengths((ranks - 2) * 4).reshape(len(naturals), -1).max(axis=1)
        ordered = np.sort(ranks, axis=1)
        five = (ordered[:, 0] == ordered[:, 4]) | (ordered[:, 1] == ordered[:, 5])
        kinds = np.where(five, 6 << 16 | ordered[:, 1], 0).reshape(len(naturals), -1)
        anything = np.maximum(rule, kinds.max(axis=1))
        for row, expected_rule, expected_any in zip(
            naturals.tolist(), rule.tolist(), anything.tolist(), strict=True
        ):
            rank_counts = [row.count(rank) for rank in range(15)]
            assert group_strength(rank_counts, wild_count, 6, RULE) == expected_rule, row
            assert group_strength(rank_counts, wild_count, 6, ANY) == expected_any, row
            checked[expected_rule >> 16] += 1
    assert set(checked) == {0, 1, 2, 3}
    assert sum(checked.values()) > 20_000


def test_value_fields() -> None:
    value = rank_paiute(parse_cards("Qs Qh Qd Qc 7s 7h"), 3)
    assert value.category == Category.FOUR_TWO
    assert value.strength == 3 << 16 | 12 << 4 | 7
    none = rank_paiute(parse_cards("Ks Qh 9d 8c 2s 3h"), 2)
    assert (none.strength, none.category, none.used, none.leftover) == (
        0,
        Category.NO_COMBINATION,
        (),
        None,
    )
    assert rank_paiute(parse_cards("As Ks Qs Js Ts"), 2).category == Category.ROYAL_FLUSH
    assert rank_paiute(parse_cards("9s 8s 7s 6s 5s"), 2).category == Category.STRAIGHT_FLUSH
    assert rank_paiute(parse_cards("Ks Kh 2d Kc 2s"), 2).category == Category.FIVE_OF_A_KIND
    assert rank_paiute(parse_cards("As Ah Ad 4s 4h 4c"), 2).category == Category.THREE_THREE
    assert rank_paiute(parse_cards("Ks Kh 9d 9c 2s 2h"), 3).category == Category.TWO_TWO_TWO


def test_category_order() -> None:
    ladder = [
        ("Ks Qh 9d 8c 2s 3h", 2),
        ("As Ah Kd Kc Qs Qh", 3),
        ("As Ah Ad Ks Kh Kc", 3),
        ("As Ah Ad Ac Ks Kh", 3),
        ("Ks Qs Js Ts 9s", 3),
        ("As Ks Qs Js Ts", 3),
        ("2s 2h 2d 3c 3s", 3),
    ]
    strengths = [strength(text, wild_rank) for text, wild_rank in ladder]
    assert strengths == sorted(strengths)
    assert len(set(strengths)) == len(ladder)
    # The worst of each category beats the best of the one below.
    assert strength("As Ah Kd Kc Qs Qh", 3) < strength("2s 2h 2d 3c 3h 3s", 4)
    assert strength("As Ah Ad Ks Kh Kc", 3) < strength("2s 2h 2d 2c 3s 3h", 4)
    assert strength("As Ah Ad Ac Ks Kh", 3) < strength("As 2s 3s 4s 5s", 7)
    assert strength("Ks Qs Js Ts 9s", 3) < strength("As Ks Qs Js Ts", 3)
    assert strength("As Ks Qs Js Ts", 3) < strength("2s 2h 2d 3c 3s", 3)


def test_ties_within_categories() -> None:
    # Five of a kind by rank.
    assert strength("As Ah Ad 2c 2s", 2) > strength("Ks Kh Kd 2c 2s", 2)
    assert strength("Ks Kh Kd 2c 2s", 2) == strength("Kc Kh 3d 3c 3s", 3)
    # All royal flushes tie, natural or wild.
    royals = {
        strength("As Ks Qs Js Ts", 2),
        strength("Ah Kh Qh Jh Th 9c", 2),
        strength("Ac 5c Qc Jc Tc", 5),
        strength("Ad 5c Kd Jd 5s Td", 5),
    }
    assert len(royals) == 1
    # Straight flushes by top card; suits never matter; 5-high is the lowest.
    assert strength("9s 8s 7s 6s 5s", 2) == strength("9h 8h 7h 6h 5h", 2)
    assert strength("9s 8s 7s 6s 5s", 2) > strength("8d 7d 6d 5d 4d", 2)
    assert strength("As 2s 3s 4s 5s", 7) < strength("2h 3h 4h 5h 6h", 7)
    assert strength("As 2s 3s 4s 5s", 7) == strength("Ah 2h 3h 4h 7d", 7)
    # Four + two by the four, then the pair.
    assert strength("Ks Kh Kd Kc 2s 2h", 3) > strength("Qs Qh Qd Qc As Ah", 3)
    assert strength("Qs Qh Qd Qc 8s 8h", 3) > strength("Qs Qh Qd Qc 7s 7h", 3)
    assert strength("Qs Qh Qd Qc 8s 8h", 3) == strength("Qs Qh Qd 3c 8s 8h", 3)
    # Three + three by the higher three, then the lower.
    assert strength("As Ah Ad 3s 3h 3c", 2) > strength("Ks Kh Kd Qs Qh Qc", 2)
    assert strength("As Ah Ad 4s 4h 4c", 2) > strength("As Ah Ad 3s 3h 3c", 2)
    # Two + two + two by the pairs from the highest.
    assert strength("Ks Kh 9d 9c 2s 2h", 3) > strength("Qs Qh Jd Jc Ts Th", 3)
    assert strength("Ks Kh 9d 9c 4s 4h", 3) > strength("Ks Kh 9d 9c 2s 2h", 3)
    assert strength("Ks Kh Td Tc 2s 2h", 3) > strength("Ks Kh 9d 9c 8s 8h", 3)
    assert strength("Ks Kh 9d 9c 2s 2h", 3) == strength("Kc Kd 9s 3c 2c 2d", 3)


def test_three_three_needs_no_wild_card() -> None:
    # With a wild card, three + three can always be four + two instead, which is better.
    for wild_count in range(1, 5):
        for ranks in itertools.combinations_with_replacement(range(2, 15), 6 - wild_count):
            rank_counts = [ranks.count(rank) for rank in range(15)]
            for valuation in Valuation:
                assert group_strength(rank_counts, wild_count, 6, valuation) >> 16 != 2


@pytest.mark.parametrize(
    ("strength_value", "description"),
    [
        (0, "No winning combination"),
        (6 << 16 | 13, "Five of a kind, kings"),
        (6 << 16 | 6, "Five of a kind, sixes"),
        (5 << 16, "Royal flush"),
        (4 << 16 | 9, "Straight flush, 9-high"),
        (4 << 16 | 5, "Straight flush, 5-high"),
        (4 << 16 | 10, "Straight flush, 10-high"),
        (3 << 16 | 12 << 4 | 7, "Four queens and two sevens"),
        (2 << 16 | 14 << 4 | 4, "Three aces and three fours"),
        (1 << 16 | 13 << 8 | 9 << 4 | 2, "Three pairs, kings, nines and twos"),
    ],
)
def test_describe_paiute(strength_value: int, description: str) -> None:
    assert describe_paiute(strength_value) == description


@pytest.mark.parametrize(
    "strength_value",
    [1, 4 << 16 | 14, 4 << 16 | 4, 3 << 16 | 12 << 4 | 12, 2 << 16 | 4 << 4 | 14, 7 << 16],
)
def test_describe_unknown_strength(strength_value: int) -> None:
    with pytest.raises(ValueError, match="is not the strength of a Paiute hand"):
        describe_paiute(strength_value)


@pytest.mark.parametrize(
    ("cards", "wild_rank", "message"),
    [
        ([0, 1, 2, 3], 2, "4 cards, expected 5 or 6"),
        ([0, 1, 2, 3, 4, 5, 6], 2, "7 cards, expected 5 or 6"),
        ([0, 1, 2, 3, 3], 2, "duplicate card 2s"),
        ([0, 1, 2, 3, 99], 2, "unknown card index 99"),
        ([0, 1, 2, 3, 4], 1, "wild rank 1 is out of range 2..14"),
        ([0, 1, 2, 3, 4], 15, "wild rank 15 is out of range 2..14"),
    ],
)
def test_invalid_hands(cards: Sequence[int], wild_rank: int, message: str) -> None:
    with pytest.raises(HandError) as caught:
        rank_paiute(cards, wild_rank)
    assert str(caught.value) == message


def test_card_order_does_not_matter() -> None:
    for hand, wild_rank in sample_hands(99, 6, 2, 20):
        for valuation in Valuation:
            values = set()
            for order in itertools.permutations(hand):
                value = rank_paiute(order, wild_rank, valuation)
                values.add((value.strength, value.leftover, tuple(sorted(value.used))))
            assert len(values) == 1
