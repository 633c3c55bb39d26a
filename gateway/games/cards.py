"""Cards as the rules write them: a rank of ``23456789TJQKA`` and a suit of ``cdhs``.

``"Ah"`` is the ace of hearts, ``"Td"`` the ten of diamonds. Players may type a card
in any case and a ten as ``10``; `canonical_card` turns what they typed into this form.
"""

from __future__ import annotations

from gateway.games.common import FULL_DECK, RANKS, SUITS, RuleError

__all__ = ["FULL_DECK", "RANKS", "SUITS", "canonical_card", "rank_value"]

_SUITS = frozenset(SUITS)
# every spelling of a rank, upper-cased, and the rank it names
_RANK_SPELLINGS = {"10": "T", **{rank: rank for rank in RANKS}}


def canonical_card(text: object, field: str = "card") -> str:
    """The card `text` names ("ah" and " AH " are "Ah", "10d" is "Td"), or RuleError
    invalid_card naming `field`."""
    if isinstance(text, str):
        cleaned = text.strip()
        rank = _RANK_SPELLINGS.get(cleaned[:-1].upper())
        suit = cleaned[-1:].lower()
        if rank is not None and suit in _SUITS:
            return rank + suit
    raise RuleError(
        "invalid_card",
        "{text!r} is not a card (rank 2-10, J, Q, K or A, then c, d, h or s).",
        field,
        text=text,
    )


def rank_value(card: str) -> int:
    """The rank of a card as a number: 2 to 10, then 11 (jack) to 14 (ace)."""
    return RANKS.index(card[0]) + 2
