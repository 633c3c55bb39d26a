"""Closing a table and removing a player from one: the creator of a table that has not
dealt yet, or an operator at any time, closes it; an operator removes a seat.

Both go the way of a leave (`api.service.leaving`), one change of the table: a seat not
in a deal is cashed out at once, a seat in one when it is settled, through the table's
outbox to its player's wallet. A closed table takes no new seat and leaves the lobby at
once; the clock cashes out what is left after the current deal and closes it
(`api.service.retention`), keeping its deals readable.
"""

from __future__ import annotations

from api.errors import problem
from api.games.common import copy_state
from api.games.events import Event
from api.games.state import TableState
from api.service.changes import Change, Changed, Respond, TableChanges, changed
from api.service.credentials import Principal
from api.service.dispatch import game_of
from api.service.idempotency import Idempotency, IfMatch, Outcome
from api.service.leaving import left_answer
from api.service.queries import TableQueries, account_viewer
from api.service.visibility import SPECTATOR, public_event


def close_table(
    changes: TableChanges,
    table_id: str,
    principal: Principal,
    if_match: IfMatch | None,
    idempotency: Idempotency | None,
) -> Outcome:
    """Close a table: its creator before its first deal, an operator at any time."""
    by = "operator" if principal.kind == "operator" else "creator"
    player = None if by == "operator" else principal.require_player()

    def move(state: TableState) -> Changed:
        if player is not None:
            verify_creator_may_close(state, player)
        if "close_requested" in state:
            return state, []  # closed already: the same answer again
        closing = copy_state(state)
        closing["close_requested"] = {"at": changes.clock(), "by": by}
        return changes.retention.close_idle(closing, changes.clock())

    change = Change(
        move,
        _closed(changes.queries),
        if_match=if_match,
        idempotency=idempotency,
        activity=False,
    )
    return changes.apply(table_id, change)


def verify_creator_may_close(state: TableState, player: str) -> None:
    """403 not_table_creator for another player; 409 table_started once it has dealt."""
    if state.get("owner") != player:
        raise problem(
            "not_table_creator",
            "Only the player who created a table (or an operator) may close it.",
        )
    if state["hand_number"] > 0 or state["game_in_progress"]:
        raise problem(
            "table_started",
            "This table has dealt already; only an operator may close it now.",
        )


def _closed(queries: TableQueries) -> Respond:
    """The answer to a close: the table, its events, and whether it is closed already."""

    def respond(state: TableState, events: list[Event]) -> Outcome:
        return Outcome(
            200,
            {
                "table": queries.present(state, SPECTATOR),
                "events": [public_event(e) for e in events if SPECTATOR.may_see(e)],
                "closed": state.get("closed_at") is not None,
            },
            {},
        )

    return respond


def remove_seat(
    changes: TableChanges,
    table_id: str,
    seat: int,
    principal: Principal,
    if_match: IfMatch | None,
    idempotency: Idempotency | None,
) -> Outcome:
    """An operator removes a seat: cashed out now, or when the deal it is in is settled."""
    principal.require_operator()
    held: list[int] = []

    def move(state: TableState) -> Changed:
        record = state["seats"].get(str(seat))
        if record is not None:
            held.append(record["player_id"])
        return changed(game_of(state).leave(state, seat, changes.clock()))

    def respond(state: TableState, events: list[Event]) -> Outcome:
        player = held[-1] if held else None
        return left_answer(changes.queries, state, events, seat, SPECTATOR, player)

    change = Change(move, respond, if_match=if_match, idempotency=idempotency, activity=False)
    return changes.apply(table_id, change)


def remove_player(changes: TableChanges, table_id: str, account: str) -> dict[str, object] | None:
    """The player `account`'s seat at the table leaves, now or when its deal is settled
    (a time-out or self-exclusion taken); what became of it, None without one."""
    found: list[int] = []

    def move(state: TableState) -> Changed:
        viewer = account_viewer(state, account)
        if viewer.seat is None or state["seats"][str(viewer.seat)]["leaving"]:
            return state, []
        found[:] = [viewer.seat, state["seats"][str(viewer.seat)]["player_id"]]
        return changed(game_of(state).leave(state, viewer.seat, changes.clock()))

    def respond(state: TableState, events: list[Event]) -> Outcome:
        if not found:
            return Outcome(200, {}, {})
        seat, player = found
        return left_answer(changes.queries, state, events, seat, SPECTATOR, player)

    outcome = changes.apply(table_id, Change(move, respond, skip_empty=True, activity=False))
    if not found:
        return None
    body = dict(outcome.body)
    return {"table_id": table_id, **{k: body[k] for k in ("seat", "left", "leaving", "cashed_out")}}
