"""Guts ranking, checked over every 2- and 3-card hand (docs/rules.md, "Hand ranking")."""

import collections
import hashlib
import itertools
from collections.abc import Callable, Sequence

import pytest

from evaluator.cards import HandError, card_text, parse_cards
from evaluator.guts import describe_guts, rank_guts2, rank_guts3
from evaluator.hands import Category, HandValue

ALL_THREE = list(itertools.combinations(range(52), 3))
ALL_TWO = list(itertools.combinations(range(52), 2))
Ranker = Callable[[Sequence[int]], HandValue]

# Regression pins: sha256 of the sorted lines "strength card card [card]" of every hand.
# Any change of order or of a strength changes them; the tests above say what is right.
THREE_CARD_DIGEST = "6980c0f295d35fd78984918bfa2c3106c120b490c03d81ae2798e1bce5880d20"
TWO_CARD_DIGEST = "9515d050abd8b5fb1b31391ee4d418dc047689322c8abb04ab4d5065d5351e84"

# Every 3-card sequence and the rank it counts as: A-2-3 counts 3-high, K-A-2 is none.
SEQUENCES = {frozenset({top, top - 1, top - 2}): top for top in range(4, 15)}
SEQUENCES[frozenset({14, 2, 3})] = 3


def reference_key(hand: Sequence[int]) -> tuple[int, ...]:
    """docs/rules.md's 3-card order written plainly, independently of evaluator.guts."""
    ranks = sorted((card // 4 + 2 for card in hand), reverse=True)
    one_suit = len({card % 4 for card in hand}) == 1
    top = SEQUENCES.get(frozenset(ranks))
    counts = collections.Counter(ranks)
    if top and one_suit:
        return (6, top)
    if len(counts) == 1:
        return (5, ranks[0])
    if top:
        return (4, top)
    if one_suit:
        return (3, *ranks)
    if len(counts) == 2:
        (pair, _), (odd, _) = counts.most_common()
        return (2, pair, odd)
    return (1, *ranks)


def reference_key2(hand: Sequence[int]) -> tuple[int, ...]:
    """docs/rules.md's 2-card order written plainly."""
    high, low = sorted((card // 4 + 2 for card in hand), reverse=True)
    return (2, high) if high == low else (1, high, low)


@pytest.fixture(scope="module")
def three_card_values() -> dict[tuple[int, ...], HandValue]:
    return {hand: rank_guts3(hand) for hand in ALL_THREE}


@pytest.fixture(scope="module")
def two_card_values() -> dict[tuple[int, ...], HandValue]:
    return {hand: rank_guts2(hand) for hand in ALL_TWO}


def assert_same_order(
    values: dict[tuple[int, ...], HandValue], key: Callable[[Sequence[int]], tuple[int, ...]]
) -> None:
    """Equal keys must give equal strengths and a higher key a higher strength."""
    ordered = sorted((key(hand), value.strength) for hand, value in values.items())
    for (key_before, before), (key_after, after) in itertools.pairwise(ordered):
        if key_before == key_after:
            assert before == after, key_before
        else:
            assert before < after, (key_before, key_after)


def test_three_card_category_counts(three_card_values: dict[tuple[int, ...], HandValue]) -> None:
    counts = collections.Counter(value.category for value in three_card_values.values())
    assert counts == {
        Category.STRAIGHT_FLUSH: 48,
        Category.THREE_OF_A_KIND: 52,
        Category.STRAIGHT: 720,
        Category.FLUSH: 1096,
        Category.PAIR: 3744,
        Category.HIGH_CARD: 16440,
    }
    assert len(three_card_values) == 22100


def test_three_card_distinct_strengths(three_card_values: dict[tuple[int, ...], HandValue]) -> None:
    assert len({value.strength for value in three_card_values.values()}) == 741


def test_two_card_counts(two_card_values: dict[tuple[int, ...], HandValue]) -> None:
    counts = collections.Counter(value.category for value in two_card_values.values())
    assert counts == {Category.PAIR: 78, Category.HIGH_CARD: 1326 - 78}
    assert len({value.strength for value in two_card_values.values()}) == 91


def test_three_card_order_matches_the_rules(
    three_card_values: dict[tuple[int, ...], HandValue],
) -> None:
    assert_same_order(three_card_values, reference_key)
    for hand, value in three_card_values.items():
        assert value.category == reference_key(hand)[0]


def test_two_card_order_matches_the_rules(
    two_card_values: dict[tuple[int, ...], HandValue],
) -> None:
    assert_same_order(two_card_values, reference_key2)
    for hand, value in two_card_values.items():
        assert value.category == reference_key2(hand)[0]


def test_strength_layout(three_card_values: dict[tuple[int, ...], HandValue]) -> None:
    for value in three_card_values.values():
        assert value.strength >> 12 == value.category
        assert 0 < value.strength < 7 << 12
    assert rank_guts3(parse_cards("Kc Kd 9s")).strength == 2 << 12 | 13 << 4 | 9
    assert rank_guts3(parse_cards("Ad Kc 8h")).strength == 1 << 12 | 14 << 8 | 13 << 4 | 8
    assert rank_guts3(parse_cards("2h Ad 3s")).strength == 4 << 12 | 3
    assert rank_guts2(parse_cards("As 9d")).strength == 1 << 12 | 14 << 4 | 9
    assert rank_guts2(parse_cards("As Ad")).strength == 2 << 12 | 14


def head_to_head(
    text: str, values: dict[tuple[int, ...], HandValue], size: int
) -> tuple[int, int, int]:
    """Count the opponent hands sharing no card that this hand beats, ties and loses to."""
    mine = parse_cards(text)
    strength = values[tuple(sorted(mine))].strength
    rest = sorted(set(range(52)) - set(mine))
    outcomes = collections.Counter(
        (values[other].strength > strength) - (values[other].strength < strength)
        for other in itertools.combinations(rest, size)
    )
    return outcomes[-1], outcomes[0], outcomes[1]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Ac Kd Qh", (18314, 26, 84)),
        ("5c 3d 2h", (0, 26, 18398)),
        ("Ah Kh Qh", (18421, 3, 0)),
    ],
)
def test_three_card_head_to_head(
    three_card_values: dict[tuple[int, ...], HandValue], text: str, expected: tuple[int, int, int]
) -> None:
    assert head_to_head(text, three_card_values, 3) == expected
    assert sum(expected) == 18424


def test_two_card_head_to_head(two_card_values: dict[tuple[int, ...], HandValue]) -> None:
    assert head_to_head("As Kd", two_card_values, 2) == (1144, 9, 72)


def strength(text: str) -> int:
    return rank_guts3(parse_cards(text)).strength


def test_sequences_with_the_ace() -> None:
    lowest = strength("Ac 2d 3h")
    assert rank_guts3(parse_cards("Ac 2d 3h")).category == Category.STRAIGHT
    assert lowest == strength("3c 2s As")
    assert lowest < strength("2c 3d 4h")
    assert lowest > strength("Ac Kc Jc")
    assert rank_guts3(parse_cards("Kc Ad 2h")).category == Category.HIGH_CARD
    assert rank_guts3(parse_cards("Kc Ac 2c")).category == Category.FLUSH
    assert strength("Kc Ad 2h") == strength("Kd Ah 2s")
    highest = strength("Ac Kd Qh")
    all_straights = [
        rank_guts3(hand).strength
        for hand in ALL_THREE
        if rank_guts3(hand).category == Category.STRAIGHT
    ]
    assert min(all_straights) == lowest
    assert max(all_straights) == highest
    assert strength("Ah 2h 3h") < strength("2c 3c 4c") < strength("Qs Ks As")


def test_category_order() -> None:
    ladder = ["Ac Kd Jh", "2c 2d 3h", "2c 3c 5c", "Ac 2d 3h", "2c 2d 2h", "Ac 2c 3c"]
    strengths = [strength(text) for text in ladder]
    assert strengths == sorted(strengths)
    assert len(set(strengths)) == len(ladder)
    # The best hand of a lower category still loses to the worst of the next.
    assert strength("Ac Kd Jh") < strength("2c 2d 3h")
    assert strength("Ac Ad Kh") < strength("2c 3c 5c")
    assert strength("Ac Kc Jc") < strength("Ac 2d 3h")
    assert strength("Ac Kd Qh") < strength("2c 2d 2h")
    assert strength("Ac Ad Ah") < strength("Ac 2c 3c")


def test_ties_and_tie_breaks() -> None:
    assert strength("Ac Kd 8h") == strength("As Kh 8c")
    assert strength("Ac Kd 8h") > strength("As Kh 7c")
    assert strength("Ac Kd 8h") > strength("As Qh Jc")
    assert strength("Kc Kd 9s") > strength("Kh Ks 8c")
    assert strength("Kc Kd 2s") > strength("Qh Qs Ac")
    assert strength("Kc Jc 6c") > strength("Kd Jd 5d")
    assert strength("Kc Jc 6c") == strength("Kh Jh 6h")
    assert strength("5c 6c 7c") == strength("5s 6s 7s")
    assert rank_guts2(parse_cards("As 9d")).strength > rank_guts2(parse_cards("Ks Qd")).strength
    assert rank_guts2(parse_cards("As 9d")).strength > rank_guts2(parse_cards("Ah 8d")).strength
    assert rank_guts2(parse_cards("2s 2d")).strength > rank_guts2(parse_cards("As Kd")).strength
    assert rank_guts2(parse_cards("3s 3d")).strength > rank_guts2(parse_cards("2s 2h")).strength


@pytest.mark.parametrize(
    ("text", "description"),
    [
        ("7c 6c 5c", "Straight flush, 7-high"),
        ("Ah Kh Qh", "Straight flush, A-high"),
        ("3h 2h Ah", "Straight flush, 3-high"),
        ("Qs Qh Qd", "Three queens"),
        ("6s 6h 6d", "Three sixes"),
        ("3c 2d Ah", "Straight, 3-high"),
        ("Qc Kd Ah", "Straight, A-high"),
        ("9c 10d 8h", "Straight, 10-high"),
        ("Kc Jc 6c", "Flush, K-J-6"),
        ("Kc Ac 2c", "Flush, A-K-2"),
        ("Kc Kd 9s", "Pair of kings, 9 kicker"),
        ("Tc Td As", "Pair of tens, A kicker"),
        ("5c 5d Ts", "Pair of fives, 10 kicker"),
        ("Ad Kc 8h", "A-K-8 high"),
        ("5c 3d 2h", "5-3-2 high"),
        ("Kh Ad 2s", "A-K-2 high"),
    ],
)
def test_three_card_descriptions(text: str, description: str) -> None:
    value = rank_guts3(parse_cards(text))
    assert value.description == description
    assert describe_guts(3, value.strength) == description


@pytest.mark.parametrize(
    ("text", "description"),
    [
        ("As Ad", "Pair of aces"),
        ("6h 6s", "Pair of sixes"),
        ("As 9d", "A-9 high"),
        ("Tc 2d", "10-2 high"),
    ],
)
def test_two_card_descriptions(text: str, description: str) -> None:
    value = rank_guts2(parse_cards(text))
    assert value.description == description
    assert describe_guts(2, value.strength) == description


def test_description_from_strength_alone(
    three_card_values: dict[tuple[int, ...], HandValue],
    two_card_values: dict[tuple[int, ...], HandValue],
) -> None:
    for size, values in ((3, three_card_values), (2, two_card_values)):
        by_strength: dict[int, set[str]] = collections.defaultdict(set)
        for value in values.values():
            by_strength[value.strength].add(value.description)
            assert describe_guts(size, value.strength) == value.description
        assert all(len(descriptions) == 1 for descriptions in by_strength.values())
        # Different strengths never read the same.
        assert len({describe_guts(size, strength) for strength in by_strength}) == len(by_strength)


@pytest.mark.parametrize(("size", "strength"), [(3, 0), (3, 1 << 12), (2, 3 << 12), (4, 4098)])
def test_describe_unknown_strength(size: int, strength: int) -> None:
    with pytest.raises(ValueError, match="is not the strength"):
        describe_guts(size, strength)


def order_digest(values: dict[tuple[int, ...], HandValue]) -> str:
    lines = sorted(
        f"{value.strength:05d} {' '.join(card_text(card) for card in sorted(hand))}"
        for hand, value in values.items()
    )
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


def test_order_digest(
    three_card_values: dict[tuple[int, ...], HandValue],
    two_card_values: dict[tuple[int, ...], HandValue],
) -> None:
    assert order_digest(three_card_values) == THREE_CARD_DIGEST
    assert order_digest(two_card_values) == TWO_CARD_DIGEST


def test_card_order_does_not_matter() -> None:
    for hand in ALL_THREE[::97]:
        values = {rank_guts3(order) for order in itertools.permutations(hand)}
        assert len(values) == 1
    assert rank_guts2([51, 0]) == rank_guts2([0, 51])


@pytest.mark.parametrize(
    ("ranker", "cards", "message"),
    [
        (rank_guts3, [0, 1], "2 cards, expected 3"),
        (rank_guts3, [0, 1, 2, 3], "4 cards, expected 3"),
        (rank_guts3, [0, 1, 1], "duplicate card 2d"),
        (rank_guts3, [0, 1, 52], "unknown card index 52"),
        (rank_guts2, [0, 1, 2], "3 cards, expected 2"),
        (rank_guts2, [50, 50], "duplicate card Ah"),
    ],
)
def test_invalid_hands(ranker: Ranker, cards: list[int], message: str) -> None:
    with pytest.raises(HandError) as caught:
        ranker(cards)
    assert str(caught.value) == message
