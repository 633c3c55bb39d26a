"""The games a table can be, and the card text their moves name."""

from __future__ import annotations

from collections.abc import Mapping
from types import ModuleType
from typing import Any

from gateway.errors import ApiError
from gateway.games import guts, paiute

GAMES: dict[str, ModuleType] = {"guts": guts, "paiute": paiute}
MOVES = {
    "guts": frozenset({"start", "declare", "rebuy"}),
    "paiute": frozenset({"start", "rebuy", "draw", "discard", "call"}),
}


def shown_cards(action: Mapping[str, Any]) -> tuple[list[str], str | None]:
    """A Paiute call's shown cards and discard (None: all six shown), in canonical form."""
    cards = [canonical_card(card, "cards") for card in action["cards"]]
    spare = action.get("discard")
    return cards, None if spare is None else canonical_card(spare, "discard")


_RANKS = {"10": "T", **{rank: rank for rank in "23456789TJQKA"}}


def canonical_card(text: str, field: str) -> str:
    """A card as the rules write it ("Ah", "Td"), from any spelling ("ah", "10d")."""
    cleaned = text.strip()
    rank = _RANKS.get(cleaned[:-1].upper())
    suit = cleaned[-1:].lower()
    if rank is None or suit not in ("c", "d", "h", "s"):
        raise ApiError(
            422,
            "invalid_card",
            "Invalid card",
            f"{text!r} is not a card (rank 2-10, J, Q, K or A, then c, d, h or s).",
            field=field,
        )
    return rank + suit
