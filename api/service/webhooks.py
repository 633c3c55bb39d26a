"""Turn notifications for the operator's push service: signed webhooks, at least once.

A change of a table that gives a player their turn, ends a deal they were dealt in, or
tells them a reality check, writes its notices into the table's outbox in the same
commit (`writes`, called by the change loop, `api.service.changes`): a `turn` notice due
at once, a `turn_warning` due `warning_seconds` before the turn's deadline, a
`deal_ended` and a `reality_check` notice due at once. The
deliverer (`deliver_due`, a thread of the clock) POSTs each due notice to the
operator's URL, signed as Standard Webhooks sign (`signature`), and takes it out of
the outbox on a 2xx answer; otherwise it tries again after an exponential backoff with
jitter, up to `max_attempts`, then keeps it among the dead letters. A warning whose turn
was taken by then is dropped unsent. Each notice has an id derived from its table,
event, seat and type: a receiver deduplicates by it. No HTTP is made by a move; a move
with notices makes one more Redis write, its pointer, before its commit. The deliverer
(`api.runtime.webhooks`) asks which tables are `due` and has up to `concurrency` of them
`deliver`ed at once, each table's notices one after the other, in order. docs/webhooks.md
tells the receiver's side.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import logging
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from api import jsonio
from api.adapters.store import Commit, TableRecord, TableStore
from api.adapters.webhooks import DeadLetter, Notice, OutboxEntry, Sender, WebhookStore, outbox_key
from api.games.events import Event
from api.games.state import TableState
from api.service.dispatch import game_of
from api.telemetry import WEBHOOK_DELIVERIES

log = logging.getLogger("cardroom.webhooks")

TURN, TURN_WARNING, DEAL_ENDED = "turn", "turn_warning", "deal_ended"
REALITY_CHECK = "reality_check"
# the phase whose start is every dealt seat's turn at once (Guts, simultaneous declaring)
DECLARING = "declaring"
_COUNTS = {
    outcome: WEBHOOK_DELIVERIES.labels(outcome)
    for outcome in ("delivered", "failed", "dead", "dropped")
}


@dataclass(frozen=True)
class WebhookPolicy:
    """Where notices go and how (docs/configuration.md#webhooks); no URL: none are written."""

    url: str | None = None
    # signing secrets: every one signs, the first first (rotation: add the new one first)
    secrets: tuple[str, ...] = ()
    # the turn_warning goes this long before a turn's deadline (0: no warnings)
    warning_seconds: float = 10.0
    timeout: float = 5.0
    max_attempts: int = 12
    retry_base: float = 1.0
    retry_max: float = 300.0
    # a commit lands within this long of its pointer, which stays that long
    grace: float = 10.0
    # notices sent per look at one table's outbox
    batch: int = 20
    # tables whose notices are on their way at once (each table's one after the other)
    concurrency: int = 32

    @property
    def enabled(self) -> bool:
        """Whether notices are written at all."""
        return self.url is not None

    def backoff(self, attempts: int, draw: float) -> float:
        """The wait after the `attempts`-th failed attempt: doubling from `retry_base` up
        to `retry_max`, then between half and all of it (`draw` in [0, 1))."""
        ceiling = min(self.retry_max, self.retry_base * 2.0 ** min(attempts - 1, 40))
        return ceiling * (0.5 + draw / 2)


def secret_key(secret: str) -> bytes:
    """The HMAC key of a secret: a `whsec_` secret is base64 after its prefix, any other
    is its UTF-8 bytes."""
    if secret.startswith("whsec_"):
        return base64.b64decode(secret[len("whsec_") :])
    return secret.encode()


def signature(secrets: Sequence[str], delivery_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` header: `v1,<base64 HMAC-SHA256>` per secret, space-separated,
    over `<id>.<timestamp>.<body>`."""
    signed = f"{delivery_id}.{timestamp}.".encode() + body
    return " ".join(
        "v1," + base64.b64encode(hmac.new(secret_key(s), signed, hashlib.sha256).digest()).decode()
        for s in secrets
    )


def delivery_id(table_id: str, event_id: int, seat: int, kind: str) -> str:
    """A notice's id: the same for the same table, event, seat and type, whoever writes it."""
    digest = hashlib.sha256(f"{table_id}:{event_id}:{seat}:{kind}".encode()).hexdigest()
    return f"msg_{digest[:32]}"


def _player_of(seat: int, states: Sequence[TableState]) -> str | None:
    """The player (account) who holds or held `seat` in one of `states`, or None."""
    for state in states:
        holder = state["seats"].get(str(seat))
        if holder is None:
            continue
        for account, entry in (state.get("accounts") or {}).items():
            if holder["player_id"] in entry["players"]:
                return str(account)
    return None


# a notice a change makes: its type, the event it is for, its seat, the turn's deadline
# (None: no turn) and when it is due
_Wanted = tuple[str, Event, int, float | None, float]


def notices(
    table_id: str,
    before: TableState,
    after: TableState,
    stored: Sequence[Event],
    now: float,
    warning_seconds: float,
) -> list[OutboxEntry]:
    """The notices a change's stored events make: outbox entries {body, due, attempts}.

    A `turn` event is its seat's turn; a phase of simultaneous declaring, with no `turn`
    event after it, is the turn of every seat dealt in (the last `dealt` event's); a
    `deal_ended` is a notice to every seat that deal was dealt to; a `reality_check`
    (`api.service.sessions`) is a notice to its seat, with the time played and the net
    result it tells. A seat held by no player gets none. The bodies hold no card.
    """
    states = (after, before)
    wanted: list[_Wanted] = []
    types = [item["type"] for item in stored]
    dealt: list[int] = []
    for index, item in enumerate(stored):
        if item["type"] == "dealt":
            dealt = [int(seat) for seat in item["data"]["players"]]
        elif item["type"] == "turn":
            data = item["data"]
            wanted += _turn(item, int(data["seat"]), data["deadline"], now, warning_seconds)
        elif (
            item["type"] == "phase"
            and item["data"]["phase"] == DECLARING
            and "turn" not in types[index + 1 :]
        ):
            for seat in dealt:
                wanted += _turn(item, seat, item["data"]["deadline"], now, warning_seconds)
        elif item["type"] == "deal_ended":
            number = item["data"]["hand_number"]
            deals = [state["deal"] for state in states]
            deal = next((d for d in deals if d is not None and d["number"] == number), deals[1])
            seats = [] if deal is None else deal["players"]
            wanted += [(DEAL_ENDED, item, int(seat), None, now) for seat in seats]
        elif item["type"] == "reality_check":
            wanted.append((REALITY_CHECK, item, int(item["data"]["seat"]), None, now))
    made = (_notice(table_id, states, now, *notice) for notice in wanted)
    return [entry for entry in made if entry is not None]


def _turn(
    item: Event, seat: int, deadline: float | None, now: float, warning_seconds: float
) -> list[_Wanted]:
    """A seat's turn: its notice now and, if the turn is long enough, its warning."""
    wanted: list[_Wanted] = [(TURN, item, seat, deadline, now)]
    if deadline is not None and warning_seconds > 0 and deadline - warning_seconds > now:
        wanted.append((TURN_WARNING, item, seat, deadline, deadline - warning_seconds))
    return wanted


def _notice(
    table_id: str,
    states: Sequence[TableState],
    now: float,
    kind: str,
    item: Event,
    seat: int,
    deadline: float | None,
    due: float,
) -> OutboxEntry | None:
    """One notice's outbox entry, None for a seat held by no player."""
    player = _player_of(seat, states)
    if player is None:
        return None
    identifier = delivery_id(table_id, int(item["id"]), seat, kind)
    body: Notice = {
        "id": identifier,
        "type": kind,
        "table_id": table_id,
        "seat": seat,
        "player": player,
        "hand_number": int(item.get("hand_number") or 0),
        "deadline": deadline,
        "at": now,
    }
    if item["type"] == "reality_check":
        body["played_seconds"] = item["data"]["played_seconds"]
        body["net"] = item["data"]["net"]
    return {"body": body, "due": due, "attempts": 0, "event": int(item["id"])}


def turn_still_open(state: TableState, seat: int, deadline: float | None) -> bool:
    """Whether `seat` still has the turn that ends at `deadline` (its warning is due)."""
    if state.get("closed_at") is not None or state["deadline"] != deadline:
        return False
    pending = game_of(state).view(state)["pending"]
    return pending is not None and seat in pending["seats"]


class WebhookService:
    """Notices written by the tables' commits, delivered by the clock's deliverer."""

    def __init__(
        self,
        store: WebhookStore,
        tables: TableStore,
        policy: WebhookPolicy | None = None,
        clock: Callable[[], float] = time.time,
        sender: Sender | None = None,
    ) -> None:
        """Use these stores; `clock` gives the time, `sender` makes the POSTs (by default
        over as many keep-alive connections as the policy's `concurrency`)."""
        self.store = store
        self.tables = tables
        self.policy = policy or WebhookPolicy()
        self.clock = clock
        self.sender = sender or Sender(self.policy.concurrency)
        self.random = random.Random()
        if self.policy.enabled:
            # as the process starts, not when its first notice is due
            self.sender.open()

    def writes(
        self,
        commit: Commit,
        record: TableRecord,
        state: TableState,
        stored: Sequence[Event],
        now: float,
    ) -> None:
        """Add the change's notices to its commit; point a deliverer at the table first."""
        if not self.policy.enabled:
            return
        made = notices(
            record.table_id, record.state, state, stored, now, self.policy.warning_seconds
        )
        if not made:
            return
        self.store.point(record.table_id, now)
        key = outbox_key(record.table_id)
        commit.hsets += [(key, entry["body"]["id"], jsonio.dumps(entry)) for entry in made]
        before = now + self.policy.grace
        commit.land_before = min(commit.land_before or before, before)

    def dead(self, limit: int = 100) -> list[DeadLetter]:
        """The latest notices given up on, newest first (each with its last status)."""
        return self.store.dead(limit)

    def due(self, limit: int = 100) -> list[tuple[str, float]]:
        """Tables whose outbox is due for a look, oldest first, each with the score read
        (which `deliver` is given back)."""
        return self.store.due(self.clock(), limit)

    def close(self) -> None:
        """Close the receiver's connections."""
        self.sender.close()

    def deliver(self, table_id: str, seen: float) -> int:
        """Send a table's due notices one after the other, oldest first, unless another
        deliverer holds its outbox; how many were sent."""
        policy = self.policy
        lease_seconds = max(30.0, (policy.batch + 1) * policy.timeout)
        token = self.store.lease(table_id, lease_seconds)
        if token is None:
            return 0
        started = time.monotonic()
        sent = 0
        try:
            now = self.clock()
            entries = self.store.outbox(table_id)
            due = sorted(
                (entry for entry in entries.values() if entry["due"] <= now),
                key=lambda entry: (
                    entry["due"],
                    entry["body"]["at"],
                    entry.get("event", 0),
                    entry["body"]["seat"],
                ),
            )
            loaded = False
            state: TableState | None = None
            for entry in due[: policy.batch]:
                if time.monotonic() - started > lease_seconds - policy.timeout - 1:
                    break  # the lease would run out during the next POST
                body = entry["body"]
                if body["type"] == TURN_WARNING:
                    if not loaded:
                        record = self.tables.load(table_id)
                        state, loaded = (None if record is None else record.state), True
                    if state is None or not turn_still_open(state, body["seat"], body["deadline"]):
                        self.store.done(table_id, body["id"])
                        entries.pop(body["id"], None)
                        _COUNTS["dropped"].inc()
                        continue
                if self._send(table_id, entry):
                    entries.pop(body["id"], None)
                    sent += 1
            now = self.clock()
            later = [entry["due"] for entry in entries.values()]
            self.store.repoint(table_id, seen, min(later) if later else None, now, policy.grace)
        finally:
            self.store.release(table_id, token)
        return sent

    def _send(self, table_id: str, entry: OutboxEntry) -> bool:
        """One attempt; True once the notice left the outbox (delivered or dead)."""
        policy = self.policy
        assert policy.url is not None  # a notice is only written with a URL
        body = entry["body"]
        payload = jsonio.dumps(body).encode()
        timestamp = int(self.clock())
        headers = {
            "content-type": "application/json",
            "user-agent": "cardroom-webhooks",
            "webhook-id": body["id"],
            "webhook-timestamp": str(timestamp),
            "webhook-signature": signature(policy.secrets, body["id"], timestamp, payload),
        }
        status = self.sender.post(policy.url, payload, headers, policy.timeout)
        if 200 <= status < 300:
            self.store.done(table_id, body["id"])
            _COUNTS["delivered"].inc()
            return True
        attempts = int(entry["attempts"]) + 1
        if attempts >= policy.max_attempts:
            dead: DeadLetter = {**entry, "attempts": attempts, "status": status, "at": self.clock()}
            self.store.bury(dead)
            self.store.done(table_id, body["id"])
            _COUNTS["dead"].inc()
            log.warning(
                "webhook given up on",
                extra={"delivery": body["id"], "status": status, "attempts": attempts},
            )
            return True
        entry["attempts"] = attempts
        entry["status"] = status
        entry["due"] = self.clock() + policy.backoff(attempts, self.random.random())
        self.store.keep(table_id, body["id"], entry)
        _COUNTS["failed"].inc()
        return False
