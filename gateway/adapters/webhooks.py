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
within the grace the deliverer gives a pointer (`gateway.service.webhooks`): a crash
leaves a pointer to nothing, never a notice no deliverer looks for.
"""

from __future__ import annotations

import secrets
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any, cast

from gateway import jsonio
from gateway.adapters.store import RedisClient, lua_script

_WEBHOOKS = lua_script("webhooks.lua")

DUE_KEY = "{webhooks}:due"
WRITTEN_KEY = "{webhooks}:written"
DEAD_KEY = "{webhooks}:dead"
DEAD_KEPT = 1000


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
        return [(str(member), float(score)) for member, score in cast(list[Any], rows)]

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

    def outbox(self, table_id: str) -> dict[str, dict[str, Any]]:
        """A table's notices, by delivery id."""
        raw = cast(dict[str, str], self.client.hgetall(outbox_key(table_id)))
        return {key: dict(jsonio.loads(value)) for key, value in raw.items()}

    def keep(self, table_id: str, delivery_id: str, entry: Mapping[str, Any]) -> None:
        """Write a notice back (its next attempt)."""
        self.client.hset(outbox_key(table_id), delivery_id, jsonio.dumps(entry))

    def done(self, table_id: str, delivery_id: str) -> None:
        """Take a notice out of its outbox (delivered, dropped or dead)."""
        self.client.hdel(outbox_key(table_id), delivery_id)

    def bury(self, entry: Mapping[str, Any]) -> None:
        """Keep a notice given up on where the operator can read it."""
        pipe = self.client.pipeline(transaction=False)
        pipe.lpush(DEAD_KEY, jsonio.dumps(entry))
        pipe.ltrim(DEAD_KEY, 0, DEAD_KEPT - 1)
        pipe.execute()

    def dead(self, count: int = 100) -> list[dict[str, Any]]:
        """The latest notices given up on, newest first."""
        raw = cast(list[str], self.client.lrange(DEAD_KEY, 0, count - 1))
        return [dict(jsonio.loads(item)) for item in raw]

    def pending(self) -> int:
        """How many tables have notices waiting (or a pointer in its grace)."""
        return int(self.client.zcard(DUE_KEY))


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    """A redirect is an answer like any other non-2xx: the delivery is tried again."""

    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        """Follow no redirect."""
        return None


_OPENER = urllib.request.build_opener(_NoRedirects())


def post(url: str, body: bytes, headers: Mapping[str, str], timeout: float) -> int:
    """POST `body` to `url`; the status answered (0: no answer, within `timeout` or at all)."""
    # the URL is the operator's setting, checked to be http(s) at start (gateway.settings)
    request = urllib.request.Request(url, data=body, headers=dict(headers), method="POST")  # noqa: S310
    try:
        with _OPENER.open(request, timeout=timeout) as response:
            response.read(65536)
            return int(response.status)
    except urllib.error.HTTPError as error:
        error.close()
        return int(error.code)
    except (OSError, ValueError):
        return 0
