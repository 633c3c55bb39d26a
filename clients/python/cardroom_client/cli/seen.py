"""What this terminal saw of each deal while it happened: the commitment announced when
the deal began and, at a seat, the cards dealt to it.

A fairness proof checked against the hand history alone shows only that the history
agrees with itself; checked against what was seen before anyone acted, it shows that
the deck was fixed then (`verify_fairness`'s `announced` and `dealt`). The table's
screen notes both as its events arrive, and `cardroom verify` reads them back. They are
kept in the user's state directory, one JSON line a deal, owner-only (the lines hold the
player's own cards).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cardroom_client.cli.config import normal_gateway, read_private, state_directory, write_private
from cardroom_client.models import Event

# the lines kept: about 300 bytes each
KEPT_DEALS = 2000


@dataclass
class SeenDeal:
    """One deal as this terminal saw it."""

    gateway: str
    table_id: str
    hand_number: int
    commitment: str | None = None
    seat: int | None = None
    dealt: tuple[str, ...] | None = None

    def to_json(self) -> dict[str, Any]:
        """The deal as its line holds it."""
        return {
            "gateway": self.gateway,
            "table": self.table_id,
            "hand": self.hand_number,
            "commitment": self.commitment,
            "seat": self.seat,
            "dealt": None if self.dealt is None else list(self.dealt),
        }


class SeenDeals:
    """The deals seen, read from and appended to `path` (seen.jsonl in the state directory)."""

    def __init__(self, gateway: str, path: Path | None = None) -> None:
        """The deals seen at `gateway`."""
        self.gateway = normal_gateway(gateway)
        self.path = path or state_directory() / "seen.jsonl"
        self.open: dict[tuple[str, int], SeenDeal] = {}

    def note(self, table_id: str, event: Event) -> None:
        """Take what `event` shows of its deal; a deal's end writes its line."""
        key = (table_id, event.hand_number)
        if event.type == "deal_started":
            self.open[key] = SeenDeal(
                self.gateway, table_id, event.hand_number, str(event.data["commitment"])
            )
        elif event.type == "cards_dealt" and key in self.open:
            self.open[key].seat = int(event.data["seat"])
            self.open[key].dealt = tuple(event.data["cards"])
        elif event.type == "deal_ended" and key in self.open:
            self.keep(self.open.pop(key))

    def keep(self, deal: SeenDeal) -> None:
        """Add a deal's line, dropping the oldest past `KEPT_DEALS`."""
        lines = self._lines()[-(KEPT_DEALS - 1) :]
        lines.append(json.dumps(deal.to_json(), sort_keys=True))
        write_private(self.path, "\n".join(lines) + "\n")

    def find(self, table_id: str, hand_number: int) -> SeenDeal | None:
        """What was seen of deal `hand_number` at `table_id`, if this terminal saw it."""
        for line in reversed(self._lines()):
            item = json.loads(line)
            if (item["gateway"], item["table"], item["hand"]) == (
                self.gateway,
                table_id,
                hand_number,
            ):
                dealt = item.get("dealt")
                return SeenDeal(
                    self.gateway,
                    table_id,
                    hand_number,
                    item.get("commitment"),
                    item.get("seat"),
                    None if dealt is None else tuple(dealt),
                )
        return None

    def _lines(self) -> list[str]:
        text = read_private(self.path)
        return [line for line in (text or "").splitlines() if line.strip()]
