"""Card indexes, card text and hand checks."""

import pytest

from evaluator.cards import (
    RANK_CHARS,
    RANK_LABELS,
    RANK_NAMES,
    SUIT_CHARS,
    CardError,
    HandError,
    card_text,
    check_hand,
    parse_card,
    parse_cards,
    rank_of,
    suit_of,
)

ALL_CARDS = range(52)


def spellings(rank: int, suit: int) -> list[str]:
    """Every way the card of this rank and suit may be written."""
    rank_char = RANK_CHARS[rank - 2]
    rank_texts = {rank_char, rank_char.lower()} | ({"10"} if rank == 10 else set())
    suit_char = SUIT_CHARS[suit]
    return [
        padding + rank_text + suit_text + padding
        for rank_text in rank_texts
        for suit_text in (suit_char, suit_char.upper())
        for padding in ("", " ", "\t")
    ]


def test_index_layout() -> None:
    assert [card_text(index) for index in (0, 1, 2, 3, 4, 51)] == [
        "2c",
        "2d",
        "2h",
        "2s",
        "3c",
        "As",
    ]
    for rank in range(2, 15):
        for suit in range(4):
            index = (rank - 2) * 4 + suit
            assert rank_of(index) == rank
            assert suit_of(index) == suit


@pytest.mark.parametrize("index", ALL_CARDS)
def test_every_spelling_parses(index: int) -> None:
    texts = spellings(rank_of(index), suit_of(index))
    assert len(texts) == (18 if rank_of(index) == 10 else 6 if rank_of(index) <= 9 else 12)
    for text in texts:
        assert parse_card(text) == index, text


def test_round_trip_of_all_cards() -> None:
    texts = [card_text(index) for index in ALL_CARDS]
    assert len(set(texts)) == 52
    assert [parse_card(text) for text in texts] == list(ALL_CARDS)
    assert parse_cards(" ".join(texts)) == tuple(ALL_CARDS)


def test_canonical_text() -> None:
    assert card_text(parse_card("10D")) == "Td"
    assert card_text(parse_card("aH")) == "Ah"
    assert card_text(parse_card("2C")) == "2c"


@pytest.mark.parametrize(
    "text",
    ["Ah Kd 10c", "Ah,Kd,10c", "Ah, Kd , 10c", " ah\tKD\n10C ", "Ah,,Kd  10c,"],
)
def test_parse_cards_from_text(text: str) -> None:
    assert parse_cards(text) == (parse_card("Ah"), parse_card("Kd"), parse_card("Tc"))


def test_parse_cards_from_sequence() -> None:
    assert parse_cards(["Ah", " kd", "10c"]) == (50, 45, 32)
    assert parse_cards(("2c",)) == (0,)
    assert parse_cards([]) == ()
    assert parse_cards("") == ()


def test_parse_cards_keeps_duplicates() -> None:
    assert parse_cards("Ah ah AH") == (50, 50, 50)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("Zz", "'Zz'"),
        ("1c", "'1c'"),
        ("11c", "'11c'"),
        ("0c", "'0c'"),
        ("Ax", "'Ax'"),
        ("A", "'A'"),
        ("h", "'h'"),
        ("", "''"),
        ("   ", "''"),
        ("Ahh", "'Ahh'"),
        ("A h", "'A h'"),
        (" Kq ", "'Kq'"),
        ("\u212as", "'\u212as'"),  # the Kelvin sign, which str.lower() folds into "k"
        ("A\u0455", "'A\u0455'"),  # a Cyrillic look-alike of "s"
    ],
)
def test_unknown_card(text: str, shown: str) -> None:
    with pytest.raises(CardError) as caught:
        parse_card(text)
    assert str(caught.value) == f"unknown card {shown}"
    assert isinstance(caught.value, ValueError)


def test_unknown_card_in_a_list() -> None:
    with pytest.raises(CardError, match="unknown card 'Xx'"):
        parse_cards("Ah Xx Kd")
    with pytest.raises(CardError, match="unknown card 'Ah Kd'"):
        parse_cards(["Ah Kd"])


def test_card_that_is_not_text() -> None:
    with pytest.raises(CardError, match="must be text"):
        parse_card(12)  # type: ignore[arg-type]


@pytest.mark.parametrize("index", [-1, 52, 60])
def test_card_text_of_unknown_index(index: int) -> None:
    with pytest.raises(CardError, match=f"unknown card index {index}"):
        card_text(index)


def test_check_hand_accepts_valid_hands() -> None:
    check_hand(parse_cards("Ah Kd"), (2,))
    check_hand(parse_cards("Ah Kd 2c 3c 4c"), (5, 6))
    check_hand(parse_cards("Ah Kd 2c 3c 4c 5c"), (5, 6))
    check_hand(tuple(ALL_CARDS), (52,))


@pytest.mark.parametrize(
    ("cards", "sizes", "message"),
    [
        ([60, 1, 2], (3,), "unknown card index 60"),
        ([0, -1, 2], (3,), "unknown card index -1"),
        ([50, 1, 50], (3,), "duplicate card Ah"),
        ([0, 1, 2], (5, 6), "3 cards, expected 5 or 6"),
        ([0], (2,), "1 card, expected 2"),
        ([], (2, 3), "0 cards, expected 2 or 3"),
        ([0, 1, 2, 3], (2, 3, 5), "4 cards, expected 2, 3 or 5"),
        ([0, 1, 1], (2,), "duplicate card 2d"),
    ],
)
def test_check_hand_errors(cards: list[int], sizes: tuple[int, ...], message: str) -> None:
    with pytest.raises(HandError) as caught:
        check_hand(cards, sizes)
    assert str(caught.value) == message
    assert caught.value.hand_index is None
    assert isinstance(caught.value, ValueError)


def test_check_hand_rejects_non_integers() -> None:
    with pytest.raises(HandError, match="unknown card index 'Ah'"):
        check_hand(["Ah", 1], (2,))  # type: ignore[list-item]
    with pytest.raises(HandError, match=r"unknown card index 1\.0"):
        check_hand([1.0, 2], (2,))  # type: ignore[list-item]


def test_hand_error_carries_the_hand_index() -> None:
    error = HandError("hand 7: duplicate card Ah", hand_index=7)
    assert error.hand_index == 7
    assert str(error) == "hand 7: duplicate card Ah"


def test_rank_names_and_labels() -> None:
    assert sorted(RANK_NAMES) == list(range(2, 15))
    assert RANK_NAMES[6] == ("six", "sixes")
    assert RANK_NAMES[10] == ("ten", "tens")
    assert RANK_NAMES[14] == ("ace", "aces")
    assert [RANK_NAMES[rank][1] for rank in (2, 3, 11, 12, 13)] == [
        "twos",
        "threes",
        "jacks",
        "queens",
        "kings",
    ]
    assert "".join(RANK_LABELS[rank] for rank in range(2, 15)) == "2345678910JQKA"
