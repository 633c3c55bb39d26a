"""Card text (`api.games.cards`): the spellings a player may type, and the refusals."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from api.games.cards import FULL_DECK, RANKS, SUITS, canonical_card, rank_value
from api.games.common import RuleError


@pytest.mark.parametrize(
    ("text", "card"),
    [
        ("Ah", "Ah"),
        ("ah", "Ah"),
        ("AH", "Ah"),
        ("aH", "Ah"),
        (" Td ", "Td"),
        ("td", "Td"),
        ("10d", "Td"),
        ("10D", "Td"),
        ("2c", "2c"),
        ("kS", "Ks"),
        ("\tqh\n", "Qh"),
    ],
)
def test_every_spelling_of_a_card_gives_its_canonical_text(text: str, card: str) -> None:
    assert canonical_card(text) == card


def test_every_card_of_the_deck_is_its_own_canonical_text() -> None:
    for card in FULL_DECK:
        assert canonical_card(card) == card
        assert canonical_card(card.lower()) == card
        assert canonical_card(card.upper()) == card


@pytest.mark.parametrize(
    "text",
    ["", "A", "h", "1h", "11h", "Ax", "Ahh", "A h", "0h", "01h", "10", "\uff21h", "A♥", None, 7],
)
def test_what_is_not_a_card_is_refused_naming_the_field(text: object) -> None:
    with pytest.raises(RuleError) as refused:
        canonical_card(text, "discard")
    assert refused.value.code == "invalid_card"
    assert refused.value.field == "discard"
    assert refused.value.detail == (
        f"{text!r} is not a card (rank 2-10, J, Q, K or A, then c, d, h or s)."
    )


def test_the_field_defaults_to_card() -> None:
    with pytest.raises(RuleError) as refused:
        canonical_card("Zz")
    assert refused.value.field == "card"


def test_rank_value_counts_from_two_to_the_ace() -> None:
    assert [rank_value(rank + "s") for rank in "23456789TJQKA"] == list(range(2, 15))


@given(st.text(max_size=5))
def test_any_text_is_a_card_of_the_deck_or_invalid_card(text: str) -> None:
    if text.strip()[:-1].upper() in ("10", *RANKS) and text.strip()[-1:].lower() in SUITS:
        assert canonical_card(text) in FULL_DECK
    else:
        with pytest.raises(RuleError, match="is not a card"):
            canonical_card(text)
