"""Webhooks in Redis, and their POST to the operator's URL.

A table's notices wait in its outbox, on the table's slot, written by the table's own
commit:

    table:{<id>}:webhooks         hash: delivery id -> JSON {body, due, attempts}
    table:{<id>}:webhooks:lease   the deliverer working on that outbox (expires)

and three keys shared by all tables, on one slot (`{webhooks}`):

    {webhooks}:due       sorted set: table id by when a deliverer should look at its outbox
    {webhooks}:written   hash: table id -> when a commit last pointed at it
    {webhooks}:dead      list: deliveries given up on, newest first (the last 1,000)

A change with notices points at its table (`point`) before its commit, which must land
within the grace the deliverer gives a pointer (`api.service.webhooks`): a crash
leaves a pointer to nothing, never a notice no deliverer looks for.
"""

from __future__ import annotations

import secrets
import threading
from collections.abc import Mapping
from typing import TYPE_CHECKING, NotRequired, TypedDict, cast

from api import jsonio
from api.adapters.store import RedisClient, lua_script

if TYPE_CHECKING:
    import httpx

_WEBHOOKS = lua_script("webhooks.lua")

DUE_KEY = "{webhooks}:due"
WRITTEN_KEY = "{webhooks}:written"
DEAD_KEY = "{webhooks}:dead"
DEAD_KEPT = 1000


class Notice(TypedDict):
    """The body a notice is POSTed with (docs/webhooks.md): no card, nothing private."""

    id: str
    type: str  # turn, turn_warning, deal_ended or reality_check
    table_id: str
    seat: int
    player: str
    hand_number: int
    deadline: float | None  # the turn's; None for deal_ended and reality_check
    at: float
    # a reality check's: the session's time so far, the seat's chips less its buy-ins
    played_seconds: NotRequired[float]
    net: NotRequired[int]


class OutboxEntry(TypedDict):
    """A notice in its table's outbox: when it is next due, and its attempts so far."""

    body: Notice
    due: float
    attempts: int
    status: NotRequired[int]  # what its last attempt was answered, once one failed
    event: NotRequired[int]  # the id of the event it is for: its place among the change's


class DeadLetter(OutboxEntry):
    """A notice given up on, with its last status and when."""

    at: float


def outbox_key(table_id: str) -> str:
    """The hash of a table's notices not delivered yet."""
    return f"table:{{{table_id}}}:webhooks"


def lease_key(table_id: str) -> str:
    """The lease of the deliverer working on a table's outbox."""
    return f"table:{{{table_id}}}:webhooks:lease"


class WebhookStore:
    """The Redis side of webhooks: pointers, outboxes, leases and dead letters."""

    def __init__(self, client: RedisClient) -> None:
        """Use `client` (decode_responses=True), the tables' client."""
        self.client = client
        self._script = client.register_script(_WEBHOOKS)

    def point(self, table_id: str, now: float) -> None:
        """A commit with notices is on its way: a deliverer looks at the table now."""
        self._script(keys=[DUE_KEY, WRITTEN_KEY], args=["point", table_id, repr(now)])

    def due(self, now: float, limit: int) -> list[tuple[str, float]]:
        """Tables whose outbox is due for a look, with the score read."""
        rows = self.client.zrangebyscore(DUE_KEY, "-inf", now, start=0, num=limit, withscores=True)
        pairs = cast(list[tuple[str, float]], rows)
        return [(str(member), float(score)) for member, score in pairs]

    def repoint(
        self, table_id: str, seen: float, then: float | None, now: float, grace: float
    ) -> None:
        """After a look: look again at `then` (None: when a commit points again), unless a
        commit pointed since `seen` was read (webhooks.lua)."""
        args = ["repoint", table_id, repr(seen), "" if then is None else repr(then), repr(now)]
        self._script(keys=[DUE_KEY, WRITTEN_KEY], args=[*args, repr(grace)])

    def lease(self, table_id: str, seconds: float) -> str | None:
        """Take the table's outbox for `seconds`; the lease's token, or None if it is held."""
        token = secrets.token_hex(8)
        taken = self.client.set(lease_key(table_id), token, nx=True, px=int(seconds * 1000))
        return token if taken else None

    def release(self, table_id: str, token: str) -> None:
        """End a lease taken with `lease` (unless it ran out and another took it)."""
        self._script(keys=[lease_key(table_id)], args=["release", token])

    def outbox(self, table_id: str) -> dict[str, OutboxEntry]:
        """A table's notices, by delivery id."""
        raw = cast(dict[str, str], self.client.hgetall(outbox_key(table_id)))
        return {key: jsonio.loads(value) for key, value in raw.items()}

    def keep(self, table_id: str, delivery_id: str, entry: OutboxEntry) -> None:
        """Write a notice back (its next attempt)."""
        self.client.hset(outbox_key(table_id), delivery_id, jsonio.dumps(entry))

    def done(self, table_id: str, delivery_id: str) -> None:
        """Take a notice out of its outbox (delivered, dropped or dead)."""
        self.client.hdel(outbox_key(table_id), delivery_id)

    def bury(self, entry: DeadLetter) -> None:
        """Keep a notice given up on where the operator can read it."""
        pipe = self.client.pipeline(transaction=False)
        pipe.lpush(DEAD_KEY, jsonio.dumps(entry))
        pipe.ltrim(DEAD_KEY, 0, DEAD_KEPT - 1)
        pipe.execute()

    def dead(self, count: int = 100) -> list[DeadLetter]:
        """The latest notices given up on, newest first."""
        raw = cast(list[str], self.client.lrange(DEAD_KEY, 0, count - 1))
        return [jsonio.loads(item) for item in raw]

    def pending(self) -> int:
        """How many tables have notices waiting (or a pointer in its grace)."""
        return int(self.client.zcard(DUE_KEY))


