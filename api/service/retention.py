"""How long a table and its past are kept: idle tables closed, old deals trimmed.

The hand histories of the last `history_deals` deals are kept, and the events from the
first event of the oldest kept deal on; older ones are trimmed when a deal ends, and
asking for them answers 410 `history_trimmed`. A table without a player's move for
`idle_seconds` is closed by the clock: every seat is cashed out (`cashed_out` events,
then `table_closed`), a closing record is kept for `closed_record_seconds` (the
`closing` member of the 410), the table leaves the lobby and its keys expire
`CLOSE_GRACE_SECONDS` later; until then and after it, the table answers 410
`table_closed`.

A table its creator or an operator closes (`api.service.closing`) closes the same way,
with the reason "closed"; its hand histories and events are kept as long as its closing
record, and the closing record keeps who sat there, so each player still reads their
own deals with their own cards.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NotRequired, TypedDict

from api import jsonio
from api.adapters.store import Close, Commit, TableRecord, Trim, closed_key
from api.games.common import RuleError, copy_state
from api.games.events import Event
from api.games.state import Account, CashedOut, TableState
from api.service.dispatch import game_of
from api.service.history import forget_departed

# watchers still receive a closed table's last events for this long; then its keys go
CLOSE_GRACE_SECONDS = 60
# hand histories deleted by one commit at most, so lowering HISTORY_DEALS stays cheap
MAX_HANDS_DROPPED = 1000


class ClosedLedger(TypedDict):
    """A closed table's last figures."""

    hands_played: int
    chips_bought: int
    chips_cashed: int
    pot: int
    reserve: int


class ClosingRecord(TypedDict):
    """What is kept of a closed table (`table:{id}:closed`); `accounts` (who sat there,
    kept for a table closed on request, never shown) lets players read their deals."""

    table_id: str
    name: str | None
    game: str
    created_at: float
    closed_at: float
    reason: str
    idle_seconds: float
    cashed_out: list[CashedOut]
    ledger: ClosedLedger
    last_event: int | None
    accounts: NotRequired[dict[str, Account]]


def active_at(state: TableState) -> float:
    """When the table was last played at (created, for one never played)."""
    return state.get("active_at") or state["created_at"]


@dataclass(frozen=True)
class Retention:
    """How much of a table's past is kept, and when an idle table closes."""

    history_deals: int = 1000
    idle_seconds: float = 86_400.0
    closed_record_seconds: int = 30 * 86_400

    def idle_grain(self) -> float:
        """Idle deadlines are rounded up to this, so most moves leave the schedule alone."""
        return min(60.0, self.idle_seconds / 10)

    def idle_deadline(self, state: TableState) -> float:
        """When the table is idle: `idle_seconds` after its last move, rounded up."""
        active = active_at(state)
        grain = self.idle_grain()
        return float(math.ceil((active + self.idle_seconds) / grain) * grain)

    def is_idle(self, state: TableState, now: float) -> bool:
        """Whether the table has had no move for `idle_seconds` (and is not closed)."""
        if self.idle_seconds <= 0 or state.get("closed_at") is not None:
            return False
        return now >= active_at(state) + self.idle_seconds

    def is_closing(self, state: TableState, now: float) -> bool:
        """Whether the clock must cash the table out: idle, or closed on request."""
        if state.get("closed_at") is not None:
            return False
        return "close_requested" in state or self.is_idle(state, now)

    def close_idle(self, state: TableState, now: float) -> tuple[TableState, list[Event]]:
        """Cash out every seat that is not in a deal; close the table once nobody is left
        (for idleness, or because its creator or an operator closed it)."""
        game = game_of(state)
        events: list[Event] = []
        state = copy_state(state)
        if state.get("closing") is None:
            # seats in a deal leave when it ends: the closing record collects every cash-out
            state["closing"] = {"since": now, "cashed_out": []}
        for key in sorted(state["seats"], key=int):
            seat = state["seats"].get(key)
            if seat is None or seat["leaving"]:
                continue
            try:
                left = game.leave(state, int(key), now)
            except RuleError:
                continue
            state = left.state
            events += left.events
        if not state["seats"]:
            state["closed_at"] = now
            if state["reserve"] > 0:
                # nobody is left to play for it: the reserve goes to the house
                amount = state["reserve"]
                state["reserve"] = 0
                state["chips_to_house"] = state.get("chips_to_house", 0) + amount
                events.append(
                    {"type": "reserve_to_house", "data": {"amount": amount}, "visible_to": None}
                )
            events.append(
                {
                    "type": "table_closed",
                    "data": {"reason": reason_of(state), "idle_seconds": self.idle_seconds},
                    "visible_to": None,
                }
            )
        return state, events

    def writes(
        self,
        commit: Commit,
        state: TableState,
        stored: list[Event],
        finished: int | None,
        now: float,
    ) -> None:
        """Add to a change's commit what retention takes away: the deals a deal it
        `finished` pushes out of the kept history; a closed table's keys, and the
        closing record kept in their place."""
        record = commit.record
        if finished is not None:
            commit.trim = self.trim(record, finished)
            if commit.trim is not None:
                forget_departed(state, commit.trim.first_hand)
        if state.get("closed_at") is not None:
            commit.deadline = None
            commit.close = self.close(record, state, now)
            if reason_of(state) == "closed":
                # a table closed on request keeps its deals readable as long as its record
                commit.close.keep = self.closed_record_seconds
            commit.extra[closed_key(record.table_id)] = (
                jsonio.dumps(self.closing_record(state, stored)),
                self.closed_record_seconds,
            )

    def trim(self, record: TableRecord, finished: int) -> Trim | None:
        """Keep the last `history_deals` deals: which hands go now (a bounded number)."""
        first_kept = min(finished - self.history_deals + 1, record.first_hand + MAX_HANDS_DROPPED)
        if first_kept <= record.first_hand:
            return None
        return Trim(first_kept, list(range(record.first_hand, first_kept)))

    @staticmethod
    def close(record: TableRecord, state: TableState, now: float) -> Close:
        """Closing writes: every kept hand history goes now, the other keys expire later."""
        return Close(
            CLOSE_GRACE_SECONDS, now, list(range(record.first_hand, state["hand_number"] + 1))
        )

    def closing_record(self, state: TableState, stored: list[Event]) -> ClosingRecord:
        """What is kept of a closed table: who left with how much, and its final ledger."""
        record = self._closing_record(state, stored)
        if reason_of(state) == "closed":
            record["accounts"] = state.get("accounts") or {}
        return record

    def _closing_record(self, state: TableState, stored: list[Event]) -> ClosingRecord:
        return {
            "table_id": state["table_id"],
            "name": state.get("name"),
            "game": state["game"],
            "created_at": state["created_at"],
            "closed_at": state["closed_at"],
            "reason": reason_of(state),
            "idle_seconds": self.idle_seconds,
            "cashed_out": state["closing"]["cashed_out"],
            "ledger": {
                "hands_played": state["hand_number"],
                "chips_bought": state["chips_bought"],
                "chips_cashed": state["chips_cashed"],
                "pot": state["pot"],
                "reserve": state["reserve"],
            },
            "last_event": stored[-1]["id"] if stored else None,
        }


def reason_of(state: TableState) -> str:
    """Why a table closes: "closed" (by its creator or an operator) or "idle"."""
    return "closed" if "close_requested" in state else "idle"
