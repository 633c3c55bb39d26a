"""The numpy batch path agrees with the scalar evaluators on every hand it is given."""

import itertools

import numpy as np
import numpy.typing as npt
import pytest

from evaluator.batch import (
    BLOCK_ROWS,
    NO_LEFTOVER,
    category_table,
    rank_guts_batch,
    rank_paiute_batch,
    strength_categories,
    validate_batch,
)
from evaluator.cards import HandError, parse_cards
from evaluator.guts import rank_guts2, rank_guts3
from evaluator.hands import Category
from evaluator.paiute import Valuation, rank_paiute

Hands = npt.NDArray[np.uint8]
ALL_THREE: Hands = np.array(list(itertools.combinations(range(52), 3)), dtype=np.uint8)
ALL_TWO: Hands = np.array(list(itertools.combinations(range(52), 2)), dtype=np.uint8)


@pytest.fixture(scope="module")
def guts3_strengths() -> npt.NDArray[np.uint32]:
    return np.array([rank_guts3(hand).strength for hand in ALL_THREE.tolist()], dtype=np.uint32)


def test_guts3_every_hand_in_every_order(guts3_strengths: npt.NDArray[np.uint32]) -> None:
    for order in itertools.permutations(range(3)):
        strengths = rank_guts_batch(ALL_THREE[:, list(order)], 3)
        assert strengths.dtype == np.uint32
        np.testing.assert_array_equal(strengths, guts3_strengths)


def test_guts2_every_hand_in_every_order() -> None:
    expected = [rank_guts2(hand).strength for hand in ALL_TWO.tolist()]
    for order in ([0, 1], [1, 0]):
        np.testing.assert_array_equal(rank_guts_batch(ALL_TWO[:, order], 2), expected)


def test_guts_accepts_any_integer_dtype(guts3_strengths: npt.NDArray[np.uint32]) -> None:
    for dtype in (np.int8, np.int64, np.uint16, np.intp):
        np.testing.assert_array_equal(rank_guts_batch(ALL_THREE.astype(dtype), 3), guts3_strengths)


def test_guts_categories(guts3_strengths: npt.NDArray[np.uint32]) -> None:
    categories = strength_categories("guts3", guts3_strengths)
    assert categories.dtype == np.uint8
    expected = [rank_guts3(hand).category for hand in ALL_THREE.tolist()]
    np.testing.assert_array_equal(categories, expected)
    two = strength_categories("guts2", rank_guts_batch(ALL_TWO, 2))
    np.testing.assert_array_equal(two, [rank_guts2(hand).category for hand in ALL_TWO.tolist()])


def structured_hands(rng: np.random.Generator, count: int, size: int, wild_rank: int) -> Hands:
    """Hands drawn with weights that favour the wild rank, a few ranks or a suit's sequence.

    Weighted sampling without replacement: the size largest of log(weight) + Gumbel noise.
    """
    weights = np.full((count, 52), 0.05)
    rows = np.arange(count)
    wild_cards = [(wild_rank - 2) * 4 + suit for suit in range(4)]
    weights[:, wild_cards] = rng.choice([0.001, 0.3, 1.0, 4.0], size=count)[:, None]
    style = rng.integers(0, 3, size=count)
    few_ranks = rows[style == 0]
    for _ in range(3):
        ranks = rng.integers(2, 15, size=count)[few_ranks]
        for suit in range(4):
            weights[few_ranks, (ranks - 2) * 4 + suit] = 1.0
    one_suit = rows[style == 1]
    suits = rng.integers(0, 4, size=count)[one_suit]
    tops = rng.integers(5, 15, size=count)[one_suit]
    for step in range(5):
        ranks = np.where(tops - step == 1, 14, tops - step)
        weights[one_suit, (ranks - 2) * 4 + suits] = 1.0
    keys = np.log(weights) - np.log(-np.log(rng.random((count, 52))))
    hands: Hands = np.argsort(-keys, axis=1)[:, :size].astype(np.uint8)
    return hands