# what a receiver's answer is read of (the rest is left unread and its connection closed)
ANSWER_CAP = 65536


class Sender:
    """POSTs notices over keep-alive connections, shared by the deliverer's threads.

    httpx's pool keeps up to `connections` open per receiver (redirects are not followed:
    a redirect is an answer like any other non-2xx, tried again), drops a kept-alive
    connection the receiver closed before reusing it, and honours the environment's
    proxies (HTTP_PROXY, HTTPS_PROXY, NO_PROXY: a CONNECT tunnel for https). The pool is
    made by `open` (the webhooks' service opens it as a process with a webhook URL
    starts): importing httpx and loading its certificates take a quarter of a second,
    which a process without one never spends.
    """

    def __init__(self, connections: int = 32) -> None:
        """Keep up to `connections` connections to each receiver."""
        self.connections = connections
        self._client: httpx.Client | None = None
        self._closed = False
        self._lock = threading.Lock()

    def open(self) -> httpx.Client:
        """The pool, made now if it was not; RuntimeError once closed."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the webhooks' sender is closed")
            if self._client is None:
                import httpx  # on first use (the class's docstring)

                limits = httpx.Limits(
                    max_connections=self.connections, max_keepalive_connections=self.connections
                )
                self._client = httpx.Client(limits=limits, follow_redirects=False, trust_env=True)
            return self._client

    def post(self, url: str, body: bytes, headers: Mapping[str, str], timeout: float) -> int:
        """POST `body` to `url`; the status answered (0: no answer, within `timeout` or at
        all). A connection the receiver closed as the POST went out is tried once more."""
        try:
            client = self.open()
        except RuntimeError:
            return 0
        import httpx  # imported by `open` already

        stale = (httpx.RemoteProtocolError, httpx.ReadError, httpx.WriteError)
        for attempt in (1, 2):
            try:
                return self._post(client, url, body, headers, timeout)
            except stale:
                if attempt == 2:
                    return 0
            except (httpx.HTTPError, OSError, ValueError, RuntimeError):
                # RuntimeError: the sender was closed while a POST was on its way
                return 0
        return 0

    @staticmethod
    def _post(
        client: httpx.Client, url: str, body: bytes, headers: Mapping[str, str], timeout: float
    ) -> int:
        # the URL is the operator's setting, checked to be http(s) at start (api.settings)
        with client.stream(
            "POST", url, content=body, headers=dict(headers), timeout=timeout
        ) as response:
            read = 0
            for chunk in response.iter_raw():
                read += len(chunk)
                if read >= ANSWER_CAP:
                    break
            return int(response.status_code)

    def close(self) -> None:
        """Close every connection; a POST after this answers 0."""
        with self._lock:
            self._closed = True
            client, self._client = self._client, None
        if client is not None:
            client.close()
