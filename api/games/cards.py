"""Cards as the rules write them: a rank of ``23456789TJQKA`` and a suit of ``cdhs``.

``"Ah"`` is the ace of hearts, ``"Td"`` the ten of diamonds. Players may type a card
in any case and a ten as ``10``; `canonical_card` turns what they typed into this form.
"""

from __future__ import annotations

from api.games.common import FULL_DECK, RANKS, SUITS, RuleError

__all__ = [
    "FULL_DECK",
    "HAND_SIZES",
    "RANKS",
    "SUITS",
    "canonical_card",
    "canonical_hand",
    "rank_value",
]

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


# how many cards a hand of each of the evaluator's games holds
HAND_SIZES: dict[str, tuple[int, ...]] = {"guts2": (2,), "guts3": (3,), "paiute": (5, 6)}


def canonical_hand(text: str, game: str, field: str) -> str:
    """The hand `text` names (cards separated by spaces or commas, each as
    `canonical_card` reads it) in canonical text, "Ah Td Tc"; RuleError invalid_card for
    a card it cannot read and invalid_hand for a card twice or a count `game`'s hands
    never hold, naming `field`."""
    cards = [canonical_card(card, field) for card in text.replace(",", " ").split() if card.strip()]
    sizes = HAND_SIZES[game]
    if len(cards) not in sizes:
        raise RuleError(
            "invalid_hand",
            "A {game} hand holds {sizes} cards; this one holds {count}.",
            field,
            game=game,
            sizes=" or ".join(str(size) for size in sizes),
            count=len(cards),
        )
    seen: set[str] = set()
    for card in cards:
        if card in seen:
            raise RuleError(
                "invalid_hand", "The card {card} is in the hand twice.", field, card=card
            )
        seen.add(card)
    return " ".join(cards)


def rank_value(card: str) -> int:
    """The rank of a card as a number: 2 to 10, then 11 (jack) to 14 (ace)."""
    return RANKS.index(card[0]) + 2
