"""The fairness proof of a deal: one commitment, opened card by card.

Each of the 52 places in the shuffled deck gets a leaf that binds its card to the place
and hides it behind a salt of its own::

    leaf_i = hex(sha256(str(i) + ":" + card_i + ":" + salt_i))
    commitment = hex(sha256(",".join(leaf_0, ..., leaf_51)))

(UTF-8 text, lowercase hex.) The salts are 32 hex digits each, cut in order from one
SHAKE-256 output keyed by the deal's secret (`card_salts`); a verifier never needs to
derive them, it is given each one it may see. The commitment is published when the deal
starts. Once the deal is over, its hand history gives every leaf and opens only the
places whose cards the reader saw come off the deck (`cards_off_the_deck`): its own
dealt cards and draws, Paiute's wild card and first discard, the hands shown at a Guts
showdown. Each opening is the place, the card and salt_i, so anyone can recompute that
leaf and the commitment, and see that the deal was fixed before anyone acted. An
unopened leaf tells nothing of its card: its salt is 128 random-looking bits that only
the server knows. So a Guts hand that went out, or won the pot without showing (docs/rules.md
5), stays hidden from the others, as does a card a Paiute player drew from the stock and
kept, or where a card it discarded or showed came from.

A Paiute reshuffle orders the discards (all seen face up) by a key derived from the
secret under another label (`reshuffle_key`, which never leaves the server). Its
``reshuffled`` event publishes a commitment of the same kind over the new stock
(`reshuffle_commitment`: leaves ``sha256(f"r{n}:{j}:{card}:{salt}")``), and the history
opens to each seat the places of it that the seat drew (`stock_draws_seen`), so nobody
learns who drew which discard.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import NotRequired, TypedDict

from api.games.events import Event

FORMULA = (
    "commitment = sha256(','.join(leaf[i] for i in 0..51));"
    " leaf[i] = sha256(f'{i}:{card}:{salt_i}')"
)
SALT_DIGITS = 32
DECK_SIZE = 52


class Opening(TypedDict):
    """One place of the deck opened: its card and the salt that hid it."""

    position: int
    card: str
    salt: str


class Opened(TypedDict):
    """Every leaf, their root (the commitment) and the places opened to the reader."""

    commitment: str
    leaves: list[str]
    opened: list[Opening]


class ReshuffleProof(Opened):
    """A reshuffled stock's proof, by its number in the deal (1, 2, ...)."""

    number: int


class Proof(Opened):
    """A deal's fairness proof for one reader, and its reshuffles' (Paiute)."""

    formula: str
    reshuffles: NotRequired[list[ReshuffleProof]]


