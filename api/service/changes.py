"""The change loop: every change of a table, applied atomically to tables kept in Redis.

A change is read -> computed -> committed: the game computes the new state and its
events from the state read; if the deal reaches a showdown, the evaluator ranks the
hands and the game settles the deal in the same change; then one Lua script writes
everything if nobody changed the table meanwhile (otherwise the change is computed
again, a bounded number of times). Nothing is written when a rule refuses the move or
the evaluator cannot be reached, so a refused move leaves the table as it was.

A change reads once (table, seat token and idempotency record in one pipeline, or this
process's copy of the table: `api.adapters.warm.TableReader`) and commits once. The
commit writes, beside the state: the change's events and the history of a deal it
finished (`api.service.history`), what retention trims or closes
(`api.service.retention`), the table's next deadline for the clock
(`api.service.schedule`), the chips it moves into the table's ledger and outbox
(`api.service.wallets`), its turn notices (`api.service.webhooks`) and its place in
the lobby (`api.service.lobby`). A table's
creation is its first commit, its Idempotency-Key claimed before it and its answer kept
after (`api.service.idempotency`: that record cannot share the new table's slot).

The use cases build the changes: `api.service.creation`, `seats`, `moves`, `leaving`
and `deadlines`; reads are `api.service.queries`.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from api.adapters.evaluator import EvaluatorClient
from api.adapters.recall import OUTBOX_KEY
from api.adapters.store import (
    PACKING_KEY,
    Commit,
    HandRecord,
    MoveRead,
    TableRecord,
    TableStore,
    TransferExpired,
    idempotency_key,
)
from api.adapters.wallets import Cause, Transfer, table_outbox_key
from api.adapters.warm import TableReader
from api.errors import (
    ApiError,
    EvaluatorUnavailable,
    from_rule_error,
    missing_token,
    stale_version,
    wrong_seat,
)
from api.games.common import Deck, RuleError, copy_state
from api.games.events import Event
from api.games.game import Moved
from api.games.state import CashedOut, GutsDeal, PaiuteDeal, TableState
from api.service import history, lobby
from api.service.decks import shuffled_deck
from api.service.dispatch import game_of
from api.service.idempotency import Idempotency, IfMatch, Outcome, Replays, error_outcome
from api.service.packing import POINT_AHEAD
from api.service.queries import TableQueries, account_of
from api.service.recall import RELAY_SECONDS, Recall
from api.service.schedule import Schedule
from api.service.visibility import SPECTATOR, Viewer
from api.service.wallets import Reservation, WalletService
from api.service.webhooks import WebhookService
from api.telemetry import WARM_MOVES

log = logging.getLogger("cardroom.tables")

MAX_ATTEMPTS = 16
_WARM_HIT, _WARM_STALE, _WARM_REFUSED = (
    WARM_MOVES.labels(result) for result in ("hit", "stale", "refused")
)

# what a change makes of a table: its new state and the events that say how
Changed = tuple[TableState, list[Event]]
Move = Callable[[TableState], Changed]
Respond = Callable[[TableState, list[Event]], Outcome]
TokenSets = Callable[[TableState, list[Event]], dict[str, str]]
Result = TypeVar("Result")
# a deal the change finished (its record, taken before a next deal replaced it)
Finished = GutsDeal | PaiuteDeal | None
Computed = tuple[TableRecord, TableState, list[Event], Finished]


def changed(moved: Moved) -> Changed:
    """A game's record of a move as the change loop takes it."""
    return moved.state, moved.events


@dataclass(frozen=True)
class NewTable:
    """What a change that makes its table (`Change.creates`) brings to the loop.

    The table is made `at` that time (its creation, its first commit and its place in
    the lobby) by `make`; `undo` gives back what the change reserved outside the table
    (the table's place in its owner's quota) when the change fails.
    """

    at: float
    make: Callable[[], Changed]
    undo: Callable[[], None]