def scalar_paiute(
    hands: Hands, wild_rank: int, valuation: Valuation
) -> tuple[list[int], list[int], list[Category]]:
    values = [rank_paiute(hand, wild_rank, valuation) for hand in hands.tolist()]
    leftovers = [NO_LEFTOVER if value.leftover is None else value.leftover for value in values]
    return [value.strength for value in values], leftovers, [value.category for value in values]


@pytest.mark.parametrize("valuation", list(Valuation))
@pytest.mark.parametrize("size", [5, 6])
@pytest.mark.parametrize("wild_rank", range(2, 15))
def test_paiute_agrees_with_scalar(size: int, wild_rank: int, valuation: Valuation) -> None:
    rng = np.random.default_rng(wild_rank * 10 + size)
    uniform = np.argsort(rng.random((1000, 52)), axis=1)[:, :size].astype(np.uint8)
    hands = np.concatenate([uniform, structured_hands(rng, 6000, size, wild_rank)])
    expected_strengths, expected_leftovers, categories = scalar_paiute(hands, wild_rank, valuation)

    strengths, leftovers = rank_paiute_batch(hands, wild_rank, valuation)
    assert strengths.dtype == np.uint32
    assert leftovers.dtype == np.uint8
    np.testing.assert_array_equal(strengths, expected_strengths)
    np.testing.assert_array_equal(leftovers, expected_leftovers)
    np.testing.assert_array_equal(strength_categories("paiute", strengths), categories)

    order = rng.permutation(size)
    shuffled_strengths, shuffled_leftovers = rank_paiute_batch(
        hands[:, order], wild_rank, valuation
    )
    np.testing.assert_array_equal(shuffled_strengths, expected_strengths)
    np.testing.assert_array_equal(shuffled_leftovers, expected_leftovers)

    # The sample reaches every combination a hand of this size can make.
    reachable = set(Category) - {Category.HIGH_CARD, Category.PAIR, Category.FLUSH}
    reachable -= {Category.STRAIGHT, Category.THREE_OF_A_KIND}
    if size == 5:
        reachable -= {Category.FOUR_TWO, Category.THREE_THREE, Category.TWO_TWO_TWO}
    elif valuation is Valuation.SIX_CARD_COMBINATIONS:
        # six cards shown: a six-card combination or nothing, and no card left over
        reachable -= {Category.FIVE_OF_A_KIND, Category.ROYAL_FLUSH, Category.STRAIGHT_FLUSH}
    assert set(categories) == reachable
    if size == 6 and valuation is Valuation.BEST_OF_ANY:
        wild_leftovers = sum(left // 4 + 2 == wild_rank for left in leftovers if left != 255)
        natural_leftovers = sum(left // 4 + 2 != wild_rank for left in leftovers if left != 255)
        assert wild_leftovers > 10
        assert natural_leftovers > 100
    else:
        assert (leftovers == NO_LEFTOVER).all()


@pytest.mark.parametrize("wild_rank", range(2, 15))
def test_paiute_every_hand_of_a_few_cards(wild_rank: int) -> None:
    wilds = [(wild_rank - 2) * 4 + suit for suit in range(4)]
    others = [rank for rank in (14, 13, 3, 2) if rank != wild_rank][:2]
    few_ranks = wilds + [(rank - 2) * 4 + suit for rank in others for suit in range(4)]
    royal_spades = [51, 47, 43, 39, 35, 31]
    low_hearts = [50, 2, 6, 10, 14, 18]
    decks = [few_ranks, sorted(set(wilds + royal_spades)), sorted(set(wilds + low_hearts))]
    for deck in decks:
        for size, valuation in itertools.product((5, 6), Valuation):
            hands = np.array(list(itertools.combinations(deck, size)), dtype=np.uint8)
            expected_strengths, expected_leftovers, _ = scalar_paiute(hands, wild_rank, valuation)
            strengths, leftovers = rank_paiute_batch(hands, wild_rank, valuation)
            np.testing.assert_array_equal(strengths, expected_strengths)
            np.testing.assert_array_equal(leftovers, expected_leftovers)


def test_paiute_examples() -> None:
    hands = np.array(
        [
            parse_cards("Ks Kh Kd Kc 2s 2h"),
            parse_cards("9s 8s 7s 6s 2d 2h"),
            parse_cards("As Ks Qs Js Ts 2h"),
            parse_cards("Ks Qh 9d 8c 2s 3h"),
        ],
        dtype=np.uint8,
    )
    strengths, leftovers = rank_paiute_batch(hands, 2, Valuation.BEST_OF_ANY)
    assert strengths.tolist() == [6 << 16 | 13, 4 << 16 | 11, 5 << 16, 0]
    assert leftovers.tolist() == [*parse_cards("2h 6s 2h"), NO_LEFTOVER]
    assert strength_categories("paiute", strengths).tolist() == [
        Category.FIVE_OF_A_KIND,
        Category.STRAIGHT_FLUSH,
        Category.ROYAL_FLUSH,
        Category.NO_COMBINATION,
    ]
    # shown as six, only the first makes a six-card combination: four kings, two aces
    strengths, leftovers = rank_paiute_batch(hands, 2)
    assert strengths.tolist() == [3 << 16 | 13 << 4 | 14, 0, 0, 0]
    assert leftovers.tolist() == [NO_LEFTOVER] * 4


def test_paiute_six_cards_shown_after_a_draw_from_the_pile() -> None:
    # The hands of a call that took its last card (7s, 9h, 9d) from the discard pile: as
    # shown, six cards are a six-card combination; the five-card one would leave it out.
    cases = [
        ("2c 6d 6h 6s 2s 7s", 2, 3 << 16 | 6 << 4 | 7, 6 << 16 | 6, "7s"),
        ("3s 2s Qh Qd Qs 9h", 12, 1 << 16 | 9 << 8 | 3 << 4 | 2, 4 << 16 | 6, "9h"),
        ("9h 9d Th Jh 2c 2s", 2, 1 << 16 | 11 << 8 | 10 << 4 | 9, 4 << 16 | 13, "9d"),
    ]
    for text, wild_rank, rule, best, leftover in cases:
        hands = np.array([parse_cards(text)] * 20, dtype=np.uint8)
        strengths, leftovers = rank_paiute_batch(hands, wild_rank)
        assert set(strengths.tolist()) == {rule}
        assert set(leftovers.tolist()) == {NO_LEFTOVER}
        strengths, leftovers = rank_paiute_batch(hands, wild_rank, Valuation.BEST_OF_ANY)
        assert set(strengths.tolist()) == {best}
        assert set(leftovers.tolist()) == set(parse_cards(leftover))


def test_empty_batches() -> None:
    strengths, leftovers = rank_paiute_batch(np.zeros((0, 6), dtype=np.uint8), 7)
    assert strengths.shape == leftovers.shape == (0,)
    assert rank_guts_batch(np.zeros((0, 3), dtype=np.uint8), 3).shape == (0,)
    validate_batch(np.zeros((0, 4), dtype=np.uint8), (5, 6))


def valid_hands(count: int, size: int) -> npt.NDArray[np.int64]:
    rng = np.random.default_rng(count * size)
    hands: npt.NDArray[np.int64] = np.argsort(rng.random((count, 52)), axis=1)[:, :size]
    return hands


def test_validate_batch_accepts_valid_hands() -> None:
    validate_batch(valid_hands(100, 6), (5, 6))
    validate_batch(valid_hands(100, 5).astype(np.uint8), (5, 6))
    validate_batch(ALL_THREE, (3,))


def bad_batch(row: int, cards: str | list[int], size: int = 6) -> npt.NDArray[np.int64]:
    hands = valid_hands(10, size)
    hands[row] = parse_cards(cards) if isinstance(cards, str) else cards
    return hands


@pytest.mark.parametrize(
    ("hands", "message", "hand_index"),
    [
        (bad_batch(7, "Ah Kd Ah 2c 3c 4c"), "hand 7: duplicate card Ah", 7),
        (bad_batch(2, [0, 1, 60, 3, 4, 5]), "hand 2: unknown card index 60", 2),
        (bad_batch(1, [0, 1, 2, 3, 4, -1]), "hand 1: unknown card index -1", 1),
        (bad_batch(0, [0, 1, 2, 3, 4, 300]), "hand 0: unknown card index 300", 0),
        (bad_batch(9, [5, 5, 60, 3, 4, 6]), "hand 9: duplicate card 3d", 9),
        (valid_hands(3, 4), "hand 0: 4 cards, expected 5 or 6", 0),
        (valid_hands(3, 7), "hand 0: 7 cards, expected 5 or 6", 0),
    ],
)
def test_validate_batch_errors(hands: npt.NDArray[np.int64], message: str, hand_index: int) -> None:
    with pytest.raises(HandError) as caught:
        validate_batch(hands, (5, 6))
    assert str(caught.value) == message
    assert caught.value.hand_index == hand_index
    with pytest.raises(HandError, match=message):
        rank_paiute_batch(hands, 7)


def test_validate_batch_names_the_first_bad_hand() -> None:
    hands = valid_hands(50, 3)
    hands[30] = [4, 4, 5]
    hands[12] = [60, 1, 2]
    with pytest.raises(HandError, match=r"^hand 12: unknown card index 60$"):
        validate_batch(hands, (3,))
    with pytest.raises(HandError, match=r"^hand 12: unknown card index 60$"):
        rank_guts_batch(hands, 3)
    hands[12] = [1, 2, 3]
    with pytest.raises(HandError, match=r"^hand 30: duplicate card 3c$"):
        rank_guts_batch(hands, 3)
    # a repeated card before a card out of range: the repeat is the first fault
    hands[40] = [1, 2, 99]
    with pytest.raises(HandError, match=r"^hand 30: duplicate card 3c$"):
        validate_batch(hands, (3,))
    hands[30] = [4, 5, 6]
    with pytest.raises(HandError, match=r"^hand 40: unknown card index 99$"):
        validate_batch(hands, (3,))


@pytest.mark.parametrize(
    ("hands", "message"),
    [
        (np.arange(6), "2-D array"),
        (np.zeros((2, 3, 6), dtype=np.uint8), "2-D array"),
        (np.zeros((2, 6)), "integer card indexes, got float64"),
        (np.ones((2, 6), dtype=bool), "integer card indexes, got bool"),
    ],
)
def test_validate_batch_rejects_other_arrays(hands: npt.NDArray[np.int64], message: str) -> None:
    with pytest.raises(HandError, match=message) as caught:
        validate_batch(hands, (5, 6))
    assert caught.value.hand_index is None


def test_batch_argument_errors() -> None:
    with pytest.raises(HandError, match=r"wild rank 1 is out of range 2\.\.14"):
        rank_paiute_batch(valid_hands(3, 6), 1)
    with pytest.raises(HandError, match="2 or 3 cards, not 4"):
        rank_guts_batch(valid_hands(3, 4), 4)
    with pytest.raises(HandError, match="hand 0: 3 cards, expected 2"):
        rank_guts_batch(valid_hands(3, 3), 2)
    with pytest.raises(ValueError, match="unknown game 'poker'"):
        strength_categories("poker", np.zeros(3, dtype=np.uint32))
    for game, strength in (
        ("guts2", 3 << 12),
        ("guts3", 7 << 12),
        ("guts3", 5),
        ("paiute", 7 << 16),
    ):
        with pytest.raises(ValueError, match=f"strengths out of range for {game}"):
            strength_categories(game, np.array([strength], dtype=np.uint32))


def test_lookup_tables_are_built_once() -> None:
    """The tables are built on first use and then shared, never rebuilt per call."""
    from evaluator import batch

    assert batch._guts_table(3) is batch._guts_table(3)
    assert batch._group_table(6, False) is batch._group_table(6, False)
    assert batch.guts_strength_list(2) is batch.guts_strength_list(2)


@pytest.mark.parametrize(
    ("game", "size"), [("guts2", 1 << 15), ("guts3", 1 << 15), ("paiute", 7 << 16)]
)
def test_the_category_table_agrees_with_strength_categories(game: str, size: int) -> None:
    table = category_table(game, size)
    valid = np.flatnonzero(table).astype(np.uint32)
    np.testing.assert_array_equal(table[valid], strength_categories(game, valid))
    invalid = np.flatnonzero(table == 0)
    for strength in invalid[:: max(1, len(invalid) // 50)].tolist():
        with pytest.raises(ValueError, match="out of range"):
            strength_categories(game, np.array([strength], dtype=np.uint32))


def test_guts_strengths_as_uint16(guts3_strengths: npt.NDArray[np.uint32]) -> None:
    narrow = rank_guts_batch(ALL_THREE, 3, np.uint16)
    assert narrow.dtype == np.uint16
    np.testing.assert_array_equal(narrow, guts3_strengths)
    with pytest.raises(ValueError, match="uint32 or uint16"):
        rank_guts_batch(ALL_THREE, 3, np.uint8)


def test_batches_longer_than_a_block_rank_as_their_blocks() -> None:
    """Ranked BLOCK_ROWS rows at a time, a long batch says what its rows say one block
    at a time, and a fault in a later block is named by its place in the whole batch."""
    rng = np.random.default_rng(17)
    count = 2 * BLOCK_ROWS + 123
    six = np.argsort(rng.random((count, 52)), axis=1)[:, :6].astype(np.uint8)
    six = six[(six // 4 + 2 == 9).sum(axis=1) <= 3]
    count = len(six)
    for hands, rank in (
        (six[:, :3].copy(), lambda h: (rank_guts_batch(h, 3),)),
        (six[:, :2].copy(), lambda h: (rank_guts_batch(h, 2),)),
        (six, lambda h: rank_paiute_batch(h, 9, Valuation.BEST_OF_ANY, 3)),
        (six[:, :5].copy(), lambda h: rank_paiute_batch(h, 9)),
    ):
        whole = rank(hands)
        parts = [rank(hands[i : i + 1000]) for i in range(0, count, 1000)]
        for place, array in enumerate(whole):
            np.testing.assert_array_equal(array, np.concatenate([p[place] for p in parts]))
        late = hands.copy()
        late[count - 5, 1] = late[count - 5, 0]
        with pytest.raises(HandError, match=rf"^hand {count - 5}: duplicate card") as caught:
            rank(late)
        assert caught.value.hand_index == count - 5
        late[count - 7, 0] = 60
        with pytest.raises(HandError, match=rf"^hand {count - 7}: unknown card index 60$"):
            rank(late)


def test_a_batch_may_refuse_a_hand_with_every_wild_card() -> None:
    """With live_wild_cards, a hand holding all four cards of the wild rank is refused,
    after any other fault of the batch, and named by its place."""
    four_sevens = parse_cards("7c 7d 7h 7s Kc 2d")
    fine = parse_cards("7c 7d 7h Ks Kc 2d")
    hands = np.array([fine] * (BLOCK_ROWS + 10), dtype=np.uint8)
    hands[BLOCK_ROWS + 3] = four_sevens
    strengths, _ = rank_paiute_batch(hands, 7)  # ranked, as the rules of a deck allow
    assert strengths[BLOCK_ROWS + 3] > 0
    message = r"^hand 65539: holds all four sevens, the wild rank; the turned-up card is out"
    with pytest.raises(HandError, match=message) as caught:
        rank_paiute_batch(hands, 7, live_wild_cards=3)
    assert caught.value.hand_index == BLOCK_ROWS + 3
    hands[BLOCK_ROWS + 8] = parse_cards("7c 7c 7h Ks Kc 2d")
    with pytest.raises(HandError, match=r"^hand 65544: duplicate card 7c$"):
        rank_paiute_batch(hands, 7, live_wild_cards=3)
