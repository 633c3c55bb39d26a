"""The table service: every change of a table, applied atomically to tables kept in Redis.

A change is read -> computed -> committed: the game computes the new state and its
events from the state read; if the deal reaches a showdown, the evaluator ranks the
hands and the game settles the deal in the same change; then one Lua script writes
everything if nobody changed the table meanwhile (otherwise the change is computed
again, a bounded number of times). Nothing is written when a rule refuses the move or
the evaluator cannot be reached, so a refused move leaves the table as it was.

A change reads once (table, seat token and idempotency record in one pipeline, or this
process's copy of the table: `gateway.adapters.warm.TableReader`) and commits once; the
commit also schedules the table's next deadline for the clock. Reads are
`gateway.service.queries`; what is kept and for how long, `gateway.service.retention`;
replays of Idempotency-Keys, `gateway.service.idempotency`.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from gateway import jsonio
from gateway.adapters.evaluator import EvaluatorClient
from gateway.adapters.store import (
    Commit,
    MoveRead,
    TableRecord,
    TableStore,
    TransferExpired,
    closed_key,
    hand_key,
    idempotency_key,
    token_digest,
)
from gateway.adapters.wallets import WalletStore, table_outbox_key
from gateway.adapters.warm import TableReader, WarmTables
from gateway.adapters.webhooks import WebhookStore
from gateway.errors import (
    ApiError,
    EvaluatorUnavailable,
    from_rule_error,
    missing_token,
    problem,
    stale_version,
    wrong_seat,
)
from gateway.games.common import Deck, Event, RuleError, Transition, display_name
from gateway.games.game import Call, move_of, unsupported_move
from gateway.service.credentials import Principal
from gateway.service.decks import new_table_id, shuffled_deck
from gateway.service.dispatch import GAMES, game_of, table_state, transition
from gateway.service.idempotency import Idempotency, IfMatch, Outcome, Replays, error_outcome
from gateway.service.ledger import valid_amount
from gateway.service.players import PlayerService
from gateway.service.queries import TableQueries, account_viewer
from gateway.service.retention import Retention
from gateway.service.visibility import SPECTATOR, Viewer, public_event
from gateway.service.wallets import Reservation, WalletService
from gateway.service.webhooks import WebhookService
from gateway.telemetry import WARM_MOVES

log = logging.getLogger("cardroom.tables")

MAX_ATTEMPTS = 16
# The longest table name (the OpenAPI document's CreateTable.name.maxLength).
MAX_TABLE_NAME = 64
# A showdown the evaluator could not rank is tried again by the clock this much later.
SHOWDOWN_RETRY_SECONDS = 1.0
# A Paiute call the evaluator could not rank holds the turn open at least this long, so
# that the caller can call again (503 says Retry-After: 2) before the timer plays it.
CALL_HOLD_SECONDS = 15.0
_WARM_HIT, _WARM_STALE, _WARM_REFUSED = (
    WARM_MOVES.labels(result) for result in ("hit", "stale", "refused")
)
IDEMPOTENCY_PENDING_SECONDS = 60
# events that open the next deal's story: a deal's history stops before them
NEXT_DEAL_EVENTS = ("game_started", "deal_started")

Move = Callable[[dict[str, Any]], Transition]
Respond = Callable[[dict[str, Any], list[dict[str, Any]]], Outcome]
TokenSets = Callable[[dict[str, Any], list[dict[str, Any]]], dict[str, str]]


@dataclass(frozen=True)
class Payment:
    """Chips a change takes from a player's wallet onto the table."""

    player: str
    kind: str
    amount: int


@dataclass
class Change:
    """One change of a table: how to compute it and answer it, and what it must respect.

    `authorize` sees the token's holder before anything else is checked; `if_match`
    matches the table's version, or the one `also_matches` gives; `token_sets` are seat
    tokens the change grants, `seal` the one its replays return; a change that computes
    no event writes nothing with `skip_empty`; `activity` marks the table as played at;
    every change but a turn's hold (`holding`) ends that hold's `turn_held_from`;
    `accepts` are the wallet reservations its commit accepts (`gateway.service.wallets`).
    """

    move: Move
    respond: Respond
    if_match: IfMatch | None = None
    idempotency: Idempotency | None = None
    token: str | None = None
    account: str | None = None
    authorize: Callable[[Viewer], None] | None = None
    token_sets: TokenSets | None = None
    seal: str | None = None
    skip_empty: bool = False
    activity: bool = True
    also_matches: Callable[[TableRecord], int | None] | None = None
    holding: bool = False
    # chips reserved in a wallet that the change takes onto the table (a buy-in, a rebuy)
    accepts: list[Reservation] = field(default_factory=list)


