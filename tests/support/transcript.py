"""A transcript of everything each participant received, and its privacy check.

The rule, for either game: a body received by a viewer while deal n was the table's
deal may hold only cards that, by then, had been public in deal n (in an event every
one may see) or had been shown to that viewer privately in deal n; a finished deal's
fairness proof opens no other card. The server's own event log (read straight from
Redis, audiences included) is the source of truth.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from api.adapters.store import TableStore
from api.games.events import Event
from tests.support.gateway import Gateway
from tests.support.tables_api import Player

CARDS = {rank + suit for rank in "23456789TJQKA" for suit in "cdhs"}


def card_strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value that is a card text."""
    if isinstance(value, str):
        if value in CARDS:
            yield value
    elif isinstance(value, list):
        for item in value:
            yield from card_strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from card_strings(item)


def own_deal(body: Any, default: int) -> int:
    """The deal a table view (or a move's result holding one) shows, else `default`.

    A view names its deal itself; that beats the deal read around the request, since
    the clock may start the next deal between the two.
    """
    if isinstance(body, dict):
        if isinstance(body.get("hand_number"), int):
            return int(body["hand_number"])
        table = body.get("table")
        if isinstance(table, dict) and isinstance(table.get("hand_number"), int):
            return int(table["hand_number"])
        # a player's seats (`GET /v1/players/me/seats`): a seat at one table shows its view
        seats = body.get("seats")
        if isinstance(seats, list) and len(seats) == 1 and isinstance(seats[0], dict):
            return own_deal(seats[0], default)
    return default


@dataclass
class Received:
    """One body, who received it, and the table's deal and last event id at that time."""

    viewer: Participant | None
    deal: int
    seq: int
    body: Any


class Participant(Protocol):
    """A seat as the tests know it: a name and a seat number."""

    name: str
    seat: int


@dataclass
class Transcript:
    """Records bodies per participant; `check` applies the privacy rule to all of them.

    The table's truth is read from `store`, or else from the in-process gateway's app;
    a gateway in another process (gunicorn) is audited by giving its Redis as `store`.
    """

    # a Gateway, or any client whose call(method, path, viewer, ...) answers alike
    gateway: Gateway | Any
    table_id: str
    received: list[Received] = field(default_factory=list)
    store: TableStore | None = None

    def _store(self) -> TableStore:
        if self.store is not None:
            return self.store
        assert isinstance(self.gateway, Gateway)
        store: TableStore = self.gateway.app.extensions["cardroom.service"].store
        return store

    def _now(self) -> tuple[int, int]:
        record = self._store().load(self.table_id)
        assert record is not None
        deal = record.state["deal"]
        return (int(deal["number"]) if deal else 0), record.seq

    def call(self, viewer: Player | None, method: str, path: str, **kwargs: Any) -> Any:
        """A request whose JSON reply joins the transcript."""
        response = self.gateway.call(method, path, viewer, **kwargs)
        deal, seq = self._now()
        if response.is_json:
            self.received.append(Received(viewer, deal, seq, response.get_json()))
        return response

    def add(self, viewer: Participant | None, body: Any) -> None:
        """A body received some other way (a server-sent event)."""
        deal, seq = self._now()
        self.received.append(Received(viewer, deal, seq, body))

    def check(self) -> int:
        """Assert the rule over the whole transcript; how many card strings it checked."""
        log = self._store().events_after(self.table_id, 0, None)
        players: dict[str, int] = {}
        for item in log:
            if item["type"] == "seated":
                players[item["data"]["name"]] = item["id"]
        checked = 0
        for entry in self.received:
            for deal, seq, part in self._parts(entry):
                allowed = self._allowed(log, entry.viewer, deal, seq)
                found = set(card_strings(part))
                checked += len(found)
                leaked = found - allowed
                who = entry.viewer.name if entry.viewer else "a spectator"
                assert not leaked, f"{who} received {sorted(leaked)} of deal {deal}: {part}"
        return checked

    @staticmethod
    def _parts(entry: Received) -> Iterator[tuple[int, int, Any]]:
        body = entry.body
        if isinstance(body, dict) and isinstance(body.get("events"), list):
            history = "fairness" in body
            for item in body["events"]:
                deal = body["hand_number"] if history else item.get("hand_number", entry.deal)
                yield deal, max(entry.seq, item.get("id", 0)), item
            rest = {k: v for k, v in body.items() if k != "events"}
            yield own_deal(rest, entry.deal), entry.seq, rest
        elif isinstance(body, dict) and "hand_number" in body and "type" in body:
            yield body["hand_number"], max(entry.seq, body.get("id", 0)), body
        else:
            yield own_deal(body, entry.deal), entry.seq, body

    def _allowed(
        self, log: Sequence[Event], viewer: Participant | None, deal: int, seq: int
    ) -> set[str]:
        player_id = self._player_id(log, viewer)
        allowed: set[str] = set()
        for item in log:
            if item["id"] > seq or item["hand_number"] != deal:
                continue
            audience = item.get("audience")
            if audience is None or (player_id is not None and player_id in audience):
                allowed |= set(card_strings(item["data"]))
        return allowed

    def _player_id(self, log: Sequence[Event], viewer: Participant | None) -> int | None:
        if viewer is None:
            return None
        record = self._store().load(self.table_id)
        assert record is not None
        seat = record.state["seats"].get(str(viewer.seat))
        if seat is not None:
            return int(seat["player_id"])
        return None


# Card texts in free text (headers, log lines, metrics, error details), matched only in
# the forms the service writes them, so that "3c" inside a random hex id is no card: a
# quoted card ("Ah" in JSON, 'Ah' in a Python repr), a run of cards separated by spaces
# or commas (a hand "Ah Kd Qc", the commitment's deck string "Ah,Kd,...") and a card
# after a word that names one (card=Ah, discard: Ah). `bare` also counts any card text
# standing alone between non-alphanumerics, for short texts with no English in them.
_CARD = r"[2-9TJQKA][cdhs]"
_ALONE_BEFORE, _ALONE_AFTER = r"(?<![0-9A-Za-z])", r"(?![0-9A-Za-z])"
_CARD_FORMS = [
    re.compile(r"(?<=[\"'])" + _CARD + r"(?=[\"'])"),
    re.compile(_ALONE_BEFORE + _CARD + r"(?:(?:, ?| )" + _CARD + r")+" + _ALONE_AFTER),
    re.compile(
        r"(?i:card|cards|hand|hands|deck|stock|discard|drawn|wild)\W{1,4}("
        + _CARD
        + ")"
        + _ALONE_AFTER
    ),
]
_BARE = re.compile(_ALONE_BEFORE + _CARD + _ALONE_AFTER)


def card_mentions(text: str, bare: bool = False) -> set[str]:
    """The cards that `text` names in the service's forms (with `bare`, in any form)."""
    found: set[str] = set()
    for pattern in [*_CARD_FORMS, _BARE] if bare else _CARD_FORMS:
        for match in pattern.finditer(text):
            found |= set(re.findall(_CARD, match.group(match.lastindex or 0)))
    return found
