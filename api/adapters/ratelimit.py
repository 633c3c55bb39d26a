"""Rate-limit buckets in Redis: one GCRA (generic cell rate algorithm) bucket per key.

A bucket allows `limit` requests per window, any of them in one burst, then one more
every `window / limit`. It is one Redis key holding its "theoretical arrival time" in
milliseconds of the Redis server's clock (`lua/gcra.lua`), so every worker and every
gateway process shares it and no two clocks need to agree. A request's buckets go in
one pipelined round trip (in a gevent worker, batched with other requests' commands:
`api.adapters.batching`); on a Redis Cluster, one call per bucket, since they live
on different slots.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import redis
import redis.cluster

from api.adapters.batching import Command, send_now
from api.adapters.store import RedisClient, lua_script

GCRA = lua_script("gcra.lua")


@dataclass(frozen=True)
class Verdict:
    """One bucket's answer: allowed or not, requests left, seconds to wait and to reset."""

    allowed: bool
    limit: int
    remaining: int
    retry_after_ms: int
    reset_ms: int


class RateLimiter:
    """GCRA buckets in Redis, shared by every process of the gateway."""

    def __init__(
        self,
        client: RedisClient,
        window_seconds: float,
        send: Callable[[Sequence[Command]], list[Any]] | None = None,
    ) -> None:
        """A limiter over `client` whose limits are per `window_seconds`.

        On a single Redis the buckets' scripts go out through `send` (`TableStore.send`:
        in a gevent worker, batched with other requests' commands); without it, as a
        pipeline of their own.
        """
        self.client = client
        self.window_ms = max(1, round(window_seconds * 1000))
        self.script = client.register_script(GCRA)
        self._send = send if send is not None else functools.partial(send_now, client)

    def check(self, buckets: Sequence[tuple[str, int]]) -> list[Verdict]:
        """Count one request against each (key, limit) bucket (one round trip on one node)."""
        replies: list[Any]
        if isinstance(self.client, redis.cluster.RedisCluster):
            # The buckets live on different slots, which a cluster pipeline cannot script.
            replies = [
                self.script(keys=[key], args=[self.window_ms, limit]) for key, limit in buckets
            ]
        else:
            commands = [
                ("EVALSHA", self.script.sha, 1, key, self.window_ms, limit)
                for key, limit in buckets
            ]
            replies = self._send(commands)
            if any(isinstance(reply, redis.exceptions.NoScriptError) for reply in replies):
                # a restarted or flushed Redis: a refused EVALSHA counted nothing
                self.client.script_load(GCRA)
                replies = self._send(commands)
            for reply in replies:
                if isinstance(reply, Exception):
                    raise reply
        return [
            Verdict(bool(reply[0]), limit, int(reply[1]), int(reply[2]), int(reply[3]))
            for (_, limit), reply in zip(buckets, replies, strict=True)
        ]
