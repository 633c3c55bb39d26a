"""Acknowledged means replicated: every write waits for `replicas` replicas to have it.

Redis replicates asynchronously: a primary acknowledges a write before any replica has
it, and a primary that dies then takes the write with it when a replica is promoted.
With `REDIS_ACK_REPLICAS` set above 0, the gateway asks, after its writes and before it
answers, that many replicas to confirm them (`WAIT numreplicas timeout`): an answer
that said a move, a buy-in or a cash-out happened then holds on a replica too, and a
failover loses nothing the gateway acknowledged.

`WAIT` covers the writes made before it on the same connection, so it is sent on the
connection that made them, right after their replies are read: a connection class
(`acknowledging`) counts the commands sent on it, and once the replies of all of them
are read and one was a write, sends `WAIT` on itself. That holds for single commands,
pipelines, the group commit's batches (`api.adapters.batching`) and the Lua scripts,
on one Redis, a Sentinel's primary and every node of a Cluster alike, without a
second path for each. When fewer replicas confirm within the timeout, the write stands
on the primary but is not acknowledged: `NotReplicated` is raised (answered 503
`not_replicated` with Retry-After), and a retry with the same Idempotency-Key gets the
change's answer once a replica has it (`TableStore.confirm`), never a second change.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import redis

# The commands the gateway sends that change nothing; any other is taken for a write
# (an unknown command then costs a WAIT too, which errs on the side of the data).
READ_ONLY = frozenset(
    {
        "ASKING",
        "AUTH",
        "CLIENT",
        "CLUSTER",
        "COMMAND",
        "DBSIZE",
        "ECHO",
        "EXISTS",
        "GET",
        "HELLO",
        "HEXISTS",
        "HGET",
        "HGETALL",
        "HKEYS",
        "HLEN",
        "HMGET",
        "HSCAN",
        "HVALS",
        "INFO",
        "LLEN",
        "LRANGE",
        "MGET",
        "PING",
        "PTTL",
        "READONLY",
        "READWRITE",
        "ROLE",
        "SCAN",
        "SCARD",
        "SCRIPT",
        "SELECT",
        "SISMEMBER",
        "SMEMBERS",
        "SSCAN",
        "STRLEN",
        "TIME",
        "TTL",
        "TYPE",
        "WAIT",
        "XLEN",
        "XRANGE",
        "XREAD",
        "XREVRANGE",
        "ZCARD",
        "ZCOUNT",
        "ZMSCORE",
        "ZRANGE",
        "ZRANGEBYSCORE",
        "ZRANK",
        "ZREVRANGE",
        "ZREVRANGEBYSCORE",
        "ZSCAN",
        "ZSCORE",
    }
)


class NotReplicated(redis.exceptions.RedisError):
    """Fewer replicas than required confirmed a write in time: it stands on the primary,
    unacknowledged (a failover now may lose it)."""

    def __init__(self, confirmed: int, required: int, reply: Any = None) -> None:
        """`confirmed` replicas of the `required` ones had the write in time; `reply` is
        the reply read just before the WAIT (the last of a pipeline's, an error reply as
        its exception), which the commands that wrote nothing may still be given."""
        super().__init__(f"{confirmed} of {required} replicas confirmed the write in time")
        self.confirmed = confirmed
        self.required = required
        self.reply = reply


@dataclass(frozen=True)
class Replication:
    """How many replicas must confirm a write before it is acknowledged, and how long
    to wait for them (`REDIS_ACK_REPLICAS`, `REDIS_ACK_TIMEOUT`)."""

    replicas: int = 0
    timeout_seconds: float = 1.0

    @property
    def waits(self) -> bool:
        """Whether writes wait for replicas at all."""
        return self.replicas > 0


def is_write(command: Sequence[Any]) -> bool:
    """Whether `command` may change something (any command not known to be a read)."""
    name = command[0]
    if isinstance(name, bytes):
        name = name.decode()
    return str(name).split(" ", 1)[0].upper() not in READ_ONLY


class _Acknowledging:
    """A connection that confirms its writes with WAIT once their replies are read.

    Mixed into a redis-py connection class by `acknowledging`, which sets the two
    class attributes below.
    """

    replicas = 0
    timeout_ms = 1000
    _outstanding = 0  # commands sent whose replies are not read yet
    _wrote = False  # whether one of them (or one read since the last WAIT) is a write

    def _note(self, commands: Iterable[Sequence[Any]]) -> None:
        for command in commands:
            self._outstanding += 1
            if not self._wrote and is_write(command):
                self._wrote = True

    def send_command(self, *args: Any, **kwargs: Any) -> None:
        """Send one command, noting whether it writes."""
        self._note((args,))
        super().send_command(*args, **kwargs)  # type: ignore[misc]

    def pack_commands(self, commands: Iterable[Sequence[Any]]) -> Any:
        """Pack a pipeline's commands, noting whether one writes."""
        commands = list(commands)
        self._note(commands)
        return super().pack_commands(commands)  # type: ignore[misc]

    def read_response(self, *args: Any, **kwargs: Any) -> Any:
        """A reply; after the last outstanding one, a WAIT if one of them wrote."""
        try:
            reply = super().read_response(*args, **kwargs)  # type: ignore[misc]
        except redis.exceptions.ResponseError as error:
            self._replied(error)
            raise
        except BaseException:
            self._replied(None)
            raise
        self._replied(reply)
        return reply

    def _replied(self, reply: Any) -> None:
        """Count a reply read; after the last outstanding one, a WAIT if one of them wrote."""
        self._outstanding -= 1
        if self._outstanding <= 0:
            self._outstanding = 0
            if self._wrote and self._connected():
                self._wrote = False
                self._confirm(reply)

    def _connected(self) -> bool:
        return getattr(self, "_sock", None) is not None

    def _confirm(self, reply: Any) -> None:
        """WAIT for the replicas on this connection; NotReplicated (holding `reply`, the
        reply read before it) if too few answer."""
        base: Any = super()
        base.send_command("WAIT", self.replicas, self.timeout_ms)
        confirmed = int(base.read_response())
        if confirmed < self.replicas:
            raise NotReplicated(confirmed, self.replicas, reply)

    def disconnect(self, *args: Any, **kwargs: Any) -> None:
        """Close; what was outstanding on the connection is gone with it."""
        self._outstanding = 0
        self._wrote = False
        super().disconnect(*args, **kwargs)  # type: ignore[misc]


def acknowledging(base: type[Any], replication: Replication) -> type[Any]:
    """`base` (a redis-py connection class) confirming each write on `replication`'s
    terms; `base` itself when writes wait for no replica."""
    if not replication.waits:
        return base
    attributes = {
        "replicas": replication.replicas,
        "timeout_ms": max(1, round(replication.timeout_seconds * 1000)),
    }
    return type(f"Acknowledging{base.__name__}", (_Acknowledging, base), attributes)