@dataclass
class Change:
    """One change of a table: how to compute it and answer it, and what it must respect.

    `authorize` sees the token's holder before anything else is checked; `if_match`
    matches the table's version, or the one `also_matches` gives; `token_sets` are seat
    tokens the change grants, `seal` the one its replays return; a change that computes
    no event writes nothing with `skip_empty`; `activity` marks the table as played at;
    every change but a turn's hold (`holding`) ends that hold's `turn_held_from`;
    `accepts` are the wallet reservations its commit accepts (`api.service.wallets`);
    `creates` makes the table: nothing is read, its first commit finds no table, and it
    has no `move` of a table that is.
    """

    move: Move | None
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
    creates: NewTable | None = None


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


class TableChanges:
    """Changes of the tables in `store`: read, computed, committed, retried on a lost race."""

    def __init__(
        self,
        store: TableStore,
        reader: TableReader,
        evaluator: EvaluatorClient,
        replays: Replays,
        schedule: Schedule,
        wallets: WalletService,
        webhooks: WebhookService,
        clock: Callable[[], float] = time.time,
        deck_source: Callable[[], Deck] = shuffled_deck,
        recall: Recall | None = None,
    ) -> None:
        """Read tables with `reader` and commit them to `store`; rank showdowns with
        `evaluator`; keep answers with `replays`; schedule, trim and close tables as
        `schedule` (and its retention) says; move chips with `wallets`; write turn
        notices with `webhooks`. `clock` gives the time, `deck_source` the decks; each
        deal a commit finishes goes to its players' `recall`."""
        self.store = store
        self.reader = reader
        self.evaluator = evaluator
        self.replays = replays
        self.schedule = schedule
        self.retention = schedule.retention
        self.wallets = wallets
        self.webhooks = webhooks
        self.clock = clock
        self.deck_source = deck_source
        self.queries = TableQueries(store)
        self.recall = recall

    # ------------------------------------------------------------ read, compute, commit

    def apply(
        self, table_id: str, change: Change, first: tuple[MoveRead, bool] | None = None
    ) -> Outcome:
        """Read, compute, commit; compute again on a lost race, at most MAX_ATTEMPTS times.

        The first attempt may compute from this process's copy of the table (or from
        `first`, a read made already and whether it is fresh); a refusal is only given
        from a fresh read, except that the evaluator is unavailable (asking it again
        would only wait longer). A change that `creates` its table is committed once.
        """
        if change.creates is not None:
            return self._create(table_id, change, change.creates)
        idempotency = change.idempotency
        idem_key = idempotency_key(table_id, idempotency.key) if idempotency else None
        for attempt in range(MAX_ATTEMPTS):
            if attempt == 0 and first is not None:
                read, fresh = first
            else:
                read, fresh = self.reader.read(table_id, change.token, idem_key, copy=attempt == 0)
            outcome = self._attempt(table_id, change, read, fresh, idem_key)
            if outcome is not None:
                return outcome
        raise ApiError(
            409,
            "conflict",
            "Too much contention",
            "The table changed too often to apply this move; try again.",
            headers={"Retry-After": "1"},
        )

    def _attempt(
        self, table_id: str, change: Change, read: MoveRead, fresh: bool, idem_key: str | None
    ) -> Outcome | None:
        """One attempt of `apply` from `read`: the answer, or None to read and try again."""
        try:
            computed = self.compute(table_id, change, read, idem_key if fresh else None)
        except EvaluatorUnavailable:
            raise
        except ApiError:
            if fresh:
                raise
            self.reader.forget(table_id)  # the table may have moved on: read it
            _WARM_REFUSED.inc()
            return None
        if isinstance(computed, Outcome):
            return computed  # a replay
        record, state, events, finished = computed
        now = self.clock()
        if change.skip_empty and not events:
            if not fresh:
                self.reader.forget(table_id)  # nothing to do by the copy: make sure
                return None
            self._keep_scheduled(record, now)
            return change.respond(state, [])
        commit, outcome = self._commit_of(change, record, state, events, now, finished)
        if idem_key is not None and change.idempotency is not None:
            commit.extra[idem_key] = (
                self.replays.record_value(change.idempotency, outcome, change.seal),
                self.replays.ttl,
            )
            if not fresh:
                commit.absent = idem_key  # its replay record was not read
        if not self._landed(commit):
            self.reader.forget(table_id)
            if not fresh:
                _WARM_STALE.inc()
            return None
        if not fresh:
            _WARM_HIT.inc()
        self.reader.committed(commit, read, now)
        if self.recall is not None:
            self.recall.committed(commit)
        outbox = table_outbox_key(table_id)
        if any(key == outbox for key, _, _ in commit.hsets):
            self.wallets.relay_quietly(table_id)
        return outcome

    def _landed(self, commit: Commit) -> bool:
        """Commit; False when the table changed since it was read (nothing was written)."""
        try:
            return self.store.commit(commit)
        except TransferExpired:
            self.reader.forget(commit.record.table_id)
            raise ApiError(
                409,
                "conflict",
                "Too slow",
                "The change took longer than its chips may stay reserved; try again.",
                headers={"Retry-After": "1"},
            ) from None

    def _create(self, table_id: str, change: Change, new: NewTable) -> Outcome:
        """A new table's first commit, its Idempotency-Key claimed before and its answer
        (or refusal) kept after; a failure gives the key up. `new.undo` runs on any
        failure, before the key is settled."""
        idempotency = change.idempotency
        claim_key = None
        if idempotency is not None:
            claim_key = idempotency_key("create", idempotency.key)
            replay = self.replays.claim(claim_key, idempotency)
            if replay is not None:
                return replay
        try:
            outcome = self._first_commit(table_id, change, new)
        except ApiError as error:
            new.undo()
            if claim_key is not None:
                if error.status >= 500:
                    self.replays.release(claim_key)
                else:
                    self.replays.remember(claim_key, idempotency, error_outcome(error))
            raise
        except Exception:
            new.undo()
            if claim_key is not None:  # a retry may try again at once
                self.replays.release(claim_key)
            raise
        if claim_key is not None:
            self.replays.remember(claim_key, idempotency, outcome)
        return outcome

    def _first_commit(self, table_id: str, change: Change, new: NewTable) -> Outcome:
        """Compute a new table and commit it as version 1 (409 if its id is taken), then
        list it in the lobby."""
        state, events = self._refused(change, None, new.make)
        # before its first commit the table is the empty one it starts as: no seat (so
        # none departs), no event, version 0, which the script takes for no table
        nothing = TableRecord(table_id, copy_state(state), 0, 0)
        commit, outcome = self._commit_of(change, nothing, state, events, new.at, None)
        if not self.store.commit(commit):
            raise ApiError(409, "conflict", "Conflict", "The table id is already taken.")
        self.store.index_table(table_id, new.at)
        return outcome

    # ------------------------------------------------------------ computing a change

    def compute(
        self, table_id: str, change: Change, read: MoveRead, remember_key: str | None
    ) -> Outcome | Computed:
        """A replay's answer, or the table read, the state and events the change makes and
        the record of the deal it finished (`_due_at_once`).

        A refusal by the rules is kept for replays under `remember_key` (given only when
        the table was read from Redis).
        """
        idempotency = change.idempotency
        replay_key = None if idempotency is None else idempotency_key(table_id, idempotency.key)
        if (
            idempotency is not None
            and replay_key is not None
            and read.replay is not None
            and read.replay.get("fingerprint") == idempotency.fingerprint
        ):
            # a repeat of a request already answered gets that answer, even when the
            # request took the caller's seat (and token) away or closed the table
            replay = self.replays.replay_record(read.replay, idempotency, replay_key)
            if replay is not None:
                return replay
        record = self.queries.open_table(table_id, read.record)
        if change.authorize is not None:
            viewer = self.queries.viewer_of(record, change.token, read.player, change.account)
            change.authorize(viewer)
        if idempotency is not None and replay_key is not None:
            replay = self.replays.replay_record(read.replay, idempotency, replay_key)
            if replay is not None:
                return replay
        if change.if_match is not None and not change.if_match.matches(record.version):
            before = None if change.also_matches is None else change.also_matches(record)
            if before is None or not change.if_match.matches(before):
                raise stale_version(f'"{record.version}"')
        state, events, finished = self._computed(change, record, remember_key)
        return record, state, events, finished

    def _computed(
        self, change: Change, record: TableRecord, remember_key: str | None
    ) -> tuple[TableState, list[Event], Finished]:
        """The state and events the change makes of `record` (its showdown settled, a
        deadline it left passed applied) and the deal it finished; a refusal raised as
        an ApiError and kept for replays under `remember_key`."""
        move = change.move
        if move is None:
            raise TypeError("only a change that makes its table has no move")

        def compute() -> tuple[TableState, list[Event], Finished]:
            state, events = self._settle(*move(record.state), record.state)
            return self._due_at_once(state, events, record.state)

        return self._refused(change, remember_key, compute)

    def _refused(
        self, change: Change, remember_key: str | None, compute: Callable[[], Result]
    ) -> Result:
        """`compute()`, a refusal by the rules or the gateway's own checks raised as an
        ApiError and kept for replays under `remember_key`."""
        try:
            return compute()
        except (RuleError, ApiError) as error:
            # a refusal (by the rules or by the gateway's own checks in the move) is the
            # request's answer: a retry with the key gets it again, whatever came since
            failure = (
                error
                if isinstance(error, ApiError)
                else from_rule_error(error.code, error.template, error.field, **error.params)
            )
            if remember_key is not None and failure.status < 500:
                self.replays.remember(remember_key, change.idempotency, error_outcome(failure))
            raise failure from None

    def _settle(self, state: TableState, events: list[Event], original: TableState) -> Changed:
        """Rank the hands a showdown needs and settle it, in the same change: in `state`
        itself unless it is the `original` that the change began from (the record's, which
        must stay as it was), since the move made it for this change alone.

        When the evaluator cannot answer, a change that did something (the move that
        led to the showdown) is kept with the showdown unsettled: the table waits in
        its showdown phase and the clock settles it once the evaluator answers
        (`api.service.schedule`). With nothing else to keep, the evaluator's error is raised.
        """
        game = game_of(state)
        needed = game.ranking_request(state)
        if needed is None:
            return state, events
        rules = game.hand_rules(state)
        try:
            ranks = self.evaluator.showdown(rules.game, needed, rules.wild_rank)
        except EvaluatorUnavailable as error:
            if not events:
                raise
            log.warning(
                "showdown left to the clock",
                extra={"table": state["table_id"], "detail": error.detail},
            )
            return state, events
        settled = game.settle(state, ranks, self.clock(), state is not original)
        return settled.state, events + settled.events

    def _due_at_once(
        self, state: TableState, events: list[Event], original: TableState
    ) -> tuple[TableState, list[Event], Finished]:
        """Apply the game's deadline in the same change when the change left it passed
        already: the next deal after a deal that ended with `deal_pause_seconds` 0 is
        dealt at once, as the clock would deal it at its next tick, without the clock's
        read and commit and without its tick's wait.

        Also the record of the deal this change finished (None: none), taken before a
        next deal replaces it in the state. `original`: as in `_settle`."""
        game = game_of(state)
        finished = game.finished_deal(state)
        if not events:
            return state, events, finished
        now = self.clock()
        due = game.next_deadline(state)
        if due is None or due > now or game.ranking_request(state) is not None:
            return state, events, finished
        dealt = game.on_deadline(state, now, self.deck_source(), state is not original)
        if not dealt.events:
            return state, events, finished
        after, events = self._settle(dealt.state, events + dealt.events, original)
        return after, events, finished

    # ------------------------------------------------------------ what a commit writes

    def _commit_of(
        self,
        change: Change,
        record: TableRecord,
        state: TableState,
        events: list[Event],
        now: float,
        finished_deal: Finished,
    ) -> tuple[Commit, Outcome]:
        """Everything the change writes, and its answer; `finished_deal` is the record of
        the deal the change finished, if it did."""
        stored = history.stored_events(record, state, events, now)
        if not change.holding:
            state.pop("turn_held_from", None)
        state["version"] = record.version + 1
        if change.activity:
            state["active_at"] = now
            if "close_requested" not in state:  # a move ends idleness, not a closing
                state.pop("closing", None)
        closing = state.get("closing")
        if closing is not None:
            closing["cashed_out"] += _cash_outs(stored)
        outcome = change.respond(state, stored)
        outcome.headers["ETag"] = f'"{record.version + 1}"'
        # seats that left with the deal this change ended left at that deal, not the next
        departed_at = stored[0]["hand_number"] if stored else state["hand_number"]
        history.note_departures(state, departed_at)
        extra, ended = history.deal_history(record, state, stored, finished_deal)
        finished = None if ended is None else ended["hand_number"]
        deadline = self.schedule.next_deadline(state, now)
        commit = Commit(record, state, stored, extra=extra, deadline=deadline)
        if ended is not None and finished_deal is not None:
            self._deal_end_writes(commit, ended, finished_deal, now)
        self.retention.writes(commit, state, stored, finished, now)
        commit.listing = lobby.entry_of(state, closing=commit.close is not None)
        if change.token_sets is not None:
            commit.token_sets = change.token_sets(state, stored)
        commit.token_deletes = history.departed_tokens(record.state, state)
        ledger_writes(self.wallets, commit, change.accepts, state, stored, now)
        self.webhooks.writes(commit, record, state, stored, now)
        return commit, outcome

    def _deal_end_writes(
        self, commit: Commit, ended: HandRecord, deal: GutsDeal | PaiuteDeal, now: float
    ) -> None:
        """What a commit ending `deal` (its history `ended`) writes besides that history:
        the deal's end, which lists the table for the packer (`api.service.packing`), and
        the deal's copies for its players' recall. Nothing is read first; on a cluster,
        whose sets sit on other slots than the table, one round trip points the packer
        (and the recall's sweeper, if the deal has players to note it for) at the table
        first."""
        record = commit.record
        finished = deal["number"]
        recall = self.recall if commit.state.get("accounts") else None
        due = now + RELAY_SECONDS
        if recall is not None:
            recall.writes(commit, ended, deal, due)
        commit.ended = (finished, now)
        if self.store.cluster:
            pointers = [(PACKING_KEY, record.table_id, now + POINT_AHEAD)]
            if commit.copies is not None:
                pointers.append((OUTBOX_KEY, record.table_id, due))
            self.store.point(pointers)

    def _keep_scheduled(self, record: TableRecord, now: float) -> None:
        """After a deadline with nothing to do, schedule the table when it next has work."""
        deadline = self.schedule.next_deadline(record.state, now)
        try:
            self.store.reschedule(record, deadline)
        except Exception:  # the clock's sweep repairs a schedule it finds wrong
            log.warning(
                "could not reschedule table", extra={"table": record.table_id}, exc_info=True
            )


