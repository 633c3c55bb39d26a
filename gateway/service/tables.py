"""Table service: the pure game rules, applied atomically to tables kept in Redis.

A move is read -> computed -> committed: the game module computes the new state and
its events from the state read; if the deal reaches a showdown, the evaluator ranks
the hands and the module settles the deal in the same change; then one Lua script
writes everything if nobody changed the table meanwhile (otherwise the move is
recomputed, a bounded number of times). Nothing is written when a rule refuses the
move or the evaluator cannot be reached, so a refused move leaves the table as it was.

A move reads once (table, seat token and idempotency record in one pipeline) and
commits once; the commit also schedules the table's next deadline for the clock.

Bounded growth: the hand histories of the last `history_deals` deals are kept, and
the events from the first event of the oldest kept deal on; older ones are trimmed
when a deal ends, and asking for them answers 410 `history_trimmed`. A table without
a player's move for `idle_seconds` is closed by the clock: every seat is cashed out
(`cashed_out` events, then `table_closed`), a closing record is kept for
`closed_record_seconds` (the `closing` member of the 410), the table leaves the lobby
and its keys expire `CLOSE_GRACE_SECONDS` later; until then and after it, the table
answers 410 `table_closed`.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import math
import re
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from gateway import jsonio
from gateway.adapters.evaluator import EvaluatorClient
from gateway.adapters.store import (
    Close,
    Commit,
    MoveRead,
    TableRecord,
    TableStore,
    Trim,
    closed_key,
    deadline_field,
    hand_key,
    idempotency_key,
    token_digest,
)
from gateway.adapters.warm import WarmTables
from gateway.errors import (
    ApiError,
    EvaluatorUnavailable,
    from_rule_error,
    idempotency_in_progress,
    invalid_token,
    missing_token,
    problem,
    stale_version,
    wrong_seat,
)
from gateway.games import fairness, guts, paiute
from gateway.games.common import (
    FULL_DECK,
    Deck,
    Event,
    RuleError,
    Transition,
    copy_state,
    display_name,
)
from gateway.telemetry import WARM_MOVES

log = logging.getLogger("cardroom.tables")

GAMES: dict[str, ModuleType] = {"guts": guts, "paiute": paiute}
MOVES = {
    "guts": frozenset({"start", "declare", "rebuy"}),
    "paiute": frozenset({"start", "rebuy", "draw", "discard", "call"}),
}
MAX_ATTEMPTS = 16
# a table whose deadline is this close is not kept warm (adapters.warm): the clock moves next
WARM_DUE_MARGIN = 1.0
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
# watchers still receive a closed table's last events for this long; then its keys go
CLOSE_GRACE_SECONDS = 60
# hand histories deleted by one commit at most, so lowering HISTORY_DEALS stays cheap
MAX_HANDS_DROPPED = 1000

Move = Callable[[dict[str, Any]], Transition]


def _shown_cards(action: Mapping[str, Any]) -> tuple[list[str], str | None]:
    """A Paiute call's shown cards and discard (None: all six shown), in canonical form."""
    cards = [canonical_card(card, "cards") for card in action["cards"]]
    spare = action.get("discard")
    return cards, None if spare is None else canonical_card(spare, "discard")


def shuffled_deck() -> Deck:
    """A fresh deck, shuffled from the operating system's secure random source."""
    cards = list(FULL_DECK)
    secrets.SystemRandom().shuffle(cards)
    return Deck(tuple(cards), secrets.token_hex(16))


# what new_table_id makes (and a little more, for ids of other lengths)
_TABLE_ID = re.compile(r"[0-9a-f]{1,64}")


def new_table_id() -> str:
    """A short random table id, safe in a URL and a Redis hash tag."""
    return secrets.token_hex(8)


@dataclass(frozen=True)
class Viewer:
    """Who is looking: a seated player (with their player id) or a spectator."""

    seat: int | None = None
    player: int | None = None

    def may_see(self, item: Mapping[str, Any]) -> bool:
        """True if this viewer may see the stored event `item`."""
        audience = item.get("audience")
        return audience is None or (self.player is not None and self.player in audience)


SPECTATOR = Viewer()


@dataclass(frozen=True)
class Idempotency:
    """An Idempotency-Key and the fingerprint of the request it came with."""

    key: str
    fingerprint: str


@dataclass
class Outcome:
    """What a move answered: HTTP status and body, plus headers."""

    status: int
    body: dict[str, Any]
    headers: dict[str, str]


def fingerprint(method: str, path: str, body: bytes, token: str | None) -> str:
    """What makes two requests with one Idempotency-Key the same request."""
    digest = hashlib.sha256()
    for part in (method.encode(), path.encode(), body, (token or "").encode()):
        digest.update(hashlib.sha256(part).digest())
    return digest.hexdigest()


