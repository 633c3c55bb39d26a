"""When the clock next has work on a table: the game's deadline, a showdown to try
again, or the table's idleness.

Every commit writes this time as the table's deadline (`api.service.changes`), and the
clock's repair pass asks it again of a table whose schedule it finds wrong
(`api.runtime.clock`).
"""

from __future__ import annotations

import time
from collections.abc import Callable

from api.games.state import TableState
from api.service import sessions
from api.service.dispatch import game_of
from api.service.retention import Retention

# A showdown the evaluator could not rank is tried again by the clock this much later.
SHOWDOWN_RETRY_SECONDS = 1.0
# A table closed on request is looked at this often until its last seat is cashed out.
CLOSING_RETRY_SECONDS = 1.0


class Schedule:
    """The next deadline of a table, as `retention` closes idle tables."""

    def __init__(self, retention: Retention, clock: Callable[[], float] = time.time) -> None:
        """Close idle tables as `retention` says; `clock` gives the time."""
        self.retention = retention
        self.clock = clock

    def next_deadline(self, state: TableState, now: float | None = None) -> float | None:
        """When the clock next has work on this table: the game's deadline, a showdown
        left unsettled (the evaluator did not answer: tried again in a second), or
        idleness."""
        rules = game_of(state)
        game = rules.next_deadline(state)
        if game is None and rules.ranking_request(state) is not None:
            game = (self.clock() if now is None else now) + SHOWDOWN_RETRY_SECONDS
        due = sessions.next_due(state)  # a player's reality check or session limit
        if due is not None:
            game = due if game is None else min(game, due)
        retention = self.retention
        if "close_requested" in state and state.get("closed_at") is None:
            soon = (self.clock() if now is None else now) + CLOSING_RETRY_SECONDS
            return soon if game is None else min(game, soon)
        if retention.idle_seconds <= 0 or state.get("closed_at") is not None:
            return game
        idle = retention.idle_deadline(state)
        if now is not None and idle <= now:
            # idle, but not closable yet (a deal is still being played out): look again
            # when the game moves on, or a little later
            idle = now + retention.idle_grain()
        return idle if game is None else min(game, idle)