def _cash_outs(stored: list[Event]) -> list[CashedOut]:
    """Who left with how much, of a closing table's change."""
    return [
        {
            "seat": item["data"]["seat"],
            "name": item["data"]["name"],
            "amount": item["data"]["amount"],
        }
        for item in stored
        if item["type"] == "cashed_out"
    ]


def ledger_writes(
    wallets: WalletService,
    commit: Commit,
    accepts: list[Reservation],
    state: TableState,
    stored: list[Event],
    now: float,
) -> None:
    """The table's side of the chips a change moves: the reservations it accepts into
    its ledger; its cash-outs and a closed table's reserve into its ledger and its
    outbox (relayed to the wallets after the commit, `api.service.wallets`)."""
    record = commit.record
    table_id = record.table_id
    for reservation in accepts:
        commit.hsets.append(wallets.table_entry(reservation))
        commit.land_before = min(commit.land_before or reservation.expires, reservation.expires)
    leaving: list[Transfer] = []
    for item in stored:
        if item["type"] == "cashed_out" and item["data"]["amount"] > 0:
            seat = str(item["data"]["seat"])
            holder = record.state["seats"].get(seat) or state["seats"].get(seat)
            local = None if holder is None else holder["player_id"]
            account = account_of(state, local) or account_of(record.state, local)
            cause: Cause = {"table": table_id, "seat": int(seat), "hand": item["hand_number"]}
            amount = item["data"]["amount"]
            leaving.append(wallets.cash_out(table_id, item["id"], amount, account, now, cause))
        elif item["type"] == "reserve_to_house" and item["data"]["amount"] > 0:
            amount = item["data"]["amount"]
            leaving.append(wallets.reserve_to_house(table_id, item["id"], amount, now))
    if leaving:
        writes, before = wallets.outgoing(table_id, leaving)
        commit.hsets += writes
        commit.land_before = min(commit.land_before or before, before)
