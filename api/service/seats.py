"""Seats: taking one (its token shown once), paying for it from a wallet, and a player's
seats across tables.

A seat's buy-in, like a rebuy (`api.service.moves`), is paid from the player's wallet
(`funded`): the change is tried on the table first, so that a refusal or a replay
touches no wallet; then the chips are reserved, the change made, and the reservation
posted when its commit took it (`api.service.wallets`).
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from api import jsonio
from api.adapters.store import MoveRead, TokenEntry, idempotency_key, token_digest
from api.errors import ApiError, from_rule_error, problem
from api.games.events import Event
from api.games.state import SessionClock, TableState
from api.games.table import MAX_NAME_LENGTH
from api.service import names
from api.service.changes import Change, Changed, Move, Respond, TableChanges, TokenSets
from api.service.dispatch import game_of
from api.service.idempotency import Idempotency, Outcome
from api.service.ledger import valid_amount
from api.service.players import PlayerService
from api.service.queries import TableQueries, account_viewer
from api.service.visibility import Viewer, public_event

log = logging.getLogger("cardroom.tables")


@dataclass(frozen=True)
class Payment:
    """Chips a change takes from a player's wallet onto the table."""

    player: str
    kind: str
    amount: int


def take_seat(
    changes: TableChanges,
    players: PlayerService | None,
    table_id: str,
    name: str | None,
    buy_in: int,
    idempotency: Idempotency | None,
    account: str | None = None,
    session: SessionClock | None = None,
) -> Outcome:
    """Seat the player `account` (under `name`, by default their own, with their
    `session` clock); the reply holds a seat token, a credential for this seat alone,
    shown only this once."""
    token = secrets.token_bytes(32).hex()
    noted = False
    if account is not None and players is not None:
        if name is None:
            name = players.name_of(account)
        noted = players.note_seat(account, table_id)
    if name is None:
        raise problem("missing_field", "A seat needs a name.", field="name")
    change = seat_change(
        changes,
        _sit(changes, name, buy_in, account, session),
        table_id,
        token,
        idempotency,
        account,
    )

    def payer(read: MoveRead) -> Payment | None:
        # the chips come from the player's wallet (an invalid amount the rules refuse)
        if account is None or not valid_amount(buy_in):
            return None
        return Payment(account, "buy_in", buy_in)

    try:
        return funded(changes, table_id, change, payer)
    except ApiError as error:
        if noted and error.status < 500 and account is not None and players is not None:
            # refused: unlisted, unless a copy of the request raced this one and won
            record = changes.store.load(table_id)
            if record is None or account_viewer(record.state, account).seat is None:
                players.unnote_seat(account, table_id)
        raise


def seat_change(
    changes: TableChanges,
    sit: Move,
    table_id: str,
    token: str,
    idempotency: Idempotency | None,
    account: str | None,
) -> Change:
    """The change `sit` makes, granting the new seat `token` (shown in its answer once)."""
    return Change(
        sit,
        _seated(changes.queries, table_id, token, account),
        idempotency=idempotency,
        token_sets=_seat_token(token),
        seal=token,
    )


def _seat_of(events: list[Event]) -> int:
    """The seat a seat's change gave (its `seated` event's)."""
    return next(e["data"]["seat"] for e in events if e["type"] == "seated")


def _sit(
    changes: TableChanges,
    name: str,
    buy_in: int,
    account: str | None,
    session: SessionClock | None = None,
) -> Move:
    """The change that seats `name` with `buy_in`, listed under the player `account`
    with their `session` clock."""

    def move(state: TableState) -> Changed:
        if "close_requested" in state:
            raise problem("table_closing", "This table is being closed: it takes no new seat.")
        if account is not None and account_viewer(state, account).seat is not None:
            raise problem(
                "already_seated",
                "You already hold a seat at this table; a player holds one seat a table.",
            )
        sat = game_of(state).sit(state, fit_seat_name(state, name), buy_in, changes.clock())
        after, events = sat.state, sat.events
        if account is not None:
            local = after["seats"][str(_seat_of(events))]["player_id"]
            accounts = dict(after.get("accounts") or {})
            before = accounts[account]["players"] if account in accounts else []
            accounts[account] = {"players": [*before, local], "left": None}
            if session is not None:
                accounts[account]["session"] = session
            after["accounts"] = accounts
        return after, events

    return move


def fit_seat_name(state: TableState, name: str) -> str:
    """`name` as a seat keeps it (`api.service.names`); 422 invalid_name for an unfit one,
    409 name_taken for one that looks like a seated player's."""
    shown = names.display_name(name, MAX_NAME_LENGTH)
    if shown is None:
        raise from_rule_error(
            "invalid_name",
            "A name must be 1 to {max_name_length} characters long, not counting spaces"
            " at either end, with no control or invisible formatting character.",
            "name",
            max_name_length=MAX_NAME_LENGTH,
        )
    taken = names.lookalike_of(shown, [seat["name"] for seat in state["seats"].values()])
    if taken is not None:
        raise from_rule_error(
            "name_taken", "Someone at this table already goes by {shown!r}.", "name", shown=taken
        )
    return shown