def _seal_token(token: str, idempotency: str) -> str:
    """The seat token, encrypted under the Idempotency-Key the client holds.

    A replayed seat grant must return the first token, but tokens are stored only as
    digests: the replay record keeps the token XOR-ed with a key stream derived from
    the Idempotency-Key, which is itself stored only as a digest.
    """
    raw = bytes.fromhex(token)
    stream = hashlib.sha256(b"cardroom seat token\0" + idempotency.encode()).digest()
    return bytes(a ^ b for a, b in zip(raw, stream, strict=True)).hex()


def _open_token(sealed: str, idempotency: str) -> str:
    return _seal_token(sealed, idempotency)


_RANKS = {"10": "T", **{rank: rank for rank in "23456789TJQKA"}}


def canonical_card(text: str, field: str) -> str:
    """A card as the rules write it ("Ah", "Td"), from any spelling ("ah", "10d")."""
    cleaned = text.strip()
    rank = _RANKS.get(cleaned[:-1].upper())
    suit = cleaned[-1:].lower()
    if rank is None or suit not in ("c", "d", "h", "s"):
        raise ApiError(
            422,
            "invalid_card",
            "Invalid card",
            f"{text!r} is not a card (rank 2-10, J, Q, K or A, then c, d, h or s).",
            field=field,
        )
    return rank + suit


# one element of a list of entity tags: optional whitespace, an optional tag (a comma is
# allowed inside its quotes), optional whitespace, then a comma or the end (RFC 9110, 5.6.1)
_ENTITY_TAG_ELEMENT = re.compile(r'[ \t]*(?:(W/)?"([\x21\x23-\x7e\x80-\xff]*)")?[ \t]*(?:,|\Z)')


def entity_tags(header: str) -> list[tuple[bool, str]] | None:
    """The (weak, opaque tag) of each entity tag of an If-Match or If-None-Match list
    (RFC 9110, 8.8.3), [] for "*", or None when the list is malformed."""
    if header.strip() == "*":
        return []
    tags = []
    position = 0
    while position < len(header):
        match = _ENTITY_TAG_ELEMENT.match(header, position)
        if match is None or match.end() == position:
            return None
        if match.group(2) is not None:  # empty list elements are allowed
            tags.append((match.group(1) is not None, match.group(2)))
        position = match.end()
    return tags or None


def _etag_matches(if_match: str, version: int) -> bool:
    """If-Match against a table's version (strong comparison, RFC 9110, 13.1.1): "*" or
    a listed strong ETag; a weak one never matches. A malformed list is 400."""
    tags = entity_tags(if_match)
    if tags is None:
        raise problem(
            "invalid_parameter",
            'If-Match must be "*" or a list of quoted entity tags, such as "4".',
            field="If-Match",
        )
    return not tags or any(not weak and tag == str(version) for weak, tag in tags)


def public_event(item: Mapping[str, Any]) -> dict[str, Any]:
    """An event as clients see it (without its audience list)."""
    shown = {key: item[key] for key in ("id", "type", "data", "at", "hand_number")}
    if item.get("audience") is not None:
        shown["private"] = True
    return shown


