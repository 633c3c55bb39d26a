"""Leaving: a seat cashed out now, or when the deal it plays in is settled, one change of
its table (`api.service.changes`); the chips go back to its player's wallet through the
table's outbox (`api.service.wallets`)."""

from __future__ import annotations

from api.games.events import Event
from api.games.state import TableState
from api.service.changes import Change, Changed, Respond, SeatHolder, TableChanges, changed
from api.service.credentials import Principal
from api.service.dispatch import game_of
from api.service.idempotency import Idempotency, IfMatch, Outcome
from api.service.queries import TableQueries
from api.service.visibility import SPECTATOR, Viewer, public_event


def leave(
    changes: TableChanges,
    table_id: str,
    seat: int,
    principal: Principal,
    if_match: IfMatch | None,
    idempotency: Idempotency | None,
) -> Outcome:
    """A seat asks to leave: now, or when the deal it is in is settled."""
    principal.require_actor()
    holder = SeatHolder(seat)

    def move(state: TableState) -> Changed:
        return changed(game_of(state).leave(state, seat, changes.clock()))

    change = Change(
        move,
        _left(changes.queries, seat, holder),
        if_match=if_match,
        idempotency=idempotency,
        token=principal.token,
        account=principal.player,
        authorize=holder,
    )
    return changes.apply(table_id, change)


def _left(queries: TableQueries, seat: int, holder: SeatHolder) -> Respond:
    """The answer to a leave: gone or leaving with the deal, and the chips cashed out."""

    def respond(state: TableState, events: list[Event]) -> Outcome:
        return left_answer(queries, state, events, seat, holder.viewer, holder.viewer.player)

    return respond


def left_answer(
    queries: TableQueries,
    state: TableState,
    events: list[Event],
    seat: int,
    viewer: Viewer,
    player: int | None,
) -> Outcome:
    """The answer to a leave of `seat`, which the table's local `player` held, as
    `viewer` sees it: gone or leaving with the deal, and the chips cashed out."""
    cashed = next(
        (
            e["data"]["amount"]
            for e in events
            if e["type"] == "cashed_out" and e["data"]["seat"] == seat
        ),
        None,
    )
    gone = str(seat) not in state["seats"] or state["seats"][str(seat)]["player_id"] != player
    return Outcome(
        200,
        {
            # once gone, the seat sees the table as everyone else does
            "table": queries.present(state, SPECTATOR if gone else viewer),
            "events": [public_event(e) for e in events if viewer.may_see(e)],
            "seat": seat,
            "left": gone,
            "leaving": not gone,
            "cashed_out": cashed,
        },
        {},
    )