class SeatHolder:
    """Who holds the token a change came with: a seat (a given one, if `seat` is set).

    The change loop calls it with the token's holder before anything else is checked;
    a spectator is refused (401 missing_token), and so is another seat (403 wrong_seat).
    """

    def __init__(self, seat: int | None = None) -> None:
        """Accept any seat, or only `seat`."""
        self.required = seat
        self.viewer = SPECTATOR

    def __call__(self, viewer: Viewer) -> None:
        """Note the holder; refuse a spectator or another seat than the required one."""
        self.viewer = viewer
        if viewer.seat is None:
            if viewer.account is not None:
                raise from_rule_error("not_seated", "You hold no seat at this table.", "seat")
            raise missing_token()
        if self.required is not None and viewer.seat != self.required:
            raise wrong_seat(self.required)

    @property
    def seat(self) -> int:
        """The holder's seat (only asked for after the holder was accepted)."""
        assert self.viewer.seat is not None  # a spectator was refused already
        return self.viewer.seat


class TableService(TableQueries):
    """Create tables, seat players, apply moves and deadlines; the reads of `TableQueries`."""

    def __init__(
        self,
        store: TableStore,
        evaluator: EvaluatorClient,
        clock: Callable[[], float] = time.time,
        idempotency_ttl: int = 24 * 3600,
        deck_source: Callable[[], Deck] = shuffled_deck,
        history_deals: int = 1000,
        idle_seconds: float = 86_400.0,
        closed_record_seconds: int = 30 * 86_400,
        warm_tables: int = 1000,
    ) -> None:
        """Use this store and evaluator; `clock` gives the time, `deck_source` the decks.

        Keep the history of the last `history_deals` deals; close a table after
        `idle_seconds` without a player's move (0: never), keeping its closing record
        for `closed_record_seconds`. Moves on the last `warm_tables` tables this
        process changed are computed without reading them first (`gateway.adapters.warm`).
        """
        super().__init__(store)
        self.evaluator = evaluator
        self.clock = clock
        self.deck_source = deck_source
        self.retention = Retention(history_deals, idle_seconds, closed_record_seconds)
        self.replays = Replays(store, idempotency_ttl)
        self.warm = WarmTables(warm_tables)
        self.reader = TableReader(store, self.warm)
        # players' quotas and seats (`gateway.service.players`), once the app attaches them
        self.players: PlayerService | None = None
        # the wallets chips come from and go back to (`gateway.service.wallets`)
        # (on the real clock: its deadlines are checked against Redis's own)
        self.wallets = WalletService(WalletStore(store.client))
        # turn notifications for the operator (`gateway.service.webhooks`), off without a URL
        self.webhooks = WebhookService(WebhookStore(store.client), store)

    def create_table(
        self, body: Mapping[str, Any], idempotency: Idempotency | None, owner: str | None = None
    ) -> Outcome:
        """Create a table from the validated request body, counted against `owner`'s quota."""
        options = dict(body)
        game = options.pop("game")
        name = options.pop("name", None)
        rules = GAMES.get(game)
        if rules is None:
            raise problem(
                "unsupported_game",
                "This gateway does not host {game!r} tables yet.",
                field="game",
                game=game,
            )
        claim_key = None
        if idempotency is not None:
            claim_key = idempotency_key("create", idempotency.key)
            replay = self.replays.replay(claim_key, idempotency)
            if replay is not None:
                return replay
            if not self.store.claim(
                claim_key,
                {"pending": True, "fingerprint": idempotency.fingerprint},
                IDEMPOTENCY_PENDING_SECONDS,
            ):
                return self.replays.replay(claim_key, idempotency) or self.replays.in_progress()
        reserved: str | None = None
        try:
            now = self.clock()
            table_id = new_table_id()
            if owner is not None and self.players is not None:
                self.players.reserve_table(owner, table_id)
                reserved = table_id
            try:
                state = dict(rules.new_table(options, table_id, now))
            except RuleError as error:
                raise from_rule_error(
                    error.code, error.template, error.field, **error.params
                ) from None
            if name is not None:
                name = display_name(name, MAX_TABLE_NAME)
                if name is None:
                    raise from_rule_error(
                        "invalid_name",
                        "A table's name is 1 to {max_table_name} characters, not counting"
                        " spaces at either end, with no control or invisible formatting"
                        " character.",
                        "name",
                        max_table_name=MAX_TABLE_NAME,
                    )
            state["name"] = name or f"{game} table {table_id[:6]}"
            state["accounts"] = {}
            record = TableRecord(table_id, state, 0, 0)
            created = self._stored_events(
                record,
                state,
                [
                    {
                        "type": "table_created",
                        "data": {"options": state["options"], "name": state["name"]},
                        "visible_to": None,
                    }
                ],
                now,
            )
            state["version"] = 1
            state["active_at"] = now
            change = Commit(record, state, created, deadline=self.next_deadline(state, now))
            if not self.store.commit(change):
                raise ApiError(409, "conflict", "Conflict", "The table id is already taken.")
            self.store.index_table(table_id, now)
            outcome = Outcome(
                201,
                {
                    "table": self.present(state, SPECTATOR),
                    "events": [public_event(e) for e in created],
                },
                {"Location": f"/v1/tables/{table_id}", "ETag": '"1"'},
            )
        except ApiError as error:
            if reserved is not None and self.players is not None and owner is not None:
                self.players.release_table(owner, reserved)
            if claim_key is not None:
                if error.status >= 500:
                    self.store.delete([claim_key])
                else:
                    self.replays.remember(claim_key, idempotency, error_outcome(error))
            raise
        except Exception:
            if reserved is not None and self.players is not None and owner is not None:
                self.players.release_table(owner, reserved)
            if claim_key is not None:  # a retry may try again at once
                self.store.delete([claim_key])
            raise
        if claim_key is not None:
            self.replays.remember(claim_key, idempotency, outcome)
        return outcome

    def take_seat(
        self,
        table_id: str,
        name: str | None,
        buy_in: int,
        idempotency: Idempotency | None,
        account: str | None = None,
    ) -> Outcome:
        """Seat the player `account` (under `name`, by default their own); the reply holds
        a seat token, a credential for this seat alone, shown only this once."""
        token = secrets.token_bytes(32).hex()
        noted = False
        if account is not None and self.players is not None:
            if name is None:
                name = self.players.name_of(account)
            noted = self.players.note_seat(account, table_id)
        if name is None:
            raise problem("missing_field", "A seat needs a name.", field="name")
        seated_name = name

        def move(state: dict[str, Any]) -> Transition:
            if account is not None and account_viewer(state, account).seat is not None:
                raise problem(
                    "already_seated",
                    "You already hold a seat at this table; a player holds one seat a table.",
                )
            after, events = transition(
                game_of(state).sit(table_state(state), seated_name, buy_in, self.clock())
            )
            if account is not None:
                seat = next(e["data"]["seat"] for e in events if e["type"] == "seated")
                local = after["seats"][str(seat)]["player_id"]
                accounts = dict(after.get("accounts") or {})
                before = accounts.get(account) or {"players": []}
                accounts[account] = {"players": [*before["players"], local], "left": None}
                after["accounts"] = accounts
            return after, events

        def respond(state: dict[str, Any], events: list[dict[str, Any]]) -> Outcome:
            seat = next(e["data"]["seat"] for e in events if e["type"] == "seated")
            viewer = Viewer(seat, state["seats"][str(seat)]["player_id"])
            if account is not None:
                viewer = account_viewer(state, account)
            return Outcome(
                201,
                {
                    "table": self.present(state, viewer),
                    "events": [public_event(e) for e in events if viewer.may_see(e)],
                    "seat": seat,
                    "token": token,
                    "waiting": state["seats"][str(seat)]["status"] == "waiting",
                },
                {"Location": f"/v1/tables/{table_id}/seats/{seat}"},
            )

        def tokens(state: dict[str, Any], events: list[dict[str, Any]]) -> dict[str, str]:
            seat = next(e["data"]["seat"] for e in events if e["type"] == "seated")
            player = state["seats"][str(seat)]["player_id"]
            return {
                token_digest(token): jsonio.dumps({"player": player, "seat": seat}),
                f"player:{player}": token_digest(token),
            }

        change = Change(move, respond, idempotency=idempotency, token_sets=tokens, seal=token)

        def payer(read: MoveRead) -> Payment | None:
            # the chips come from the player's wallet (an invalid amount the rules refuse)
            if account is None or not valid_amount(buy_in):
                return None
            return Payment(account, "buy_in", buy_in)

        try:
            return self._funded(table_id, change, payer)
        except ApiError as error:
            if noted and error.status < 500 and account is not None and self.players is not None:
                # refused: unlisted, unless a copy of the request raced this one and won
                record = self.store.load(table_id)
                if record is None or account_viewer(record.state, account).seat is None:
                    self.players.unnote_seat(account, table_id)
            raise

    def _funded(
        self, table_id: str, change: Change, payer: Callable[[MoveRead], Payment | None]
    ) -> Outcome:
        """`_change` for a change paid from a wallet (`payer` says whose, from the table
        read): tried on the table first, so that a refusal or a replay touches no
        wallet; then the chips reserved, the change made, and the reservation posted
        when its commit took it, voided when it surely did not (refused or replayed),
        left to the sweeper when that is not known (the store failed)."""
        idempotency = change.idempotency
        idem_key = idempotency_key(table_id, idempotency.key) if idempotency else None
        # a keyed change reads the table from Redis, where its replay record is: a replay
        # must be answered before any chip is reserved (a wallet spent since the first
        # answer would refuse the reservation), and this process's copy does not know it
        read, fresh = self.reader.read(table_id, change.token, idem_key, copy=idem_key is None)
        payment = payer(read)
        if payment is None:
            return self._change(table_id, change, (read, fresh))
        try:
            tried = self._compute(table_id, change, read, idem_key if fresh else None)
        except ApiError:
            if fresh:
                raise
            # refused by this process's copy: only a fresh read refuses
            self.reader.forget(table_id)
            read, fresh = self.reader.read(table_id, change.token, idem_key, copy=False)
            tried = self._compute(table_id, change, read, idem_key)
        if isinstance(tried, Outcome):
            return tried  # a replay
        change.accepts.append(
            self.wallets.reserve(payment.player, table_id, payment.kind, payment.amount)
        )
        try:
            outcome = self._change(table_id, change, (read, fresh))
        except ApiError as error:
            if error.status < 500:
                for reservation in change.accepts:
                    self.wallets.void(reservation)
            raise
        replayed = outcome.headers.get("Idempotent-Replayed") == "true"
        for reservation in change.accepts:
            try:
                if replayed:
                    self.wallets.void(reservation)
                else:
                    self.wallets.post(reservation)
            except Exception:  # the sweeper posts it
                log.warning(
                    "reservation left to the sweeper",
                    extra={"transfer": reservation.transfer_id},
                    exc_info=True,
                )
        return outcome

    def seats_of(self, account: str) -> list[dict[str, Any]]:
        """Every seat the player `account` holds, with the table as that seat sees it.

        Tables closed since, or where the player holds no seat and no kept deal, leave
        the player's list.
        """
        if self.players is None:
            return []
        table_ids = self.players.store.seat_tables(account)
        records = self.store.load_many(table_ids)
        seats, gone = [], []
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
                    "table": self.present(record, viewer),
                }
            )
        self.players.store.forget_seats(account, gone)
        return seats

    def leave(
        self,
        table_id: str,
        seat: int,
        principal: Principal,
        if_match: IfMatch | None,
        idempotency: Idempotency | None,
    ) -> Outcome:
        """A seat asks to leave: now, or when the deal it is in is settled."""
        principal.require_actor()
        holder = SeatHolder(seat)

        def move(state: dict[str, Any]) -> Transition:
            return transition(game_of(state).leave(table_state(state), seat, self.clock()))

        def respond(state: dict[str, Any], events: list[dict[str, Any]]) -> Outcome:
            cashed = next(
                (
                    e["data"]["amount"]
                    for e in events
                    if e["type"] == "cashed_out" and e["data"]["seat"] == seat
                ),
                None,
            )
            gone = str(seat) not in state["seats"] or (
                state["seats"][str(seat)]["player_id"] != holder.viewer.player
            )
            return Outcome(
                200,
                {
                    # once gone, the seat sees the table as everyone else does
                    "table": self.present(state, SPECTATOR if gone else holder.viewer),
                    "events": [public_event(e) for e in events if holder.viewer.may_see(e)],
                    "seat": seat,
                    "left": gone,
                    "leaving": not gone,
                    "cashed_out": cashed,
                },
                {},
            )

        change = Change(
            move,
            respond,
            if_match=if_match,
            idempotency=idempotency,
            token=principal.token,
            account=principal.player,
            authorize=holder,
        )
        return self._change(table_id, change)

    def act(
        self,
        table_id: str,
        principal: Principal,
        action: Mapping[str, Any],
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

        def move(state: dict[str, Any]) -> Transition:
            seat = holder.seat
            game = game_of(state)
            if kind not in game.moves:
                raise unsupported_move(state["game"], kind)
            now = self.clock()
            played = move_of(action, self.deck_source)
            table = table_state(state)
            if isinstance(played, Call):
                # the rules refuse a malformed call before the evaluator is asked to rank it
                game.verify(table, seat, played, now)
                rules = game.hand_rules(table)
                ranked = self.evaluator.rank(rules.game, played.cards, rules.wild_rank)
                played = replace(played, ranked=ranked)
            return transition(game.act(table, seat, played, now))

        def respond(state: dict[str, Any], events: list[dict[str, Any]]) -> Outcome:
            if minimal:
                return Outcome(204, {}, {"Preference-Applied": "return=minimal"})
            return Outcome(
                200,
                {
                    "table": self.present(state, holder.viewer),
                    "events": [public_event(e) for e in events if holder.viewer.may_see(e)],
                },
                {},
            )

        def held_version(record: TableRecord) -> int | None:
            # the version before this seat's turn was held open (`_hold_turn`): the hold
            # moved only the deadline, so an If-Match from before it still matches
            held = record.state.get("turn_held_from")
            if held is None or held["seat"] != holder.viewer.seat:
                return None
            return int(held["version"])

        try:
            change = Change(
                move,
                respond,
                if_match=if_match,
                idempotency=idempotency,
                token=principal.token,
                account=principal.player,
                authorize=holder,
                also_matches=held_version,
            )
            if kind == "rebuy":

                def payer(read: MoveRead) -> Payment | None:
                    wallet = self._wallet_of(read, principal)
                    if wallet is None or not valid_amount(action.get("amount")):
                        return None
                    return Payment(wallet, "rebuy", action["amount"])

                return self._funded(table_id, change, payer)
            return self._change(table_id, change)
        except EvaluatorUnavailable as error:
            if kind != "call":
                raise
            held = self._hold_turn(table_id, principal, action)
            if held is None:
                raise
            raise type(error)(
                f"{error.detail} The call could not be ranked; the turn is held open until"
                f" {held:.3f} (Unix time): call again then or sooner."
            ) from None

    @staticmethod
    def _wallet_of(read: MoveRead, principal: Principal) -> str | None:
        """The player whose wallet pays for a move: the player, or the player who holds
        the seat of a seat token (None: no such seat, which the move then refuses)."""
        if principal.player is not None:
            return principal.player
        if read.record is None or read.player is None:
            return None
        local = read.player["player"]
        for account, entry in (read.record.state.get("accounts") or {}).items():
            if local in entry["players"]:
                return str(account)
        return None

    def _hold_turn(
        self, table_id: str, principal: Principal, action: Mapping[str, Any]
    ) -> float | None:
        """Keep a Paiute turn open while its call cannot be ranked (`paiute.hold_turn`).

        The turn's deadline, or None when the turn could not be held (the table moved on).
        """
        holder = SeatHolder()

        def move(state: dict[str, Any]) -> Transition:
            seat = holder.seat
            call = move_of(action, self.deck_source)
            assert isinstance(call, Call)  # only a call is held
            now = self.clock()
            held, events = transition(
                game_of(state).hold_turn(table_state(state), seat, call, now, CALL_HOLD_SECONDS)
            )
            if events:
                held.setdefault("turn_held_from", {"seat": seat, "version": state["version"]})
            return held, events

        def respond(state: dict[str, Any], events: list[dict[str, Any]]) -> Outcome:
            return Outcome(200, {"deadline": state["deadline"]}, {})

        try:
            change = Change(
                move,
                respond,
                token=principal.token,
                account=principal.player,
                authorize=holder,
                skip_empty=True,
                holding=True,
            )
            outcome = self._change(table_id, change)
        except ApiError:
            return None
        return float(outcome.body["deadline"])

    def run_deadline(self, table_id: str) -> bool:
        """Apply a passed deadline (the clock calls this); True if the table changed.

        The deadline may be the game's (a turn, the next deal) or the table's idle
        time: an idle table is cashed out and closed.
        """
        now = self.clock()

        def move(state: dict[str, Any]) -> Transition:
            events: list[Event] = []
            if self.retention.is_idle(state, now):
                # cash out before the game goes on: no new deal starts for an idle table
                state, events = self.retention.close_idle(state, now)
                if state.get("closed_at") is not None:
                    return state, events
            state, more = transition(
                game_of(state).on_deadline(table_state(state), now, self.deck_source())
            )
            return state, events + more

        def respond(state: dict[str, Any], events: list[dict[str, Any]]) -> Outcome:
            return Outcome(200, {"events": len(events)}, {})

        outcome = self._change(table_id, Change(move, respond, skip_empty=True, activity=False))
        return bool(outcome.body.get("events"))

    def next_deadline(self, state: Mapping[str, Any], now: float | None = None) -> float | None:
        """When the clock next has work on this table: the game's deadline, a showdown
        left unsettled (the evaluator did not answer: tried again in a second), or
        idleness."""
        rules = game_of(state)
        table = table_state(state)
        game: float | None = rules.next_deadline(table)
        if game is None and rules.ranking_request(table) is not None:
            game = (self.clock() if now is None else now) + SHOWDOWN_RETRY_SECONDS
        if self.retention.idle_seconds <= 0 or state.get("closed_at") is not None:
            return game
        idle = self.retention.idle_deadline(state)
        if now is not None and idle <= now:
            # idle, but not closable yet (a deal is still being played out): look again
            # when the game moves on, or a little later
            idle = now + self.retention.idle_grain()
        return idle if game is None else min(game, idle)

    def _settle(
        self, state: dict[str, Any], events: list[Event]
    ) -> tuple[dict[str, Any], list[Event]]:
        """Rank the hands a showdown needs and settle it, in the same change.

        When the evaluator cannot answer, a change that did something (the move that
        led to the showdown) is kept with the showdown unsettled: the table waits in
        its showdown phase and the clock settles it once the evaluator answers
        (`next_deadline`). With nothing else to keep, the evaluator's error is raised.
        """
        game = game_of(state)
        table = table_state(state)
        needed = game.ranking_request(table)
        if needed is None:
            return state, events
        rules = game.hand_rules(table)
        try:
            ranks = self.evaluator.showdown(rules.game, needed, rules.wild_rank)
        except EvaluatorUnavailable as error:
            if not events:
                raise
            log.warning(
                "showdown left to the clock",
                extra={"table": state.get("table_id"), "detail": error.detail},
            )
            return state, events
        settled, more = transition(game.settle(table, ranks, self.clock()))
        return settled, events + more

    def _due_at_once(
        self, state: dict[str, Any], events: list[Event]
    ) -> tuple[dict[str, Any], list[Event], dict[str, Any] | None]:
        """Apply the game's deadline in the same change when the change left it passed
        already: the next deal after a deal that ended with `deal_pause_seconds` 0 is
        dealt at once, as the clock would deal it at its next tick, without the clock's
        read and commit and without its tick's wait.

        Also the record of the deal this change finished (None: none), taken before a
        next deal replaces it in the state."""
        game = game_of(state)
        table = table_state(state)
        finished = game.finished_deal(table)
        if not events:
            return state, events, finished
        now = self.clock()
        due = game.next_deadline(table)
        if due is None or due > now or game.ranking_request(table) is not None:
            return state, events, finished
        dealt, more = transition(game.on_deadline(table, now, self.deck_source()))
        if not more:
            return state, events, finished
        dealt, events = self._settle(dealt, events + more)
        return dealt, events, finished

    def _stored_events(
        self, record: TableRecord, state: dict[str, Any], events: list[Event], now: float
    ) -> list[dict[str, Any]]:
        """Number the events and turn seat audiences into player audiences.

        Each event is stamped with the deal it belongs to: a change that ends a deal and
        deals the next stamps the events before the next deal's story the ended deal's."""
        types = [item["type"] for item in events]
        boundary = _next_deal_start(types)
        ended_hand = record.state.get("hand_number", 0)
        stored = []
        for offset, item in enumerate(events, start=1):
            audience = None
            if item.get("visible_to") is not None:
                audience = []
                for seat in item["visible_to"]:
                    holder = state["seats"].get(str(seat)) or record.state["seats"].get(str(seat))
                    if holder is not None:
                        audience.append(holder["player_id"])
            stored.append(
                {
                    "id": record.seq + offset,
                    "type": item["type"],
                    "data": item["data"],
                    "at": now,
                    "hand_number": (
                        ended_hand
                        if boundary is not None and offset <= boundary
                        else state.get("hand_number", 0)
                    ),
                    "audience": audience,
                }
            )
        return stored

    def _history(
        self,
        record: TableRecord,
        state: dict[str, Any],
        stored: list[dict[str, Any]],
        deal: dict[str, Any] | None,
    ) -> tuple[dict[str, tuple[str, int]], int | None]:
        """The hand history of a deal that this change finished, if any, and its number.

        A deal's history runs from the first event of the change that opened it (an
        abandoned game's split and departures, the new game) to the last event of the
        change that ended it: the end of the game, cash-outs and departures included,
        stopping short of a next game or deal that change starts.
        """
        extra: dict[str, tuple[str, int]] = {}
        types = [item["type"] for item in stored]
        # the first event of the deal that was open when this change began
        first_event = state.get("deal_first_event", 1)
        opened = None
        if "deal_started" in types:
            # a deal's story starts with the change that opens it: the end of a game too few
            # could go on with, its departures and the new game come before `deal_started`
            opened = len(types) - 1 - types[::-1].index("deal_started")
            first = _next_deal_start(types) or 0
            state["deal_first_event"] = stored[first]["id"]
        ended = types.index("deal_ended") if "deal_ended" in types else None
        if deal is None or ended is None:
            return extra, None
        if opened is not None and opened < ended:
            first_event = state["deal_first_event"]  # the deal this change opened ended
        boundary = next(
            (i for i in range(ended + 1, len(stored)) if types[i] in NEXT_DEAL_EVENTS),
            len(stored),
        )
        last = stored[boundary - 1]["id"]
        history = {
            "table_id": record.table_id,
            "hand_number": deal["number"],
            "game_number": deal["game_number"],
            "dealer": deal["dealer"],
            "outcome": deal["outcome"],
            "showdown": {
                "reason": deal["showdown_reason"],
                "hands": {
                    key: {"cards": deal["shown"].get(key), **rank}
                    for key, rank in (deal["ranks"] or {}).items()
                },
            }
            if deal["ranks"]
            else None,
            "pot_flow": deal["flow"],
            "wild_card": deal.get("wild_card"),
            # sealed: only `hand_history` reads it, to open each reader the cards it saw
            "sealed": {
                "deck": list(deal["deck"]),
                "salt": deal["salt"],
                "game": state["game"],
                "reshuffles": deal.get("reshuffle_orders", []),
            },
            "first_event": first_event,
            "last_event": last,
        }
        extra[hand_key(record.table_id, deal["number"])] = (jsonio.dumps(history), 0)
        return extra, int(deal["number"])

    def _keep_scheduled(self, record: TableRecord, now: float) -> None:
        """After a deadline with nothing to do, schedule the table when it next has work."""
        deadline = self.next_deadline(record.state, now)
        try:
            self.store.reschedule(record, deadline)
        except Exception:  # the clock's sweep repairs a schedule it finds wrong
            log.warning(
                "could not reschedule table", extra={"table": record.table_id}, exc_info=True
            )

    @staticmethod
    def _departed_tokens(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
        """Token entries of players who are no longer seated: their tokens stop working."""
        present = {seat["player_id"] for seat in after["seats"].values()}
        return [
            f"player:{seat['player_id']}"
            for seat in before["seats"].values()
            if seat["player_id"] not in present
        ]

    def _change(
        self, table_id: str, change: Change, first: tuple[MoveRead, bool] | None = None
    ) -> Outcome:
        """Read, compute, commit; compute again on a lost race, at most MAX_ATTEMPTS times.

        The first attempt may compute from this process's copy of the table (or from
        `first`, a read made already and whether it is fresh); a refusal is only given
        from a fresh read, except that the evaluator is unavailable (asking it again
        would only wait longer).
        """
        idempotency = change.idempotency
        idem_key = idempotency_key(table_id, idempotency.key) if idempotency else None
        for attempt in range(MAX_ATTEMPTS):
            if attempt == 0 and first is not None:
                read, fresh = first
            else:
                read, fresh = self.reader.read(table_id, change.token, idem_key, copy=attempt == 0)
            try:
                computed = self._compute(table_id, change, read, idem_key if fresh else None)
            except EvaluatorUnavailable:
                raise
            except ApiError:
                if fresh:
                    raise
                self.reader.forget(table_id)  # the table may have moved on: read it
                _WARM_REFUSED.inc()
                continue
            if isinstance(computed, Outcome):
                return computed  # a replay
            record, state, events, finished = computed
            now = self.clock()
            if change.skip_empty and not events:
                if not fresh:
                    self.reader.forget(table_id)  # nothing to do by the copy: make sure
                    continue
                self._keep_scheduled(record, now)
                return change.respond(state, [])
            commit, outcome = self._commit_of(change, record, state, events, now, finished)
            if idem_key is not None and idempotency is not None:
                commit.extra[idem_key] = (
                    self.replays.record_value(idempotency, outcome, change.seal),
                    self.replays.ttl,
                )
                if not fresh:
                    commit.absent = idem_key  # its replay record was not read
            try:
                landed = self.store.commit(commit)
            except TransferExpired:
                self.reader.forget(table_id)
                raise ApiError(
                    409,
                    "conflict",
                    "Too slow",
                    "The change took longer than its chips may stay reserved; try again.",
                    headers={"Retry-After": "1"},
                ) from None
            if landed:
                if not fresh:
                    _WARM_HIT.inc()
                self.reader.committed(commit, read, now)
                outbox = table_outbox_key(table_id)
                if any(key == outbox for key, _, _ in commit.hsets):
                    self.wallets.relay_quietly(table_id)
                return outcome
            self.reader.forget(table_id)
            if not fresh:
                _WARM_STALE.inc()
        raise ApiError(
            409,
            "conflict",
            "Too much contention",
            "The table changed too often to apply this move; try again.",
            headers={"Retry-After": "1"},
        )

    def _compute(
        self, table_id: str, change: Change, read: MoveRead, remember_key: str | None
    ) -> Outcome | tuple[TableRecord, dict[str, Any], list[Event], dict[str, Any] | None]:
        """A replay's answer, or the table read, the state and events the change makes and
        the record of the deal it finished (`_due_at_once`).

        A refusal by the rules is kept for replays under `remember_key` (given only when
        the table was read from Redis).
        """
        idempotency = change.idempotency
        if (
            idempotency is not None
            and read.replay is not None
            and read.replay.get("fingerprint") == idempotency.fingerprint
        ):
            # a repeat of a request already answered gets that answer, even when the
            # request took the caller's seat (and token) away or closed the table
            replay = self.replays.replay_record(read.replay, idempotency)
            if replay is not None:
                return replay
        record = self.open_table(table_id, read.record)
        if change.authorize is not None:
            change.authorize(self.viewer_of(record, change.token, read.player, change.account))
        if idempotency is not None:
            replay = self.replays.replay_record(read.replay, idempotency)
            if replay is not None:
                return replay
        if change.if_match is not None and not change.if_match.matches(record.version):
            before = None if change.also_matches is None else change.also_matches(record)
            if before is None or not change.if_match.matches(before):
                raise stale_version(f'"{record.version}"')
        try:
            state, events = change.move(record.state)
            state, events = self._settle(state, events)
            state, events, finished = self._due_at_once(state, events)
        except (RuleError, ApiError) as error:
            # a refusal (by the rules or by the gateway's own checks in the move) is the
            # request's answer: a retry with the key gets it again, whatever came since
            failure = (
                error
                if isinstance(error, ApiError)
                else from_rule_error(error.code, error.template, error.field, **error.params)
            )
            if remember_key is not None and failure.status < 500:
                self.replays.remember(remember_key, idempotency, error_outcome(failure))
            raise failure from None
        return record, state, events, finished

    def _commit_of(
        self,
        change: Change,
        record: TableRecord,
        state: dict[str, Any],
        events: list[Event],
        now: float,
        finished_deal: dict[str, Any] | None,
    ) -> tuple[Commit, Outcome]:
        """Everything the change writes, and its answer; `finished_deal` is the record of
        the deal the change finished, if it did."""
        stored = self._stored_events(record, state, events, now)
        if not change.holding:
            state.pop("turn_held_from", None)
        state["version"] = record.version + 1
        if change.activity:
            state["active_at"] = now
            state.pop("closing", None)
        if state.get("closing") is not None:
            state["closing"]["cashed_out"] += [
                {key: item["data"][key] for key in ("seat", "name", "amount")}
                for item in stored
                if item["type"] == "cashed_out"
            ]
        outcome = change.respond(state, stored)
        outcome.headers["ETag"] = f'"{record.version + 1}"'
        # seats that left with the deal this change ended left at that deal, not the next
        departed_at = stored[0]["hand_number"] if stored else state.get("hand_number", 0)
        _note_departures(state, departed_at)
        extra, finished = self._history(record, state, stored, finished_deal)
        commit = Commit(record, state, stored, extra=extra, deadline=self.next_deadline(state, now))
        if finished is not None:
            commit.trim = self.retention.trim(record, finished)
            if commit.trim is not None:
                _forget_departed(state, commit.trim.first_hand)
        if state.get("closed_at") is not None:
            commit.deadline = None
            commit.close = self.retention.close(record, state, now)
            commit.extra[closed_key(record.table_id)] = (
                jsonio.dumps(self.retention.closing_record(state, stored)),
                self.retention.closed_record_seconds,
            )
        if change.token_sets is not None:
            commit.token_sets = change.token_sets(state, stored)
        commit.token_deletes = self._departed_tokens(record.state, state)
        self._ledger_writes(commit, change, record, state, stored, now)
        self.webhooks.writes(commit, record, state, stored, now)
        return commit, outcome

    def _ledger_writes(
        self,
        commit: Commit,
        change: Change,
        record: TableRecord,
        state: dict[str, Any],
        stored: list[dict[str, Any]],
        now: float,
    ) -> None:
        """The table's side of the chips this change moves: the reservations it accepts
        into its ledger; its cash-outs and a closed table's reserve into its ledger and
        its outbox (relayed to the wallets after the commit, `gateway.service.wallets`)."""
        table_id = record.table_id
        for reservation in change.accepts:
            commit.hsets.append(self.wallets.table_entry(reservation))
            commit.land_before = min(commit.land_before or reservation.expires, reservation.expires)
        leaving = []
        for item in stored:
            amount = item["data"].get("amount", 0)
            if item["type"] == "cashed_out" and amount > 0:
                seat = str(item["data"]["seat"])
                holder = record.state["seats"].get(seat) or state["seats"].get(seat) or {}
                local = holder.get("player_id")
                account = _account_of(state, local) or _account_of(record.state, local)
                cause = {"table": table_id, "seat": int(seat), "hand": item["hand_number"]}
                leaving.append(
                    self.wallets.cash_out(table_id, item["id"], amount, account, now, cause)
                )
            elif item["type"] == "reserve_to_house" and amount > 0:
                leaving.append(self.wallets.reserve_to_house(table_id, item["id"], amount, now))
        if leaving:
            writes, before = self.wallets.outgoing(table_id, leaving)
            commit.hsets += writes
            commit.land_before = min(commit.land_before or before, before)


def _next_deal_start(types: list[str]) -> int | None:
    """Where, in the event types of a change that ends a deal and opens another, the
    next deal's story begins (its new game or `deal_started`); None for any other change."""
    if "deal_started" not in types:
        return None
    opened = len(types) - 1 - types[::-1].index("deal_started")
    ends = [i for i in range(opened) if types[i] == "deal_ended"]
    if not ends:
        return None
    return next(i for i in range(ends[-1] + 1, opened + 1) if types[i] in NEXT_DEAL_EVENTS)


def _account_of(state: dict[str, Any], local: int | None) -> str | None:
    """The player who held the table's local player id `local` (None: nobody)."""
    for account, entry in (state.get("accounts") or {}).items():
        if local in entry["players"]:
            return str(account)
    return None


def _note_departures(state: dict[str, Any], hand_number: int) -> None:
    """Mark the accounts whose seat this change ended with the deal they left at,
    `hand_number`.

    An account's entry stays while the table keeps a history of a deal it played, so
    that the player still reads their own cards in it (`_forget_departed`).
    """
    accounts = state.get("accounts")
    if not accounts:
        return
    present = {seat["player_id"] for seat in state["seats"].values()}
    changed = None
    for account, entry in accounts.items():
        if entry["left"] is None and present.isdisjoint(entry["players"]):
            changed = changed or dict(accounts)
            changed[account] = {**entry, "left": hand_number}
    if changed is not None:
        state["accounts"] = changed


def _forget_departed(state: dict[str, Any], first_hand: int) -> None:
    """Drop the accounts that left before the oldest deal the table still keeps."""
    accounts = state.get("accounts")
    if accounts:
        state["accounts"] = {
            account: entry
            for account, entry in accounts.items()
            if entry["left"] is None or entry["left"] >= first_hand
        }
