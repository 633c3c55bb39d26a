"""A transcript of everything each participant received, and its privacy check.

The rule, for either game: a body received by a viewer while deal n was the table's
deal may hold only cards that, by then, had been public in deal n (in an event every
one may see) or had been shown to that viewer privately in deal n. A finished deal's
fairness proof, which reveals the deck, is the one exception. The server's own event
log (read straight from Redis, audiences included) is the source of truth.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from tests.integration.conftest import Gateway, Player

CARDS = {rank + suit for rank in "23456789TJQKA" for suit in "cdhs"}


def card_strings(value: Any) -> Iterator[str]:
    """Every string in a JSON value that is a card text, the fairness proof skipped."""
    if isinstance(value, str):
        if value in CARDS:
            yield value
    elif isinstance(value, list):
        for item in value:
            yield from card_strings(item)
    elif isinstance(value, dict):
        for key, item in value.items():
            if key != "fairness":
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
    return default


@dataclass
class Received:
    """One body, who received it, and the table's deal and last event id at that time."""

    viewer: Player | None
    deal: int
    seq: int
    body: Any


@dataclass
class Transcript:
    """Records bodies per participant; `check` applies the privacy rule to all of them."""

    gateway: Gateway
    table_id: str
    received: list[Received] = field(default_factory=list)

    def _now(self) -> tuple[int, int]:
        record = self.gateway.app.extensions["cardroom.service"].store.load(self.table_id)
        deal = record.state["deal"]
        return (int(deal["number"]) if deal else 0), record.seq

    def call(self, viewer: Player | None, method: str, path: str, **kwargs: Any) -> Any:
        """A request whose JSON reply joins the transcript."""
        response = self.gateway.call(method, path, viewer, **kwargs)
        deal, seq = self._now()
        if response.is_json:
            self.received.append(Received(viewer, deal, seq, response.get_json()))
        return response

    def add(self, viewer: Player | None, body: Any) -> None:
        """A body received some other way (a server-sent event)."""
        deal, seq = self._now()
        self.received.append(Received(viewer, deal, seq, body))

    def check(self) -> int:
        """Assert the rule over the whole transcript; how many card strings it checked."""
        store = self.gateway.app.extensions["cardroom.service"].store
        log = store.events_after(self.table_id, 0, None)
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
        self, log: list[dict[str, Any]], viewer: Player | None, deal: int, seq: int
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

    def _player_id(self, log: list[dict[str, Any]], viewer: Player | None) -> int | None:
        if viewer is None:
            return None
        record = self.gateway.app.extensions["cardroom.service"].store.load(self.table_id)
        seat = record.state["seats"].get(str(viewer.seat))
        if seat is not None:
            return int(seat["player_id"])
        return None