class TableService:
    """Create tables, seat players, apply moves and deadlines, read events and histories."""

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
        self.store = store
        self.evaluator = evaluator
        self.clock = clock
        self.deck_source = deck_source
        self.idempotency_ttl = idempotency_ttl
        self.history_deals = history_deals
        self.idle_seconds = idle_seconds
        self.closed_record_seconds = closed_record_seconds
        self.warm = WarmTables(warm_tables)

    # ------------------------------------------------------------------ reading

    def record(self, table_id: str) -> TableRecord:
        """The table, or 404 (410 once it was closed)."""
        return self._open_table(table_id, self.store.load(table_id))

    def _open_table(self, table_id: str, record: TableRecord | None) -> TableRecord:
        """`record` if the table is open; 410 table_closed or 404 table_not_found if not."""
        if record is not None and not record.closed:
            return record
        closing = self.store.get_json(closed_key(table_id))
        if record is not None or closing is not None:
            raise problem(
                "table_closed",
                f"Table {table_id!r} was closed after a time without moves; every seat was"
                " cashed out (see `closing`).",
                extra={"closing": closing},
            )
        raise problem("table_not_found", f"There is no table {table_id!r}.", field="table_id")

    def look(self, table_id: str, token: str | None) -> tuple[Viewer, TableRecord]:
        """The table and who holds this seat token, in one round trip; 404/410/401."""
        read = self.store.read(table_id, token, None)
        record = self._open_table(table_id, read.record)
        return self._viewer_of(record, token, read.player), record

    def viewer(self, table_id: str, token: str | None, record: TableRecord) -> Viewer:
        """Who holds this seat token (a spectator without one); 401 for a bad token."""
        if token is None:
            return SPECTATOR
        return self._viewer_of(record, token, self.store.player_for_token(table_id, token))

    @staticmethod
    def _viewer_of(
        record: TableRecord, token: str | None, found: Mapping[str, Any] | None
    ) -> Viewer:
        if token is None:
            return SPECTATOR
        if found is None:
            raise invalid_token()
        seat = record.state["seats"].get(str(found["seat"]))
        if seat is None or not hmac.compare_digest(str(seat["player_id"]), str(found["player"])):
            raise invalid_token()
        return Viewer(int(found["seat"]), int(found["player"]))

    def present(self, record: TableRecord | dict[str, Any], viewer: Viewer) -> dict[str, Any]:
        """The table as `viewer` may see it."""
        state = record.state if isinstance(record, TableRecord) else record
        module = GAMES[state["game"]]
        shown: dict[str, Any] = module.view(state, viewer.seat)
        shown["id"] = state["table_id"]
        shown["name"] = state.get("name")
        return shown

    def lobby(self, limit: int, cursor: str | None) -> dict[str, Any]:
        """A page of tables, newest first."""
        after: tuple[float, str | None] | None = None
        if cursor is not None:
            try:
                # "<created_at>:<table id>": tables created at the same instant are
                # ordered by id, so a page boundary between them skips none
                score, colon, last = cursor.partition(":")
                after = (float(score), last or None)
                if not math.isfinite(after[0]) or (colon and not _TABLE_ID.fullmatch(last)):
                    raise ValueError(cursor)
            except ValueError:
                raise ApiError(
                    400,
                    "invalid_cursor",
                    "Invalid cursor",
                    "The cursor is not one this service gave out.",
                    field="cursor",
                ) from None
        rows = self.store.lobby_page(after, limit)
        records = self.store.load_many([table_id for table_id, _ in rows])
        tables = []
        for (table_id, created), record in zip(rows, records, strict=True):
            if record is None or record.closed:
                continue
            state = record.state
            maximum = state["options"]["max_players"]
            tables.append(
                {
                    "id": table_id,
                    "name": state.get("name"),
                    "game": state["game"],
                    "options": state["options"],
                    "seats_taken": len(state["seats"]),
                    "seats_free": maximum - len(state["seats"]),
                    "max_players": maximum,
                    "phase": state["phase"],
                    "created_at": created,
                }
            )
        next_cursor = f"{rows[-1][1]!r}:{rows[-1][0]}" if len(rows) == limit else None
        return {"tables": tables, "next_cursor": next_cursor}

    def events(
        self, table_id: str, viewer: Viewer, after: int, wait: float
    ) -> tuple[list[dict[str, Any]], int]:
        """Events after the cursor that `viewer` may see, waiting up to `wait` seconds.

        The cursor returned moves past events the viewer may not see, so a long poll
        never spins on them. Event ids have no gaps, so a first event past the cursor's
        successor means events after the cursor were trimmed: 410 history_trimmed.
        """
        deadline = time.monotonic() + wait
        cursor = after
        while True:
            remaining = deadline - time.monotonic()
            block = int(remaining * 1000) if remaining > 0.001 else None
            items = self.store.events_after(table_id, cursor, block)
            if items:
                if int(items[0]["id"]) > cursor + 1:
                    raise self._trimmed_events(table_id, cursor, int(items[0]["id"]))
                cursor = int(items[-1]["id"])
            visible = [public_event(item) for item in items if viewer.may_see(item)]
            if visible or block is None or time.monotonic() >= deadline:
                return visible, cursor

    def check_cursor(self, table_id: str, after: int, field: str = "after") -> None:
        """410 history_trimmed if events after `after` (given as `field`) are no longer kept."""
        first = self.store.first_event_after(table_id, after)
        if first is not None and first > after + 1:
            raise self._trimmed_events(table_id, after, first, field)

    @staticmethod
    def _trimmed_events(table_id: str, after: int, first: int, field: str = "after") -> ApiError:
        return problem(
            "history_trimmed",
            f"Events after {after} of table {table_id!r} are no longer kept; the oldest"
            f" kept event is {first}: resume with after={first - 1}, or read the table.",
            field=field,
            extra={"first_event": first, "resume_after": first - 1},
        )

    def hand_history(self, table_id: str, hand_number: int, viewer: Viewer) -> dict[str, Any]:
        """One finished deal: its events (as the viewer may see them) and the proof."""
        history = self.store.hand(table_id, hand_number)
        if history is None:
            record = self.store.load(table_id)
            if record is not None and 1 <= hand_number < record.first_hand:
                raise problem(
                    "history_trimmed",
                    f"The history of deal {hand_number} of table {table_id!r} is no longer"
                    f" kept; the oldest kept deal is {record.first_hand}.",
                    field="hand_number",
                    extra={"first_hand": record.first_hand},
                )
            raise problem(
                "hand_not_found",
                f"Deal {hand_number} of table {table_id!r} has not finished (or never happened).",
                field="hand_number",
            )
        events = self.store.events_between(
            table_id, history.pop("first_event"), history.pop("last_event")
        )
        visible = [public_event(item) for item in events if viewer.may_see(item)]
        history["events"] = visible
        sealed = history.pop("sealed", None)
        if sealed is None:
            # a deal finished before proofs were opened card by card: its proof stays as
            # it was published then (the whole deck), the one its commitment can match
            return history
        game = sealed["game"]
        shown = [{"type": "showdown", "data": history["showdown"] or {}}]
        seen = fairness.cards_off_the_deck([*visible, *shown], game)
        if history.get("wild_card"):
            seen.add(history["wild_card"])
        history["fairness"] = fairness.proof(
            sealed["deck"],
            sealed["salt"],
            seen,
            reshuffles=sealed.get("reshuffles", []) if game == "paiute" else None,
            draws_seen=fairness.stock_draws_seen(visible),
        )
        return history

    # ------------------------------------------------------------------ changing

    def create_table(self, body: Mapping[str, Any], idempotency: Idempotency | None) -> Outcome:
        """Create a table from the validated request body."""
        options = dict(body)
        game = options.pop("game")
        name = options.pop("name", None)
        module = GAMES.get(game)
        if module is None:
            raise ApiError(
                422,
                "unsupported_game",
                "Unsupported game",
                f"This gateway does not host {game!r} tables yet.",
                field="game",
            )
        claim_key = None
        if idempotency is not None:
            claim_key = idempotency_key("create", idempotency.key)
            replay = self._replay(claim_key, idempotency)
            if replay is not None:
                return replay
            if not self.store.claim(
                claim_key,
                {"pending": True, "fingerprint": idempotency.fingerprint},
                IDEMPOTENCY_PENDING_SECONDS,
            ):
                return self._replay(claim_key, idempotency) or self._in_progress()
        try:
            now = self.clock()
            table_id = new_table_id()
            try:
                state = module.new_table(options, table_id, now)
            except RuleError as error:
                raise from_rule_error(error.code, error.detail, error.field) from None
            if name is not None:
                name = display_name(name, MAX_TABLE_NAME)
                if name is None:
                    raise problem(
                        "invalid_field",
                        f"A table's name is 1 to {MAX_TABLE_NAME} characters, not counting"
                        " spaces at either end, with no control or invisible formatting"
                        " character.",
                        field="name",
                    )
            state["name"] = name or f"{game} table {table_id[:6]}"
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
                self.present(state, SPECTATOR),
                {"Location": f"/v1/tables/{table_id}", "ETag": '"1"'},
            )
        except ApiError as error:
            if claim_key is not None:
                if error.status >= 500:
                    self.store.delete([claim_key])
                else:
                    self._remember(claim_key, idempotency, self._error_outcome(error))
            raise
        except Exception:
            if claim_key is not None:  # a retry may try again at once
                self.store.delete([claim_key])
            raise
        if claim_key is not None:
            self._remember(claim_key, idempotency, outcome)
        return outcome

    def take_seat(
        self, table_id: str, name: str, buy_in: int, idempotency: Idempotency | None
    ) -> Outcome:
        """Seat a new player; the reply holds the seat token, shown only this once."""
        token = secrets.token_bytes(32).hex()

        def move(state: dict[str, Any]) -> Transition:
            module = GAMES[state["game"]]
            result: Transition = module.sit(state, name, buy_in, self.clock())
            return result

        def respond(state: dict[str, Any], events: list[dict[str, Any]]) -> Outcome:
            seat = next(e["data"]["seat"] for e in events if e["type"] == "seated")
            viewer = Viewer(seat, state["seats"][str(seat)]["player_id"])
            return Outcome(
                201,
                {
                    "seat": seat,
                    "token": token,
                    "waiting": state["seats"][str(seat)]["status"] == "waiting",
                    "table": self.present(state, viewer),
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

        return self._change(
            table_id, move, respond, idempotency=idempotency, token_sets=tokens, seal=token
        )

    def leave(
        self,
        table_id: str,
        seat: int,
        token: str | None,
        if_match: str | None,
        idempotency: Idempotency | None,
    ) -> Outcome:
        """A seat asks to leave: now, or when the deal it is in is settled."""
        viewer = SPECTATOR

        def authorize(holder: Viewer) -> None:
            nonlocal viewer
            viewer = holder
            if holder.seat is None:
                raise missing_token()
            if holder.seat != seat:
                raise wrong_seat(seat)

        def move(state: dict[str, Any]) -> Transition:
            result: Transition = GAMES[state["game"]].leave(state, seat, self.clock())
            return result

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
                state["seats"][str(seat)]["player_id"] != viewer.player
            )
            return Outcome(
                200, {"seat": seat, "left": gone, "leaving": not gone, "cashed_out": cashed}, {}
            )

        return self._change(
            table_id,
            move,
            respond,
            if_match=if_match,
            idempotency=idempotency,
            token=token,
            authorize=authorize,
        )

    def act(
        self,
        table_id: str,
        token: str | None,
        action: Mapping[str, Any],
        if_match: str | None,
        idempotency: Idempotency | None,
        minimal: bool = False,
    ) -> Outcome:
        """Apply one seat's move (start, declare, rebuy, draw, discard, call).

        With `minimal` (the caller sent `Prefer: return=minimal`) the answer is a 204
        whose body is never built: the caller reads the move's events from the table's
        log. With an Idempotency-Key that 204 is what replays of the key get.
        """
        kind = action["action"]
        viewer = SPECTATOR

        def authorize(holder: Viewer) -> None:
            nonlocal viewer
            viewer = holder
            if holder.seat is None:
                raise missing_token()

        def move(state: dict[str, Any]) -> Transition:
            seat = viewer.seat
            assert seat is not None  # authorize() refused a spectator already
            module = GAMES[state["game"]]
            now = self.clock()
            if kind not in MOVES[state["game"]]:
                raise ApiError(
                    422,
                    "unsupported_action",
                    "Unsupported action",
                    f"A {state['game']} table has no {kind!r} move.",
                    field="action",
                )
            result: Transition
            if kind == "start":
                result = module.start(state, seat, now, self.deck_source())
            elif kind == "declare":
                result = module.declare(state, seat, action["choice"], now)
            elif kind == "rebuy":
                result = module.rebuy(state, seat, action["amount"], now)
            elif kind == "draw":
                result = module.draw(state, seat, action["source"], now)
            elif kind == "discard":
                result = module.discard(state, seat, canonical_card(action["card"], "card"), now)
            else:
                cards, spare = _shown_cards(action)
                # the rules refuse a malformed call before the evaluator is asked to rank it
                module.verify_call(state, seat, cards, spare, None, now)
                ranked = self.evaluator.rank("paiute", cards, module.wild_rank(state))
                result = module.call(state, seat, cards, spare, ranked, now)
            return result

        def respond(state: dict[str, Any], events: list[dict[str, Any]]) -> Outcome:
            if minimal:
                return Outcome(204, {}, {"Preference-Applied": "return=minimal"})
            return Outcome(
                200,
                {
                    "table": self.present(state, viewer),
                    "events": [public_event(e) for e in events if viewer.may_see(e)],
                },
                {},
            )

        def held_version(record: TableRecord) -> int | None:
            # the version before this seat's turn was held open (`_hold_turn`): the hold
            # moved only the deadline, so an If-Match from before it still matches
            held = record.state.get("turn_held_from")
            if held is None or held["seat"] != viewer.seat:
                return None
            return int(held["version"])

        try:
            return self._change(
                table_id,
                move,
                respond,
                if_match=if_match,
                idempotency=idempotency,
                token=token,
                authorize=authorize,
                also_matches=held_version,
            )
        except EvaluatorUnavailable as error:
            if kind != "call":
                raise
            held = self._hold_turn(table_id, token, action)
            if held is None:
                raise
            raise type(error)(
                f"{error.detail} The call could not be ranked; the turn is held open until"
                f" {held:.3f} (Unix time): call again then or sooner."
            ) from None

    def _hold_turn(
        self, table_id: str, token: str | None, action: Mapping[str, Any]
    ) -> float | None:
        """Keep a Paiute turn open while its call cannot be ranked (`paiute.hold_turn`).

        The turn's deadline, or None when the turn could not be held (the table moved on).
        """
        seat: int | None = None

        def authorize(holder: Viewer) -> None:
            nonlocal seat
            seat = holder.seat
            if seat is None:
                raise missing_token()

        def move(state: dict[str, Any]) -> Transition:
            assert seat is not None  # authorize() refused a spectator already
            cards, spare = _shown_cards(action)
            now = self.clock()
            held, events = paiute.hold_turn(state, seat, cards, spare, now, CALL_HOLD_SECONDS)
            if events:
                held.setdefault("turn_held_from", {"seat": seat, "version": state["version"]})
            return held, events

        def respond(state: dict[str, Any], events: list[dict[str, Any]]) -> Outcome:
            return Outcome(200, {"deadline": state["deadline"]}, {})

        try:
            outcome = self._change(
                table_id,
                move,
                respond,
                token=token,
                authorize=authorize,
                skip_empty=True,
                holding=True,
            )
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
            if self._idle(state, now):
                # cash out before the game goes on: no new deal starts for an idle table
                state, events = self._close_idle(state, now)
                if state.get("closed_at") is not None:
                    return state, events
            state, more = GAMES[state["game"]].on_deadline(state, now, self.deck_source())
            return state, events + more

        def respond(state: dict[str, Any], events: list[dict[str, Any]]) -> Outcome:
            return Outcome(200, {"events": len(events)}, {})

        outcome = self._change(table_id, move, respond, skip_empty=True, activity=False)
        return bool(outcome.body.get("events"))

    def next_deadline(self, state: Mapping[str, Any], now: float | None = None) -> float | None:
        """When the clock next has work on this table: the game's deadline, a showdown
        left unsettled (the evaluator did not answer: tried again in a second), or
        idleness."""
        module = GAMES[state["game"]]
        game: float | None = module.next_deadline(state)
        if game is None and module.ranking_request(state) is not None:
            game = (self.clock() if now is None else now) + SHOWDOWN_RETRY_SECONDS
        if self.idle_seconds <= 0 or state.get("closed_at") is not None:
            return game
        idle = self._idle_deadline(state)
        if now is not None and idle <= now:
            # idle, but not closable yet (a deal is still being played out): look again
            # when the game moves on, or a little later
            idle = now + self._idle_grain()
        return idle if game is None else min(game, idle)

    def _idle_grain(self) -> float:
        """Idle deadlines are rounded up to this, so most moves leave the schedule alone."""
        return min(60.0, self.idle_seconds / 10)

    def _idle_deadline(self, state: Mapping[str, Any]) -> float:
        active = float(state.get("active_at") or state.get("created_at") or 0.0)
        grain = self._idle_grain()
        return float(math.ceil((active + self.idle_seconds) / grain) * grain)

    def _idle(self, state: Mapping[str, Any], now: float) -> bool:
        if self.idle_seconds <= 0 or state.get("closed_at") is not None:
            return False
        active = float(state.get("active_at") or state.get("created_at") or 0.0)
        return now >= active + self.idle_seconds

    def _close_idle(self, state: dict[str, Any], now: float) -> Transition:
        """Cash out every seat that is not in a deal; close the table once nobody is left."""
        module = GAMES[state["game"]]
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
                state, more = module.leave(state, int(key), now)
            except RuleError:
                continue
            events += more
        if not state["seats"]:
            state["closed_at"] = now
            events.append(
                {
                    "type": "table_closed",
                    "data": {"reason": "idle", "idle_seconds": self.idle_seconds},
                    "visible_to": None,
                }
            )
        return state, events

    # ------------------------------------------------------------------ internals

    def _settle(
        self, state: dict[str, Any], events: list[Event]
    ) -> tuple[dict[str, Any], list[Event]]:
        """Rank the hands a showdown needs and settle it, in the same change.

        When the evaluator cannot answer, a change that did something (the move that
        led to the showdown) is kept with the showdown unsettled: the table waits in
        its showdown phase and the clock settles it once the evaluator answers
        (`next_deadline`). With nothing else to keep, the evaluator's error is raised.
        """
        module = GAMES[state["game"]]
        needed = module.ranking_request(state)
        if needed is None:
            return state, events
        try:
            if state["game"] == "guts":
                ranks = self.evaluator.showdown(f"guts{state['options']['cards']}", needed)
            else:
                ranks = self.evaluator.showdown(state["game"], needed, module.wild_rank(state))
        except EvaluatorUnavailable as error:
            if not events:
                raise
            log.warning(
                "showdown left to the clock",
                extra={"table": state.get("table_id"), "detail": error.detail},
            )
            return state, events
        settled, more = module.settle(state, ranks, self.clock())
        return settled, events + more

    def _stored_events(
        self, record: TableRecord, state: dict[str, Any], events: list[Event], now: float
    ) -> list[dict[str, Any]]:
        """Number the events and turn seat audiences into player audiences."""
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
                    "hand_number": state.get("hand_number", 0),
                    "audience": audience,
                }
            )
        return stored

    def _history(
        self, record: TableRecord, state: dict[str, Any], stored: list[dict[str, Any]]
    ) -> tuple[dict[str, tuple[str, int]], int | None]:
        """The hand history of a deal that this change finished, if any, and its number."""
        extra: dict[str, tuple[str, int]] = {}
        for item in stored:
            if item["type"] == "deal_started":
                state["deal_first_event"] = item["id"]
        deal = GAMES[state["game"]].finished_deal(state)
        if deal is None or not any(item["type"] == "deal_ended" for item in stored):
            return extra, None
        last = next(item["id"] for item in stored if item["type"] == "deal_ended")
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
            "first_event": state.get("deal_first_event", 1),
            "last_event": last,
        }
        extra[hand_key(record.table_id, deal["number"])] = (jsonio.dumps(history), 0)
        return extra, int(deal["number"])

    def _trim(self, record: TableRecord, finished: int) -> Trim | None:
        """Keep the last `history_deals` deals: which hands go now (a bounded number)."""
        first_kept = min(finished - self.history_deals + 1, record.first_hand + MAX_HANDS_DROPPED)
        if first_kept <= record.first_hand:
            return None
        return Trim(first_kept, list(range(record.first_hand, first_kept)))

    @staticmethod
    def _close(record: TableRecord, state: dict[str, Any], now: float) -> Close:
        """Closing writes: every kept hand history goes now, the other keys expire later."""
        return Close(
            CLOSE_GRACE_SECONDS, now, list(range(record.first_hand, state["hand_number"] + 1))
        )

    def _closing_record(
        self, state: dict[str, Any], stored: list[dict[str, Any]]
    ) -> dict[str, Any]:
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

    def _keep_scheduled(self, record: TableRecord, now: float) -> None:
        """After a deadline with nothing to do, schedule the table when it next has work."""
        deadline = self.next_deadline(record.state, now)
        try:
            self.store.reschedule(record, deadline)
        except Exception:  # the clock's sweep repairs a schedule it finds wrong
            log.warning(
                "could not reschedule table", extra={"table": record.table_id}, exc_info=True
            )

    def _replay(self, key: str, idempotency: Idempotency) -> Outcome | None:
        return self._replay_record(self.store.get_json(key), idempotency)

    def _replay_record(
        self, stored: dict[str, Any] | None, idempotency: Idempotency
    ) -> Outcome | None:
        if stored is None:
            return None
        if stored.get("fingerprint") != idempotency.fingerprint:
            raise ApiError(
                409,
                "idempotency_key_reused",
                "Idempotency-Key reused",
                "This Idempotency-Key was used with a different request.",
                field="Idempotency-Key",
            )
        if stored.get("pending"):
            return self._in_progress()
        body = stored["body"]
        if "sealed_token" in stored:
            body["token"] = _open_token(stored["sealed_token"], idempotency.key)
        if stored["status"] >= 400:
            raise ApiError(
                stored["status"],
                body["code"],
                body["title"],
                body["detail"],
                field=body.get("field"),
                headers={"Idempotent-Replayed": "true"},
            )
        return Outcome(stored["status"], body, {**stored["headers"], "Idempotent-Replayed": "true"})

    def _in_progress(self) -> Outcome:
        raise idempotency_in_progress()

    @staticmethod
    def _error_outcome(error: ApiError) -> Outcome:
        return Outcome(
            error.status,
            {
                "code": error.code,
                "title": error.title,
                "detail": error.detail,
                "field": error.field,
            },
            {},
        )

    def _record_value(self, idempotency: Idempotency, outcome: Outcome, seal: str | None) -> str:
        body = dict(outcome.body)
        value: dict[str, Any] = {
            "fingerprint": idempotency.fingerprint,
            "status": outcome.status,
            "headers": outcome.headers,
        }
        if seal is not None and "token" in body:
            value["sealed_token"] = _seal_token(body.pop("token"), idempotency.key)
        value["body"] = body
        return jsonio.dumps(value)

    def _remember(self, key: str, idempotency: Idempotency | None, outcome: Outcome) -> None:
        if idempotency is not None:
            self.store.client.set(
                key, self._record_value(idempotency, outcome, None), ex=self.idempotency_ttl
            )

    def _change(
        self,
        table_id: str,
        move: Move,
        respond: Callable[[dict[str, Any], list[dict[str, Any]]], Outcome],
        *,
        if_match: str | None = None,
        idempotency: Idempotency | None = None,
        token: str | None = None,
        authorize: Callable[[Viewer], None] | None = None,
        token_sets: Callable[[dict[str, Any], list[dict[str, Any]]], dict[str, str]] | None = None,
        seal: str | None = None,
        skip_empty: bool = False,
        activity: bool = True,
        also_matches: Callable[[TableRecord], int | None] | None = None,
        holding: bool = False,
    ) -> Outcome:
        """Read, compute, commit; recompute on a lost race, at most MAX_ATTEMPTS times.

        Each attempt is one read (table, the seat token's entry, the idempotency
        record: one pipeline) and one commit. With `authorize`, the token's holder is
        found in that same read and passed to it before anything else is checked. The
        first attempt skips the read when this process made the table's last change
        (`gateway.adapters.warm`); it never answers with an error, which only a read may justify,
        except that the evaluator is unavailable (asking it again would only wait longer).
        `If-Match` matches the table's version, or the one `also_matches` gives. Every
        change but a turn's hold (`holding`) ends that hold's `turn_held_from`.
        """
        idem_key = idempotency_key(table_id, idempotency.key) if idempotency else None
        digest = None if token is None else token_digest(token)
        for attempt in range(MAX_ATTEMPTS):
            warm = self.warm.get(table_id, digest) if attempt == 0 else None
            if warm is None:
                read: MoveRead = self.store.read(
                    table_id, token, idem_key, all_players=self.warm.capacity > 0
                )
            else:
                # this process made the table's last change: compute from it and let
                # the commit's compare-and-set tell whether it still is the last
                read = MoveRead(*warm)
            try:
                if (
                    idempotency is not None
                    and read.replay is not None
                    and read.replay.get("fingerprint") == idempotency.fingerprint
                ):
                    # a repeat of a request already answered gets that answer, even when
                    # the request took the caller's seat (and token) away or closed the table
                    replay = self._replay_record(read.replay, idempotency)
                    if replay is not None:
                        return replay
                record = self._open_table(table_id, read.record)
                if authorize is not None:
                    authorize(self._viewer_of(record, token, read.player))
                if idempotency is not None:
                    replay = self._replay_record(read.replay, idempotency)
                    if replay is not None:
                        return replay
                if if_match is not None and not _etag_matches(if_match, record.version):
                    before = None if also_matches is None else also_matches(record)
                    if before is None or not _etag_matches(if_match, before):
                        raise stale_version(f'"{record.version}"')
                try:
                    state, events = move(record.state)
                    state, events = self._settle(state, events)
                except RuleError as error:
                    failure = from_rule_error(error.code, error.detail, error.field)
                    if idem_key is not None and warm is None:
                        self._remember(idem_key, idempotency, self._error_outcome(failure))
                    raise failure from None
            except EvaluatorUnavailable:
                raise
            except ApiError:
                if warm is None:
                    raise
                # a refusal is only given from a fresh read: the table may have moved on
                self.warm.forget(table_id)
                _WARM_REFUSED.inc()
                continue
            now = self.clock()
            if skip_empty and not events:
                if warm is not None:
                    # nothing to do by this process's view of the table: make sure
                    self.warm.forget(table_id)
                    continue
                self._keep_scheduled(record, now)
                return respond(state, [])
            stored = self._stored_events(record, state, events, now)
            if not holding:
                state.pop("turn_held_from", None)
            state["version"] = record.version + 1
            if activity:
                state["active_at"] = now
                state.pop("closing", None)
            if state.get("closing") is not None:
                state["closing"]["cashed_out"] += [
                    {key: item["data"][key] for key in ("seat", "name", "amount")}
                    for item in stored
                    if item["type"] == "cashed_out"
                ]
            outcome = respond(state, stored)
            outcome.headers["ETag"] = f'"{record.version + 1}"'
            extra, finished = self._history(record, state, stored)
            change = Commit(
                record, state, stored, extra=extra, deadline=self.next_deadline(state, now)
            )
            if finished is not None:
                change.trim = self._trim(record, finished)
            if state.get("closed_at") is not None:
                change.deadline = None
                change.close = self._close(record, state, now)
                change.extra[closed_key(table_id)] = (
                    jsonio.dumps(self._closing_record(state, stored)),
                    self.closed_record_seconds,
                )
            if token_sets is not None:
                change.token_sets = token_sets(state, stored)
            change.token_deletes = self._departed_tokens(record.state, state)
            if idem_key is not None and idempotency is not None:
                change.extra[idem_key] = (
                    self._record_value(idempotency, outcome, seal),
                    self.idempotency_ttl,
                )
                if warm is not None:
                    change.absent = idem_key  # its replay record was not read
            if self.store.commit(change):
                if warm is not None:
                    _WARM_HIT.inc()
                self._remember_commit(change, read, now)
                return outcome
            self.warm.forget(table_id)
            if warm is not None:
                _WARM_STALE.inc()
        raise ApiError(
            409,
            "conflict",
            "Too much contention",
            "The table changed too often to apply this move; try again.",
            headers={"Retry-After": "1"},
        )

    def _remember_commit(self, change: Commit, read: MoveRead, now: float) -> None:
        """Keep the committed table in `warm`, unless Redis now holds what Python does not.

        A trim moves the table's first kept event to a value only the script reads; a
        closed table takes no more moves. A table whose deadline is (nearly) due is
        changed next by a clock, likely another process's: a guess would be wasted work.
        """
        record = change.record
        due_soon = change.deadline is not None and change.deadline - now < WARM_DUE_MARGIN
        if change.trim is not None or change.close is not None or due_soon:
            self.warm.forget(record.table_id)
            return
        committed = TableRecord(
            record.table_id,
            change.state,
            record.version + 1,
            change.events[-1]["id"] if change.events else record.seq,
            record.first_event,
            record.first_hand,
            deadline_field(change.deadline),
            False,
            change.stamp,
        )
        seen = dict(read.players)
        for name, value in change.token_sets.items():
            if not name.startswith("player:"):
                seen[name] = jsonio.loads(value)
        departed = [name.split(":", 1)[1] for name in change.token_deletes]
        self.warm.put(committed, seen, departed, change.state_bytes)

    @staticmethod
    def _departed_tokens(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
        """Token entries of players who are no longer seated: their tokens stop working."""
        present = {seat["player_id"] for seat in after["seats"].values()}
        return [
            f"player:{seat['player_id']}"
            for seat in before["seats"].values()
            if seat["player_id"] not in present
        ]
