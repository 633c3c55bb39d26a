"""The fairness proof of a deal: one commitment, opened card by card.

Each of the 52 places in the shuffled deck gets a leaf that binds its card to the place
and hides it behind a salt of its own::

    leaf_i = hex(sha256(str(i) + ":" + card_i + ":" + salt_i))
    commitment = hex(sha256(",".join(leaf_0, ..., leaf_51)))

(UTF-8 text, lowercase hex.) The salts are 32 hex digits each, cut in order from one
SHAKE-256 output keyed by the deal's secret (`card_salts`); a verifier never needs to
derive them, it is given each one it may see. The commitment is published
when the deal starts. Once the deal is over, its hand history gives every leaf and opens
only the places whose cards the reader saw during the deal: the cards shown to
everyone, and to a seat the cards it was dealt or drew. Each opening is the place, the
card and salt_i, so anyone can recompute that leaf and the commitment, and see that the
deal was fixed before anyone acted. An unopened leaf tells nothing of its card: its salt
is 128 random-looking bits that only the server knows. So a Guts hand that went out, or
won the pot without showing (RULES.md 5), stays hidden from the others, as does a card
a Paiute player drew from the stock and kept.

The order of a Paiute reshuffle is keyed by another value derived from the secret
(under another label), `reshuffle_key`, which the history publishes: it orders cards
that were discarded face up, and tells nothing of the salts.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

FORMULA = (
    "commitment = sha256(','.join(leaf[i] for i in 0..51));"
    " leaf[i] = sha256(f'{i}:{card}:{salt_i}')"
)
SALT_DIGITS = 32
DECK_SIZE = 52
# the fields of an event's data that hold a card or a list of cards
_CARD_FIELDS = ("card", "cards", "discard")


def _stream(secret: str, label: str, digits: int) -> str:
    """`digits` hex digits of SHAKE-256 over the label and the secret."""
    return hashlib.shake_256(f"cardroom:{label}:{secret}".encode()).hexdigest(digits // 2)


def card_salts(secret: str) -> list[str]:
    """The salts that hide the cards at places 0..51 of a deal with this secret."""
    stream = _stream(secret, "card-salts", DECK_SIZE * SALT_DIGITS)
    return [stream[i : i + SALT_DIGITS] for i in range(0, len(stream), SALT_DIGITS)]


def leaf(position: int, card: str, salt: str) -> str:
    """The leaf of one place: sha256 hex of ``f"{position}:{card}:{salt}"``."""
    return hashlib.sha256(f"{position}:{card}:{salt}".encode()).hexdigest()


def leaves(cards: Sequence[str], secret: str) -> list[str]:
    """The 52 leaves of a deck, in dealing order."""
    sha256 = hashlib.sha256
    return [
        sha256(f"{i}:{card}:{salt}".encode()).hexdigest()
        for i, (card, salt) in enumerate(zip(cards, card_salts(secret), strict=True))
    ]


def root(all_leaves: Sequence[str]) -> str:
    """The commitment over the leaves: sha256 hex of them joined by commas."""
    return hashlib.sha256(",".join(all_leaves).encode()).hexdigest()


def commitment(cards: Sequence[str], secret: str) -> str:
    """The commitment a deal publishes when it starts."""
    return root(leaves(cards, secret))


def reshuffle_key(secret: str) -> str:
    """The key of a Paiute deal's reshuffle order; published by its hand history."""
    return _stream(secret, "reshuffle", SALT_DIGITS)


def cards_in(events: Iterable[Mapping[str, Any]]) -> set[str]:
    """Every card named in the events' data (hands shown at a showdown included)."""
    found: set[str] = set()

    def take(data: Mapping[str, Any]) -> None:
        for name in _CARD_FIELDS:
            value = data.get(name)
            if isinstance(value, str):
                found.add(value)
            elif isinstance(value, list):
                found.update(card for card in value if isinstance(card, str))

    for item in events:
        data = item.get("data") or {}
        take(data)
        for hand in (data.get("hands") or {}).values() if item.get("type") == "showdown" else ():
            take(hand)
    return found


def proof(
    cards: Sequence[str], secret: str, seen: Iterable[str], reshuffles: bool = False
) -> dict[str, Any]:
    """The proof for a reader who saw the cards `seen`: all leaves, those places opened.

    With `reshuffles` (Paiute), also the key of the reshuffle order.
    """
    places = {card: i for i, card in enumerate(cards)}
    opened = sorted(places[card] for card in set(seen) if card in places)
    all_leaves, salts = leaves(cards, secret), card_salts(secret)
    result: dict[str, Any] = {
        "formula": FORMULA,
        "commitment": root(all_leaves),
        "leaves": all_leaves,
        "opened": [{"position": i, "card": cards[i], "salt": salts[i]} for i in opened],
    }
    if reshuffles:
        result["reshuffle_key"] = reshuffle_key(secret)
    return result
