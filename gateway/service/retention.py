"""How long a table and its past are kept: idle tables closed, old deals trimmed.

The hand histories of the last `history_deals` deals are kept, and the events from the
first event of the oldest kept deal on; older ones are trimmed when a deal ends, and
asking for them answers 410 `history_trimmed`. A table without a player's move for
`idle_seconds` is closed by the clock: every seat is cashed out (`cashed_out` events,
then `table_closed`), a closing record is kept for `closed_record_seconds` (the
`closing` member of the 410), the table leaves the lobby and its keys expire
`CLOSE_GRACE_SECONDS` later; until then and after it, the table answers 410
`table_closed`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gateway.adapters.store import Close, TableRecord, Trim
from gateway.games.common import Event, RuleError, Transition, copy_state
from gateway.service.dispatch import game_of, table_state, transition

# watchers still receive a closed table's last events for this long; then its keys go
CLOSE_GRACE_SECONDS = 60
# hand histories deleted by one commit at most, so lowering HISTORY_DEALS stays cheap
MAX_HANDS_DROPPED = 1000


@dataclass(frozen=True)
class Retention:
    """How much of a table's past is kept, and when an idle table closes."""

    history_deals: int = 1000
    idle_seconds: float = 86_400.0
    closed_record_seconds: int = 30 * 86_400

    def idle_grain(self) -> float:
        """Idle deadlines are rounded up to this, so most moves leave the schedule alone."""
        return min(60.0, self.idle_seconds / 10)

    def idle_deadline(self, state: Mapping[str, Any]) -> float:
        active = float(state.get("active_at") or state.get("created_at") or 0.0)
        grain = self.idle_grain()
        return float(math.ceil((active + self.idle_seconds) / grain) * grain)

    def is_idle(self, state: Mapping[str, Any], now: float) -> bool:
        if self.idle_seconds <= 0 or state.get("closed_at") is not None:
            return False
        active = float(state.get("active_at") or state.get("created_at") or 0.0)
        return now >= active + self.idle_seconds

    def close_idle(self, state: dict[str, Any], now: float) -> Transition:
        """Cash out every seat that is not in a deal; close the table once nobody is left."""
        game = game_of(state)
        events: list[Event] = []
        state = copy_state(state)
        if state.get("closing") is None:
            # seats in a deal leave when it ends: the closing record collects every cash-out
            state["closing"] = {"since": now, "cashed_out": []}
        for key in sorted(state["seats"], key=int):
            seat = state["seats"].get(key)
            if seat is None or seat.get("leaving"):
                continue
            try:
                state, more = transition(game.leave(table_state(state), int(key), now))
            except RuleError:
                continue
            events += more
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
                    "data": {"reason": "idle", "idle_seconds": self.idle_seconds},
                    "visible_to": None,
                }
            )
        return state, events

    def trim(self, record: TableRecord, finished: int) -> Trim | None:
        """Keep the last `history_deals` deals: which hands go now (a bounded number)."""
        first_kept = min(finished - self.history_deals + 1, record.first_hand + MAX_HANDS_DROPPED)
        if first_kept <= record.first_hand:
            return None
        return Trim(first_kept, list(range(record.first_hand, first_kept)))

    @staticmethod
    def close(record: TableRecord, state: dict[str, Any], now: float) -> Close:
        """Closing writes: every kept hand history goes now, the other keys expire later."""
        return Close(
            CLOSE_GRACE_SECONDS, now, list(range(record.first_hand, state["hand_number"] + 1))
        )

    def closing_record(self, state: dict[str, Any], stored: list[dict[str, Any]]) -> dict[str, Any]:
        """What is kept of a closed table: who left with how much, and its final ledger."""
        return {
            "table_id": state["table_id"],
            "name": state.get("name"),
            "game": state["game"],
            "created_at": state.get("created_at"),
            "closed_at": state["closed_at"],
            "reason": "idle",
            "idle_seconds": self.idle_seconds,
            "cashed_out": state["closing"]["cashed_out"],
            "ledger": {
                "hands_played": state.get("hand_number", 0),
                "chips_bought": state.get("chips_bought"),
                "chips_cashed": state.get("chips_cashed"),
                "pot": state.get("pot"),
                "reserve": state.get("reserve"),
            },
            "last_event": stored[-1]["id"] if stored else None,
        }
