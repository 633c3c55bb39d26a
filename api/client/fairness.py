"""Check a finished deal's fairness proof from its hand history.

When a deal starts, the table publishes a commitment (in the ``deal_started`` event and
as ``deal.commitment`` in the table view): ``sha256(",".join(deck) + ":" + salt)`` over
the 52 cards in dealing order and a secret salt. The hand history reveals the deck and
salt once the deal is over. `verify_fairness` recomputes the digest, compares it with
the history's commitment, with the ``deal_started`` event and with the commitment the
caller saw before the deal (`announced`: the one that matters, since it was fixed
before anyone acted), and checks that every card it can see came from the right place
in that deck: hands are dealt one card at a time from the top, from the dealer's left
to the dealer (the Guts ghost after the dealer in each round); in Paiute the next card
is the wild card and the one after it starts the discard pile.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from api.client.errors import FairnessError
from api.client.models import Event, HandHistory

FORMULA = "sha256(','.join(deck) + ':' + salt)"
FULL_DECK = frozenset(rank + suit for rank in "23456789TJQKA" for suit in "cdhs")
PAIUTE_HAND = 5


@dataclass(frozen=True, slots=True)
class FairnessReport:
    """A proof that held: the commitment and each check that was made, in words."""

    hand_number: int
    commitment: str
    checks: tuple[str, ...]


def deck_commitment(deck: Sequence[str], salt: str) -> str:
    """The commitment of a deck and salt: sha256 hex of ``",".join(deck) + ":" + salt``."""
    return hashlib.sha256((",".join(deck) + ":" + salt).encode("utf-8")).hexdigest()


def dealt_hands(
    deck: Sequence[str], players: Sequence[int], cards_each: int, ghost: bool = False
) -> dict[str, list[str]]:
    """The hands the deck gives, by str(seat) (and "ghost"), one card at a time in turn."""
    holders = [str(seat) for seat in players] + (["ghost"] if ghost else [])
    count = len(holders)
    return {key: list(deck[i : cards_each * count : count]) for i, key in enumerate(holders)}


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
    they were dealt, as their owners saw them (``you.cards`` right after the deal).
    """
    proof = history.fairness
    checks: list[str] = []
    number = history.hand_number

    def fail(reason: str) -> FairnessError:
        return FairnessError(f"deal {number}: fairness proof FAILED: {reason}")

    if proof.formula and proof.formula != FORMULA:
        raise fail(f"unknown formula {proof.formula!r}")
    deck = list(proof.deck)
    if len(deck) != len(FULL_DECK) or set(deck) != FULL_DECK:
        raise fail(f"the revealed deck is not the 52 cards once each ({len(set(deck))} distinct)")
    checks.append("the revealed deck holds each of the 52 cards once")
    digest = deck_commitment(deck, proof.salt)
    if digest != proof.commitment:
        raise fail(f"sha256(deck + ':' + salt) is {digest}, the history says {proof.commitment}")
    checks.append("sha256(deck + ':' + salt) equals the history's commitment")
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
    if started is None:
        if dealt:
            raise fail("the history has no deal_started event to tell the dealing order")
        return FairnessReport(number, digest, tuple(checks))
    players = [int(seat) for seat in started.data.get("players") or ()]
    guts = "cards" in started.data
    cards_each = int(started.data["cards"]) if guts else PAIUTE_HAND
    ghost = bool(started.data.get("ghost", False))
    hands = dealt_hands(deck, players, cards_each, ghost)
    dealt_count = cards_each * len(hands)

    def check_hand(key: str, cards: Sequence[str], whose: str) -> None:
        expected = hands.get(key)
        if expected is None:
            raise fail(f"{whose} holds {list(cards)} but was not dealt in")
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
    else:
        wild = deck[dealt_count]
        for where, card in (
            ("the history's wild card", history.wild_card),
            ("the wild_card event", _data(history.events, "wild_card", "card")),
        ):
            if card is not None and card != wild:
                raise fail(f"{where} is {card}, the deck's next card is {wild}")
        starter = _data(history.events, "discard_started", "card")
        if starter is not None and starter != deck[dealt_count + 1]:
            raise fail(f"the discard pile started with {starter}, not {deck[dealt_count + 1]}")
        checks.append(f"the wild card {wild} and the first discard follow the dealt cards")
    return FairnessReport(number, digest, tuple(checks))


def _data(events: Sequence[Event], kind: str, key: str) -> Any:
    found = _first(events, kind)
    return None if found is None else found.data.get(key)


def _shown_hands(history: HandHistory) -> dict[str, list[str]]:
    """Guts: the hands shown at the showdown, which are the hands as dealt."""
    hands = (history.showdown or {}).get("hands") or {}
    return {str(key): list(hand["cards"]) for key, hand in hands.items() if hand.get("cards")}