def _seated(queries: TableQueries, table_id: str, token: str, account: str | None) -> Respond:
    """The answer to a seat's grant: the table as the seat sees it, its token once."""

    def respond(state: TableState, events: list[Event]) -> Outcome:
        seat = _seat_of(events)
        viewer = Viewer(seat, state["seats"][str(seat)]["player_id"])
        if account is not None:
            viewer = account_viewer(state, account)
        return Outcome(
            201,
            {
                "table": queries.present(state, viewer),
                "events": [public_event(e) for e in events if viewer.may_see(e)],
                "seat": seat,
                "token": token,
                "waiting": state["seats"][str(seat)]["status"] == "waiting",
            },
            {"Location": f"/v1/tables/{table_id}/seats/{seat}"},
        )

    return respond


def _seat_token(token: str) -> TokenSets:
    """What the table keeps of a seat's token: its digest, naming the seat and player."""

    def tokens(state: TableState, events: list[Event]) -> dict[str, str]:
        seat = _seat_of(events)
        player = state["seats"][str(seat)]["player_id"]
        entry: TokenEntry = {"player": player, "seat": seat}
        return {
            token_digest(token): jsonio.dumps(entry),
            f"player:{player}": token_digest(token),
        }

    return tokens


def funded(
    changes: TableChanges,
    table_id: str,
    change: Change,
    payer: Callable[[MoveRead], Payment | None],
) -> Outcome:
    """A change paid from a wallet (`payer` says whose, from the table read): tried on
    the table first, so that a refusal or a replay touches no wallet; then the chips
    reserved, the change made, and the reservation posted when its commit took it,
    voided when it surely did not (refused or replayed), left to the sweeper when that
    is not known (the store failed)."""
    idempotency = change.idempotency
    idem_key = idempotency_key(table_id, idempotency.key) if idempotency else None
    # a keyed change reads the table from Redis, where its replay record is: a replay
    # must be answered before any chip is reserved (a wallet spent since the first
    # answer would refuse the reservation), and this process's copy does not know it
    read, fresh = changes.reader.read(table_id, change.token, idem_key, copy=idem_key is None)
    payment = payer(read)
    if payment is None:
        return changes.apply(table_id, change, (read, fresh))
    try:
        tried = changes.compute(table_id, change, read, idem_key if fresh else None)
    except ApiError:
        if fresh:
            raise
        # refused by this process's copy: only a fresh read refuses
        changes.reader.forget(table_id)
        read, fresh = changes.reader.read(table_id, change.token, idem_key, copy=False)
        tried = changes.compute(table_id, change, read, idem_key)
    if isinstance(tried, Outcome):
        return tried  # a replay
    wallets = changes.wallets
    change.accepts.append(wallets.reserve(payment.player, table_id, payment.kind, payment.amount))
    try:
        outcome = changes.apply(table_id, change, (read, fresh))
    except ApiError as error:
        if error.status < 500:
            for reservation in change.accepts:
                wallets.void(reservation)
        raise
    _settle_reservations(changes, change, outcome.headers.get("Idempotent-Replayed") == "true")
    return outcome


def _settle_reservations(changes: TableChanges, change: Change, replayed: bool) -> None:
    """Post the reservations a change's commit took, or void them for a replay, which
    took none; what fails is left to the sweeper."""
    for reservation in change.accepts:
        try:
            if replayed:
                changes.wallets.void(reservation)
            else:
                changes.wallets.post(reservation)
        except Exception:  # the sweeper posts it
            log.warning(
                "reservation left to the sweeper",
                extra={"transfer": reservation.transfer_id},
                exc_info=True,
            )


def seats_of(
    queries: TableQueries, players: PlayerService | None, account: str
) -> list[dict[str, object]]:
    """Every seat the player `account` holds, with the table as that seat sees it.

    Tables closed since, or where the player holds no seat and no kept deal, leave
    the player's list.
    """
    if players is None:
        return []
    table_ids = players.store.seat_tables(account)
    records = queries.store.load_many(table_ids)
    seats: list[dict[str, object]] = []
    gone: list[str] = []
    for table_id, record in zip(table_ids, records, strict=True):
        if record is None or record.closed:
            gone.append(table_id)
            continue
        viewer = account_viewer(record.state, account)
        if viewer.seat is None:
            if not viewer.past:
                gone.append(table_id)
            continue
        state = record.state
        seat = state["seats"][str(viewer.seat)]
        seats.append(
            {
                "table_id": table_id,
                "table_name": state.get("name"),
                "game": state["game"],
                "seat": viewer.seat,
                "name": seat["name"],
                "stack": seat["stack"],
                "status": seat["status"],
                "phase": state["phase"],
                "version": record.version,
                "last_event": record.seq,
                "table": queries.present(record, viewer),
            }
        )
    players.store.forget_seats(account, gone)
    return seats
