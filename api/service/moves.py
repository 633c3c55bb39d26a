"""Moves: a seat's start, declare, rebuy, draw, discard or call, each one change of its table.

A move is computed by its game's rules (`api.service.changes` reads, settles and
commits it); a rebuy is paid from the player's wallet (`api.service.seats.funded`). A
Paiute call is ranked by the evaluator before the rules take it; when the evaluator
cannot answer, the turn is held open a while (`hold_turn`), so that the caller may call
again before the turn's timer plays it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from api.adapters.store import MoveRead, TableRecord
from api.errors import ApiError, EvaluatorUnavailable
from api.games.events import Event
from api.games.game import ActionBody, Call, move_of, unsupported_move
from api.games.state import HeldTurn, TableState
from api.service.changes import Change, Changed, Move, Respond, SeatHolder, TableChanges, changed
from api.service.credentials import Principal
from api.service.dispatch import game_of
from api.service.idempotency import Idempotency, IfMatch, Outcome
from api.service.ledger import valid_amount
from api.service.queries import TableQueries, account_of
from api.service.seats import Payment, funded
from api.service.visibility import public_event

# A Paiute call the evaluator could not rank holds the turn open at least this long, so
# that the caller can call again (503 says Retry-After: 2) before the timer plays it.
CALL_HOLD_SECONDS = 15.0


def act(
    changes: TableChanges,
    table_id: str,
    principal: Principal,
    action: ActionBody,
    if_match: IfMatch | None,
    idempotency: Idempotency | None,
    minimal: bool = False,
) -> Outcome:
    """Apply one seat's move (start, declare, rebuy, draw, discard, call).

    With `minimal` (the caller sent `Prefer: return=minimal`) the answer is a 204
    whose body is never built: the caller reads the move's events from the table's
    log. With an Idempotency-Key that 204 is what replays of the key get.
    """
    principal.require_actor()
    kind = action["action"]
    holder = SeatHolder()
    change = Change(
        _played(changes, kind, action, holder),
        _moved(changes.queries, holder, minimal),
        if_match=if_match,
        idempotency=idempotency,
        token=principal.token,
        account=principal.player,
        authorize=holder,
        also_matches=_held_version(holder),
    )
    try:
        if kind == "rebuy":
            return funded(changes, table_id, change, _rebuy_payer(principal, action))
        return changes.apply(table_id, change)
    except EvaluatorUnavailable:
        if kind != "call":
            raise
        held = hold_turn(changes, table_id, principal, action)
        if held is None:
            raise
        raise EvaluatorUnavailable(
            "The hand evaluator could not rank the call; the turn is held open until"
            " {held:.3f} (Unix time): call again then or sooner.",
            held=held,
        ) from None


def _played(changes: TableChanges, kind: str, action: ActionBody, holder: SeatHolder) -> Move:
    """The change a seat's move makes, by its game's rules (a call ranked first)."""

    def move(state: TableState) -> Changed:
        seat = holder.seat
        game = game_of(state)
        if kind not in game.moves:
            raise unsupported_move(state["game"], game.moves, kind)
        now = changes.clock()
        played = move_of(action, changes.deck_source)
        if isinstance(played, Call):
            # the rules refuse a malformed call before the evaluator is asked to rank it
            game.verify(state, seat, played, now)
            rules = game.hand_rules(state)
            ranked = changes.evaluator.rank(rules.game, played.cards, rules.wild_rank)
            played = replace(played, ranked=ranked)
        return changed(game.act(state, seat, played, now))

    return move


def _moved(queries: TableQueries, holder: SeatHolder, minimal: bool) -> Respond:
    """The answer to a move: the table as the seat sees it and its events, or a 204."""

    def respond(state: TableState, events: list[Event]) -> Outcome:
        if minimal:
            return Outcome(204, {}, {"Preference-Applied": "return=minimal"})
        return Outcome(
            200,
            {
                "table": queries.present(state, holder.viewer),
                "events": [public_event(e) for e in events if holder.viewer.may_see(e)],
            },
            {},
        )

    return respond


def _held_version(holder: SeatHolder) -> Callable[[TableRecord], int | None]:
    """The version before the seat's turn was held open (`hold_turn`): the hold moved
    only the deadline, so an If-Match from before it still matches."""

    def held_version(record: TableRecord) -> int | None:
        held = record.state.get("turn_held_from")
        if held is None or held["seat"] != holder.viewer.seat:
            return None
        return held["version"]

    return held_version


def _rebuy_payer(principal: Principal, action: ActionBody) -> Callable[[MoveRead], Payment | None]:
    """Who pays for a rebuy, from the table read (None: the rules refuse it)."""

    def payer(read: MoveRead) -> Payment | None:
        wallet = _wallet_of(read, principal)
        amount = action.get("amount")
        if wallet is None or amount is None or not valid_amount(amount):
            return None
        return Payment(wallet, "rebuy", amount)

    return payer


def _wallet_of(read: MoveRead, principal: Principal) -> str | None:
    """The player whose wallet pays for a move: the player, or the player who holds
    the seat of a seat token (None: no such seat, which the move then refuses)."""
    if principal.player is not None:
        return principal.player
    if read.record is None or read.player is None:
        return None
    return account_of(read.record.state, read.player["player"])


def hold_turn(
    changes: TableChanges, table_id: str, principal: Principal, action: ActionBody
) -> float | None:
    """Keep a Paiute turn open while its call cannot be ranked (`paiute.hold_turn`).

    The turn's deadline, or None when the turn could not be held (the table moved on).
    """
    holder = SeatHolder()

    def move(state: TableState) -> Changed:
        seat = holder.seat
        call = move_of(action, changes.deck_source)
        assert isinstance(call, Call)  # only a call is held
        now = changes.clock()
        held = game_of(state).hold_turn(state, seat, call, now, CALL_HOLD_SECONDS)
        if held.events:
            before: HeldTurn = {"seat": seat, "version": state["version"]}
            held.state.setdefault("turn_held_from", before)
        return changed(held)

    def respond(state: TableState, events: list[Event]) -> Outcome:
        return Outcome(200, {"deadline": state["deadline"]}, {})

    change = Change(
        move,
        respond,
        token=principal.token,
        account=principal.player,
        authorize=holder,
        skip_empty=True,
        holding=True,
    )
    try:
        outcome = changes.apply(table_id, change)
    except ApiError:
        return None
    deadline = outcome.body["deadline"]
    return deadline if isinstance(deadline, float) else None