def _stream(secret: str, label: str, digits: int) -> str:
    """`digits` hex digits of SHAKE-256 over the label and the secret."""
    return hashlib.shake_256(f"cardroom:{label}:{secret}".encode()).hexdigest(digits // 2)


def _salts(secret: str, label: str, count: int) -> list[str]:
    stream = _stream(secret, label, count * SALT_DIGITS)
    return [stream[i : i + SALT_DIGITS] for i in range(0, len(stream), SALT_DIGITS)]


def card_salts(secret: str) -> list[str]:
    """The salts that hide the cards at places 0..51 of a deal with this secret."""
    return _salts(secret, "card-salts", DECK_SIZE)


def reshuffle_salts(secret: str, number: int, count: int) -> list[str]:
    """The salts that hide the places 0..count-1 of the deal's `number`-th reshuffled stock."""
    return _salts(secret, f"reshuffle-{number}-salts", count)


def leaf(position: int, card: str, salt: str, prefix: str = "") -> str:
    """The leaf of one place: sha256 hex of ``f"{prefix}{position}:{card}:{salt}"`` (the
    prefix is ``r{n}:`` for the n-th reshuffled stock, empty for the deck)."""
    return hashlib.sha256(f"{prefix}{position}:{card}:{salt}".encode()).hexdigest()


def _leaves(cards: Sequence[str], salts: Sequence[str], prefix: str = "") -> list[str]:
    return [
        leaf(i, card, salt, prefix) for i, (card, salt) in enumerate(zip(cards, salts, strict=True))
    ]


def leaves(cards: Sequence[str], secret: str) -> list[str]:
    """The 52 leaves of a deck, in dealing order."""
    return _leaves(cards, card_salts(secret))


def root(all_leaves: Sequence[str]) -> str:
    """The commitment over the leaves: sha256 hex of them joined by commas."""
    return hashlib.sha256(",".join(all_leaves).encode()).hexdigest()


def commitment(cards: Sequence[str], secret: str) -> str:
    """The commitment a deal publishes when it starts."""
    return root(leaves(cards, secret))


def reshuffle_leaves(order: Sequence[str], secret: str, number: int) -> list[str]:
    """The leaves of a reshuffled stock, top first: sha256 of ``f"r{n}:{j}:{card}:{salt}"``."""
    return _leaves(order, reshuffle_salts(secret, number, len(order)), f"r{number}:")


def reshuffle_commitment(order: Sequence[str], secret: str, number: int) -> str:
    """What the `reshuffled` event publishes: sha256 of the new stock's leaves joined."""
    return root(reshuffle_leaves(order, secret, number))


def _opened(
    cards: Sequence[str], salts: Sequence[str], places: Iterable[int], prefix: str = ""
) -> Opened:
    """Leaves over `cards`, their root, and the openings of `places` (in order)."""
    all_leaves = _leaves(cards, salts, prefix)
    return {
        "commitment": root(all_leaves),
        "leaves": all_leaves,
        "opened": [{"position": i, "card": cards[i], "salt": salts[i]} for i in sorted(places)],
    }


def stock_draws_seen(events: Iterable[Event]) -> dict[int, list[int]]:
    """By reshuffle number (1, 2, ...), the places of that stock whose card the reader
    drew, from the events it may see: the draws from the stock are public, the card
    drawn only its drawer's (`drew_card`)."""
    seen: dict[int, list[int]] = {}
    number, drawn = 0, 0
    for item in events:
        if item["type"] == "reshuffled":
            number, drawn = item["data"]["number"], 0
        elif item["type"] == "drew" and item["data"].get("source") == "stock":
            drawn += 1
        elif item["type"] == "drew_card" and number:
            seen.setdefault(number, []).append(drawn - 1)
    return seen


def reshuffle_proofs(
    orders: Sequence[Sequence[str]], secret: str, seen: Mapping[int, Sequence[int]]
) -> list[ReshuffleProof]:
    """Each reshuffle's commitment and leaves, opening the places in `seen` (by number)."""
    proofs: list[ReshuffleProof] = []
    for number, order in enumerate(orders, start=1):
        places = set(seen.get(number, ())) & set(range(len(order)))
        salts = reshuffle_salts(secret, number, len(order))
        proofs.append({"number": number, **_opened(order, salts, places, f"r{number}:")})
    return proofs


def reshuffle_key(secret: str) -> str:
    """The key of a Paiute deal's reshuffle order; it never leaves the server."""
    return _stream(secret, "reshuffle", SALT_DIGITS)


def cards_off_the_deck(events: Iterable[Event], game: str) -> set[str]:
    """The cards the reader saw come off the deck, from the events it may see.

    Those are the cards whose places the proof may open to it: its own dealt cards
    (``cards_dealt``), Paiute's wild card and first discard, its own draws from the
    deck's stock (``drew_card`` before any reshuffle; a reshuffled stock has proofs of
    its own), and the hands shown at a Guts showdown (shown as dealt). A Paiute card that
    is discarded or shown is seen, but not where it came from (dealt, or drawn when), so
    its place stays closed.
    """
    found: set[str] = set()
    reshuffled = False
    for item in events:
        # read with .get: a history's showdown may come with no hands, or hands unranked
        if item["type"] == "cards_dealt":
            found.update(item["data"].get("cards") or ())
        elif item["type"] == "wild_card" or item["type"] == "discard_started":
            found.add(item["data"]["card"])
        elif item["type"] == "reshuffled":
            reshuffled = True
        elif item["type"] == "drew_card" and not reshuffled:
            found.add(item["data"]["card"])
        elif item["type"] == "showdown" and game == "guts":
            for hand in (item["data"].get("hands") or {}).values():
                found.update(hand.get("cards") or ())
    return found


def proof(
    cards: Sequence[str],
    secret: str,
    seen: Iterable[str],
    reshuffles: Sequence[Sequence[str]] | None = None,
    draws_seen: Mapping[int, Sequence[int]] | None = None,
) -> Proof:
    """The proof for a reader who saw the cards `seen` come off the deck: all leaves,
    those places opened. With `reshuffles` (Paiute: each reshuffled stock, top first),
    also each reshuffle's proof, opening the places of it in `draws_seen`."""
    places = {card: i for i, card in enumerate(cards)}
    opened = {places[card] for card in set(seen) if card in places}
    deck = _opened(cards, card_salts(secret), opened)
    result: Proof = {
        "formula": FORMULA,
        "commitment": deck["commitment"],
        "leaves": deck["leaves"],
        "opened": deck["opened"],
    }
    if reshuffles is not None:
        result["reshuffles"] = reshuffle_proofs(reshuffles, secret, draws_seen or {})
    return result
