"""Check a finished deal's fairness proof from its hand history.

When a deal starts, the table publishes a commitment (in the ``deal_started`` event and
as ``deal.commitment`` in the table view). Each of the 52 places of the shuffled deck
has a leaf, ``sha256(f"{i}:{card}:{salt_i}")``, that binds its card to its place behind
a salt of its own, and the commitment is ``sha256(",".join(leaves))``. Once the deal is
over, the hand history gives all 52 leaves and opens (place, card, salt) only the
places whose cards the reader saw: the cards shown to everyone and, when read with a
seat's token, the cards that seat was dealt or drew. The cards nobody was shown stay
hidden, since a leaf tells nothing of its card without its salt.

`verify_fairness` recomputes the commitment from the leaves and compares it with the
history's, with the ``deal_started`` event and with the commitment the caller saw before
the deal (`announced`: the one that matters, since it was fixed before anyone acted);
recomputes every opened leaf; and checks that every card it can see came from the right
place: hands are dealt one card at a time from the top, from the dealer's left to the
dealer (the Guts ghost after the dealer in each round); in Paiute the next card is the
wild card and the one after it starts the discard pile, and cards drawn from the stock
come from the places after it, in order, until the first reshuffle. Each Paiute
reshuffle publishes a commitment of the same kind over its new stock (leaves
``sha256(f"r{n}:{j}:{card}:{salt}")``); the history gives its leaves and opens the
places the reader drew, which must match the reader's draws from it, in order.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cardroom_client.errors import FairnessError
from cardroom_client.models import SLOTS, Event, HandHistory

FORMULA = (
    "commitment = sha256(','.join(leaf[i] for i in 0..51));"
    " leaf[i] = sha256(f'{i}:{card}:{salt_i}')"
)
FULL_DECK = frozenset(rank + suit for rank in "23456789TJQKA" for suit in "cdhs")
DECK_SIZE = 52
PAIUTE_HAND = 5
_DIGEST = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True, **SLOTS)
class FairnessReport:
    """A proof that held: the commitment and each check that was made, in words."""

    hand_number: int
    commitment: str
    checks: tuple[str, ...]


def leaf_digest(position: int, card: str, salt: str) -> str:
    """The leaf of one place of the deck: sha256 hex of ``f"{position}:{card}:{salt}"``."""
    return hashlib.sha256(f"{position}:{card}:{salt}".encode()).hexdigest()


def deck_commitment(leaves: Sequence[str]) -> str:
    """The commitment over the 52 leaves: sha256 hex of them joined by commas."""
    return hashlib.sha256(",".join(leaves).encode()).hexdigest()


def dealt_places(
    players: Sequence[int], cards_each: int, ghost: bool = False
) -> dict[str, list[int]]:
    """The places in the deck each hand is dealt from, by str(seat) (and "ghost")."""
    holders = [str(seat) for seat in players] + (["ghost"] if ghost else [])
    count = len(holders)
    return {key: list(range(i, cards_each * count, count)) for i, key in enumerate(holders)}


def _first(events: Sequence[Event], kind: str) -> Event | None:
    return next((item for item in events if item.type == kind), None)


def _same_cards(a: Sequence[str], b: Sequence[str]) -> bool:
    return sorted(card.upper() for card in a) == sorted(card.upper() for card in b)


def verify_fairness(
    history: HandHistory,
    *,
    announced: str | None = None,
    dealt: Mapping[int, Sequence[str]] | None = None,
) -> FairnessReport:
    """Check the history's proof; FairnessError naming the first check that fails.

    `announced` is the commitment seen when the deal started (from the table view's
    ``deal.commitment`` or the ``deal_started`` event); `dealt` maps seats to the cards
    they were dealt, as their owners saw them (``you.cards`` right after the deal). The
    proof opens a seat's places only to that seat, so check a seat's cards on the
    history read with its token.
    """
    proof = history.fairness
    checks: list[str] = []
    number = history.hand_number

    def fail(reason: str) -> FairnessError:
        return FairnessError(f"deal {number}: fairness proof FAILED: {reason}")

    if proof.formula and proof.formula != FORMULA:
        raise fail(f"unknown formula {proof.formula!r}")
    leaves = list(proof.leaves)
    if len(leaves) != DECK_SIZE or not all(_DIGEST.fullmatch(item) for item in leaves):
        raise fail(f"the proof holds {len(leaves)} leaves, not 52 sha256 digests")
    digest = deck_commitment(leaves)
    if digest != proof.commitment:
        raise fail(f"sha256 of the leaves is {digest}, the history says {proof.commitment}")
    checks.append("sha256 of the 52 leaves equals the history's commitment")
    started = _first(history.events, "deal_started")
    if started is not None:
        published = started.data.get("commitment")
        if published != digest:
            raise fail(f"the deal_started event published {published}, not {digest}")
        checks.append("the deal_started event published that commitment")
    if announced is not None:
        if announced != digest:
            raise fail(f"the commitment announced before the deal was {announced}, not {digest}")
        checks.append("it is the commitment announced before the deal")
    opened: dict[int, str] = {}
    for opening in proof.opened:
        place, card = opening.position, opening.card
        if place in opened or not 0 <= place < DECK_SIZE:
            raise fail(f"place {place} is opened twice or is no place of the deck")
        if card not in FULL_DECK:
            raise fail(f"place {place} opens {card!r}, which is no card")
        if leaf_digest(place, card, opening.salt) != leaves[place]:
            raise fail(f"the opening of place {place} ({card}) is not its leaf")
        opened[place] = card
    if len(set(opened.values())) != len(opened):
        raise fail("a card is opened at two places")
    checks.append(f"the {len(opened)} opened place(s) match their leaves, no card twice")
    if started is None:
        if dealt:
            raise fail("the history has no deal_started event to tell the dealing order")
        return FairnessReport(number, digest, tuple(checks))
    players = [int(seat) for seat in started.data.get("players") or ()]
    guts = "cards" in started.data
    cards_each = int(started.data["cards"]) if guts else PAIUTE_HAND
    ghost = bool(started.data.get("ghost", False))
    places = dealt_places(players, cards_each, ghost)
    dealt_count = cards_each * len(places)

    def at(place: int, what: str) -> str:
        card = opened.get(place)
        if card is None:
            raise fail(f"the proof does not open place {place} ({what}) to this reader")
        return card

    def check_hand(key: str, cards: Sequence[str], whose: str) -> None:
        if key not in places:
            raise fail(f"{whose} holds {list(cards)} but was not dealt in")
        expected = [at(place, whose) for place in places[key]]
        if not _same_cards(cards, expected):
            raise fail(f"{whose} holds {list(cards)}, the deck dealt it {expected}")

    private = [item for item in history.events if item.type == "cards_dealt"]
    for item in private:
        check_hand(str(item.data.get("seat")), item.data.get("cards") or (), "seat's dealt cards")
    if private:
        checks.append(f"the cards dealt to {len(private)} seat(s) match the deck's order")
    for seat, cards in (dealt or {}).items():
        check_hand(str(seat), cards, f"seat {seat}")
    if dealt:
        checks.append(f"the hands seen by {len(dealt)} seat(s) match the deck's order")
    if guts:
        shown = _shown_hands(history)
        for key, cards in shown.items():
            check_hand(key, cards, f"the hand shown for {key}")
        if shown:
            checks.append(f"the {len(shown)} hand(s) shown at the showdown match the deck")
        return FairnessReport(number, digest, tuple(checks))
    wild = at(dealt_count, "the wild card")
    for where, named in (
        ("the history's wild card", history.wild_card),
        ("the wild_card event", _data(history.events, "wild_card", "card")),
    ):
        if named is not None and named != wild:
            raise fail(f"{where} is {named}, the deck's next card is {wild}")
    starter = _data(history.events, "discard_started", "card")
    if starter is not None and starter != at(dealt_count + 1, "the first discard"):
        raise fail(f"the discard pile started with {starter}, not {opened[dealt_count + 1]}")
    checks.append(f"the wild card {wild} and the first discard follow the dealt cards")
    drawn = _stock_draws(history.events)
    for offset, (seat, drew) in enumerate(drawn):
        place = dealt_count + 2 + offset
        if drew is not None and drew != at(place, f"seat {seat}'s draw"):
            raise fail(f"seat {seat} drew {drew}, the stock's card was {opened[place]}")
    known = sum(1 for _, drew in drawn if drew is not None)
    if known:
        checks.append(f"the {known} card(s) drawn from the stock seen here come from it in order")
    checks += _check_reshuffles(history, fail)
    return FairnessReport(number, digest, tuple(checks))


def _check_reshuffles(history: HandHistory, fail: Callable[[str], FairnessError]) -> list[str]:
    """Paiute: each reshuffle's proof against its event, and the reader's draws from it."""
    checks = []
    published = {
        int(item.data["number"]): item.data
        for item in history.events
        if item.type == "reshuffled" and "number" in item.data
    }
    proofs = {proof.number: proof for proof in history.fairness.reshuffles}
    if set(published) - set(proofs):
        raise fail(f"reshuffles {sorted(set(published) - set(proofs))} have no proof")
    draws = _reshuffled_draws(history.events)
    for number, proof in sorted(proofs.items()):
        leaves = list(proof.leaves)
        if not all(_DIGEST.fullmatch(item) for item in leaves):
            raise fail(f"reshuffle {number}: its leaves are not sha256 digests")
        digest = deck_commitment(leaves)
        event = published.get(number)
        if digest != proof.commitment or (event is not None and event.get("commitment") != digest):
            raise fail(f"reshuffle {number}: sha256 of its leaves is not the commitment published")
        if event is not None and event.get("stock") != len(leaves):
            raise fail(f"reshuffle {number}: {len(leaves)} leaves for a stock of {event['stock']}")
        opened: dict[int, str] = {}
        for opening in proof.opened:
            place, card = opening.position, opening.card
            if not 0 <= place < len(leaves) or place in opened or card not in FULL_DECK:
                raise fail(f"reshuffle {number}: place {place} ({card!r}) cannot be opened")
            if reshuffle_leaf(number, place, card, opening.salt) != leaves[place]:
                raise fail(f"reshuffle {number}: the opening of place {place} is not its leaf")
            opened[place] = card
        for place, card in draws.get(number, []):
            if opened.get(place) != card:
                raise fail(f"reshuffle {number}: drew {card}, the proof's place {place} disagrees")
        checks.append(
            f"reshuffle {number}: its leaves hash to the commitment it published; the"
            f" {len(draws.get(number, []))} draw(s) from it seen here come from it in order"
        )
    return checks


def reshuffle_leaf(number: int, position: int, card: str, salt: str) -> str:
    """A leaf of the `number`-th reshuffled stock: sha256 hex of ``f"r{n}:{j}:{card}:{salt}"``."""
    return hashlib.sha256(f"r{number}:{position}:{card}:{salt}".encode()).hexdigest()


def _reshuffled_draws(events: Sequence[Event]) -> dict[int, list[tuple[int, str]]]:
    """By reshuffle number, the places of that stock drawn and the cards seen drawn."""
    draws: dict[int, list[tuple[int, str]]] = {}
    number, drawn = 0, 0
    for item in events:
        if item.type == "reshuffled":
            number, drawn = int(item.data["number"]), 0
        elif item.type == "drew" and item.data.get("source") == "stock":
            drawn += 1
        elif item.type == "drew_card" and number:
            draws.setdefault(number, []).append((drawn - 1, str(item.data["card"])))
    return draws


def _stock_draws(events: Sequence[Event]) -> list[tuple[int, str | None]]:
    """Paiute: each draw from the stock before the first reshuffle, and its card if seen."""
    draws: list[tuple[int, str | None]] = []
    for item in events:
        if item.type == "reshuffled":
            break
        if item.type == "drew" and item.data.get("source") == "stock":
            draws.append((int(item.data["seat"]), None))
        elif item.type == "drew_card" and draws and draws[-1][0] == item.data.get("seat"):
            draws[-1] = (draws[-1][0], str(item.data["card"]))
    return draws


def _data(events: Sequence[Event], kind: str, key: str) -> Any:
    found = _first(events, kind)
    return None if found is None else found.data.get(key)


def _shown_hands(history: HandHistory) -> dict[str, list[str]]:
    """Guts: the hands shown at the showdown, which are the hands as dealt."""
    hands = (history.showdown or {}).get("hands") or {}
    return {str(key): list(hand["cards"]) for key, hand in hands.items() if hand.get("cards")}
