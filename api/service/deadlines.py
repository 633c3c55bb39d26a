"""Deadlines: the turns nobody played in time, the next deal, idle tables closed.

A table's deadline may be its game's (a turn, the next deal, a showdown to settle) or
its idle time: an idle table is cashed out and closed (`api.service.retention`). The
clock (`api.runtime.clock`) claims the tables whose deadline passed and applies each
through the same change loop as any move (`api.service.changes`); every commit
schedules the table's next deadline (`api.service.schedule`). `Deadlines` is what the
clock is given: the deadlines, the store they are scheduled in, and the wallets'
sweeper and the webhooks' deliverer it also runs.
"""

from __future__ import annotations

from api.games.events import Event
from api.games.state import TableState
from api.service import sessions
from api.service.changes import Change, Changed, TableChanges
from api.service.dispatch import game_of
from api.service.idempotency import Outcome


class Deadlines:
    """The clock's entry: passed deadlines applied, the next ones told."""

    def __init__(self, changes: TableChanges) -> None:
        """Apply deadlines through `changes`; the clock reaches its store, wallets and
        webhooks here."""
        self.changes = changes
        self.store = changes.store
        self.clock = changes.clock
        self.wallets = changes.wallets
        self.webhooks = changes.webhooks

    def run_deadline(self, table_id: str) -> bool:
        """Apply a passed deadline (the clock calls this); True if the table changed.

        The deadline may be the game's (a turn, the next deal) or the table's idle
        time: an idle table, or one closed on request, is cashed out and closed.
        """
        changes = self.changes
        retention = changes.retention
        now = changes.clock()

        def move(original: TableState) -> Changed:
            # reality checks and session limits first: a seat whose time is up deals no more
            state, events = sessions.apply_due(original, now)
            if retention.is_closing(state, now):
                # cash out before the game goes on: no new deal starts for a closing table
                state, closing = retention.close_idle(state, now)
                events += closing
                if state.get("closed_at") is not None:
                    return state, events
            # a state made above is this change's own: the deadline changes it in place
            deck = changes.deck_source()
            dealt = game_of(state).on_deadline(state, now, deck, state is not original)
            return dealt.state, events + dealt.events

        def respond(state: TableState, events: list[Event]) -> Outcome:
            return Outcome(200, {"events": len(events)}, {})

        outcome = changes.apply(table_id, Change(move, respond, skip_empty=True, activity=False))
        return bool(outcome.body.get("events"))

    def next_deadline(self, state: TableState, now: float | None = None) -> float | None:
        """When the clock next has work on this table (`api.service.schedule`)."""
        return self.changes.schedule.next_deadline(state, now)
