"""Tables in Redis: atomic compare-and-set of a table, its events, tokens and records.

Every key of a table carries the table id as a hash tag (`{id}`), so a table lives on
one Redis Cluster slot and one Lua script can change all of its keys at once:

    table:{id}            hash: state (JSON), version, stamp (random, per commit), seq
                          (last event id), deadline (as scheduled), first_event /
                          first_hand (oldest kept), closed
    table:{id}:events     stream of events; entry ids are `<seq>-0`, so seq is the cursor
    table:{id}:tokens     hash: sha256(token) -> player JSON; "player:<id>" -> sha256
    table:{id}:hand:<n>   JSON hand history of deal n, written when the deal ends
    table:{id}:idem:<key> JSON idempotency record (expires)
    table:{id}:closed     JSON closing record of a table closed for idleness (expires)
    table:{id}:ledger     hash: the table's transfers; table:{id}:outbox, its cash-outs
                          not yet relayed (gateway.adapters.wallets)

and two keys shared by all tables:

    tables      sorted set: table id by creation time (the lobby's order)
    deadlines   sorted set: table id by its next deadline (the clock's work list; a
                table a clock claimed, by the end of that clock's hold)

A change is computed in Python from the state read, then written by `commit`, one Lua
script that writes only if the version is still the one read (optimistic concurrency):
a lost race changes nothing and the caller recomputes from the new state. A move costs
two round trips: `read` (table, seat token and idempotency record in one pipeline, all
on the table's slot) and `commit`; one, the commit, when the gateway process made the
table's last change itself and computes from that (`gateway.adapters.warm`). The version and a
random stamp that each commit writes are both compared, so a Redis that lost writes
and brought a table back to a version it had before is not taken for the same table.
On a single Redis the commit also schedules the table in `deadlines` when its deadline
changed; on a cluster that key sits on another slot, so the schedule is one more round
trip, sent only when the script reports that the deadline changed.

Retention: when a deal ends, the commit keeps the hand histories of the last
`history_deals` deals and trims the events stream to the first event of the oldest
kept deal (XTRIM MINID), recording the oldest kept event and hand in the table hash.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, cast

import redis
import redis.cluster
from redis.commands.core import Script

from gateway import jsonio
from gateway.adapters.batching import Command, CommandBatcher, send_now

RedisClient = redis.Redis | redis.cluster.RedisCluster


def lua_script(name: str) -> str:
    """The text of the Lua script `name` (under lua/, shipped with the package)."""
    return (Path(__file__).parent / "lua" / name).read_text(encoding="utf-8")


# What a failing or unreachable store raises (answered as 503 store_unavailable).
STORE_ERRORS: tuple[type[Exception], ...] = (redis.RedisError,)
LOBBY_KEY = "tables"
DEADLINES_KEY = "deadlines"

_COMMIT = lua_script("commit.lua")

_RESCHEDULE = lua_script("reschedule.lua")

_CLAIM = lua_script("claim.lua")

# tables created at one instant that a lobby page boundary may fall between
_LOBBY_TIE_ROOM = 64

_TABLE_FIELDS = [
    "state",
    "version",
    "seq",
    "first_event",
    "first_hand",
    "deadline",
    "closed",
    "stamp",
]


def table_key(table_id: str) -> str:
    """The hash holding a table's state."""
    return f"table:{{{table_id}}}"


def events_key(table_id: str) -> str:
    """The stream of a table's events."""
    return f"table:{{{table_id}}}:events"


def tokens_key(table_id: str) -> str:
    """The hash of a table's seat-token digests."""
    return f"table:{{{table_id}}}:tokens"


def hand_key(table_id: str, hand_number: int) -> str:
    """One deal's hand history."""
    return f"table:{{{table_id}}}:hand:{hand_number}"


def idempotency_key(scope: str, key: str) -> str:
    """An idempotency record: per table, or for table creation under scope "create"."""
    digest = hashlib.sha256(key.encode()).hexdigest()
    if scope == "create":
        return f"idem:{{create:{digest[:4]}}}:{digest}"
    return f"table:{{{scope}}}:idem:{digest}"


def closed_key(table_id: str) -> str:
    """The closing record of a table closed for idleness."""
    return f"table:{{{table_id}}}:closed"


def token_digest(token: str) -> str:
    """What is stored of a seat token: its SHA-256."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class TableRecord:
    """A table as read from Redis: its state, version and last event id.

    `first_event` and `first_hand` are the oldest event and hand history still kept;
    `scheduled` is the deadline the table was last scheduled at ("" for none, None if
    unknown); `closed` is set once the table was closed; `stamp` is the random value
    its last commit wrote ("" before the first), compared with the version.
    """

    table_id: str
    state: dict[str, Any]
    version: int
    seq: int
    first_event: int = 1
    first_hand: int = 1
    scheduled: str | None = None
    closed: bool = False
    stamp: str = ""


@dataclass
class MoveRead:
    """What one move reads in one round trip: table, seat-token entry, replay record."""

    record: TableRecord | None
    player: dict[str, Any] | None = None
    replay: dict[str, Any] | None = None
    # every seat token's entry, by digest, when the read asked for them all
    players: dict[str, dict[str, Any]] = field(default_factory=dict)


@dataclass
class Trim:
    """Keep hands from `first_hand` on: their events too; delete the listed hands."""

    first_hand: int
    drop_hands: list[int] = field(default_factory=list)


@dataclass
class Close:
    """Close the table: its keys expire after `grace` seconds, these hands go now."""

    grace: int
    closed_at: float
    drop_hands: list[int] = field(default_factory=list)


@dataclass
class Commit:
    """Everything one change writes, atomically, if the version and stamp still match."""

    record: TableRecord
    state: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)
    token_sets: dict[str, str] = field(default_factory=dict)
    token_deletes: list[str] = field(default_factory=list)
    extra: dict[str, tuple[str, int]] = field(default_factory=dict)
    deadline: float | None = None
    trim: Trim | None = None
    close: Close | None = None
    stamp: str = field(default_factory=lambda: secrets.token_hex(8))
    # one of the `extra` keys that must not exist yet (the move's idempotency record,
    # when it was not read first): the commit fails, writing nothing, if it does
    absent: str | None = None
    # (key, field, value): entries of the table's ledger and outbox (gateway.adapters.wallets)
    hsets: list[tuple[str, str, str]] = field(default_factory=list)
    # the transfers the commit accepts are void after this time (Redis's clock): a
    # commit that would land later writes nothing and raises TransferExpired
    land_before: float | None = None

    @cached_property
    def state_bytes(self) -> bytes:
        """The state as written, encoded once (gateway.adapters.warm keeps these same bytes)."""
        return jsonio.dumps_bytes(self.state)


class TransferExpired(Exception):  # noqa: N818 - a condition, like StopIteration
    """A commit came after the time its transfers had to land by: nothing was written."""


def deadline_field(deadline: float | None) -> str:
    """A deadline as the table hash keeps it ("" for none)."""
    return "" if deadline is None else repr(float(deadline))


def _record(table_id: str, values: Sequence[Any]) -> TableRecord | None:
    if values[0] is None:
        return None
    return TableRecord(
        table_id,
        jsonio.loads(values[0]),
        int(values[1]),
        int(values[2] or 0),
        int(values[3] or 1),
        int(values[4] or 1),
        values[5],
        bool(values[6]),
        values[7] or "",
    )


class TableStore:
    """The Redis side of tables; every method is one or a few round trips."""

    def __init__(
        self,
        client: RedisClient,
        waiting: RedisClient | None = None,
        batcher: CommandBatcher | None = None,
    ) -> None:
        """Use `client` (a Redis or RedisCluster client with decode_responses=True).

        `waiting`, a client of the same Redis with a pool of its own, serves the reads
        that wait for events (`events_after` with a block); by default, `client`.
        `batcher` (`gateway.adapters.batching`, over `client`) sends the commits and the reads of
        moves; without one they are sent at once.
        """
        self.client = client
        self.waiting = client if waiting is None else waiting
        self.cluster = isinstance(client, redis.cluster.RedisCluster)
        self._commit = client.register_script(_COMMIT)
        self._reschedule = client.register_script(_RESCHEDULE)
        self._claim = client.register_script(_CLAIM)
        self._batcher = batcher

    def send(self, commands: Sequence[Command]) -> list[Any]:
        """Replies to `commands`, an error reply as its exception: batched with other
        requests' commands in a gevent worker (`gateway.adapters.batching`), else sent at once."""
        if self._batcher is not None:
            return self._batcher.send(commands)
        return send_now(self.client, commands)

    def _replies(self, commands: Sequence[Command]) -> list[Any]:
        """`send`, raising the first error reply."""
        replies = self.send(commands)
        for reply in replies:
            if isinstance(reply, Exception):
                raise reply
        return replies

    def _run(self, script: Script, keys: list[str], args: list[Any]) -> Any:
        """EVALSHA of a registered script, loading it first if Redis does not know it.

        A direct command: `Script.__call__` goes through redis-py's `evalsha` wrappers,
        which cost a move several microseconds more for the same command.
        """
        command = ("EVALSHA", script.sha, len(keys), *keys, *args)
        reply = self.send([command])[0]
        if isinstance(reply, redis.exceptions.NoScriptError):
            # a restarted or flushed Redis: a refused EVALSHA ran nothing, so send it again
            self.client.script_load(script.script)
            reply = self.send([command])[0]
        if isinstance(reply, Exception):
            raise reply
        return reply

    def ping(self) -> None:
        """Raise unless Redis answers."""
        self.client.ping()

    def load(self, table_id: str) -> TableRecord | None:
        """The table's state, version and last event id, or None if there is no such table."""
        (reply,) = self._replies([("HMGET", table_key(table_id), *_TABLE_FIELDS)])
        return _record(table_id, reply)

    def read(
        self,
        table_id: str,
        token: str | None,
        replay_key: str | None,
        all_players: bool = False,
    ) -> MoveRead:
        """The table, the token's entry and the replay record: one pipelined round trip.

        With `all_players`, every seat token's entry is read (a few hundred bytes more),
        for a caller that keeps them (`gateway.adapters.warm`).
        """
        commands: list[Command] = [("HMGET", table_key(table_id), *_TABLE_FIELDS)]
        if all_players:
            commands.append(("HGETALL", tokens_key(table_id)))
        elif token is not None:
            commands.append(("HGET", tokens_key(table_id), token_digest(token)))
        if replay_key is not None:
            commands.append(("GET", replay_key))
        replies = self._replies(commands)
        read = MoveRead(_record(table_id, replies[0]))
        position = 1
        if all_players:
            read.players = {
                name: dict(jsonio.loads(value))
                for name, value in cast(dict[str, str], replies[position]).items()
                if not name.startswith("player:")
            }
            if token is not None:
                read.player = read.players.get(token_digest(token))
            position += 1
        elif token is not None:
            raw = replies[position]
            read.player = None if raw is None else dict(jsonio.loads(raw))
            position += 1
        if replay_key is not None and replies[position] is not None:
            read.replay = dict(jsonio.loads(replies[position]))
        return read

    def commit(self, change: Commit) -> bool:
        """Write the change if nobody changed the table since it was read; False if lost.

        On a cluster the schedule (and a closed table's lobby entry) is written after
        the script, and only when it changed.
        """
        record = change.record
        table_id = record.table_id
        scheduled = deadline_field(change.deadline)
        keys = [table_key(table_id), events_key(table_id), tokens_key(table_id)]
        args: list[Any] = [
            record.version,
            record.version + 1,
            change.state_bytes,
            change.events[-1]["id"] if change.events else record.seq,
            scheduled,
            record.stamp,
            change.stamp,
            0,  # set below, once the keys are known
            len(change.events),
        ]
        for item in change.events:
            args += [f"{item['id']}-0", jsonio.dumps_bytes(item)]
        args.append(len(change.token_sets) + len(change.token_deletes))
        for name, value in change.token_sets.items():
            args += ["set", name, value]
        for name in change.token_deletes:
            args += ["del", name, ""]
        args.append(len(change.extra))
        for key, (value, ttl) in change.extra.items():
            keys.append(key)
            args += [value, ttl]
        if change.absent is not None:
            args[7] = keys.index(change.absent) + 1
        if change.trim is None:
            args.append(0)
        else:
            args += [1 + len(change.trim.drop_hands), change.trim.first_hand]
            keys.append(hand_key(table_id, change.trim.first_hand))
            keys += [hand_key(table_id, number) for number in change.trim.drop_hands]
        if change.close is None:
            args.append(0)
        else:
            close = change.close
            args += [1 + len(close.drop_hands), close.grace, repr(close.closed_at)]
            keys += [hand_key(table_id, number) for number in close.drop_hands]
        # the script compares the deadline with the one stored, so a record that is
        # not fresh from Redis (gateway.adapters.warm) schedules right too
        if self.cluster:
            args.append("none")
        elif change.close is not None:
            args += ["del", table_id]
            keys.append(DEADLINES_KEY)
        else:
            args += ["sync", table_id]
            keys.append(DEADLINES_KEY)
        if self.cluster or change.close is None:
            args.append("none")
        else:
            args += ["del", table_id]
            keys.append(LOBBY_KEY)
        args.append(len(change.hsets))
        for key, name, value in change.hsets:
            keys.append(key)
            args += [name, value]
        args.append("" if change.land_before is None else repr(change.land_before))
        done = self._run(self._commit, keys, args)
        if done == 3:
            raise TransferExpired()
        if not done:
            return False
        if self.cluster and (done == 2 or change.close is not None):
            self.schedule(table_id, change.deadline)
        if self.cluster and change.close is not None:
            self.client.zrem(LOBBY_KEY, table_id)
        return True

    def reschedule(self, record: TableRecord, deadline: float | None) -> bool:
        """Schedule the table at `deadline` unless it changed since `record` was read."""
        keys = [table_key(record.table_id)]
        if not self.cluster:
            keys.append(DEADLINES_KEY)
        done = bool(
            self._run(
                self._reschedule, keys, [record.version, deadline_field(deadline), record.table_id]
            )
        )
        if done and self.cluster:
            self.schedule(record.table_id, deadline)
        return done

    def index_table(self, table_id: str, created_at: float) -> None:
        """Add a table to the lobby."""
        self.client.zadd(LOBBY_KEY, {table_id: created_at})

    def lobby_page(
        self, after: tuple[float, str | None] | None, limit: int
    ) -> list[tuple[str, float]]:
        """Up to `limit` (table id, created_at), newest first, after the (created_at, id)
        cursor `after` (ties by id, descending, as Redis orders equal scores)."""
        if after is None:
            top, extra = "+inf", 0
        else:
            top, extra = repr(after[0]), _LOBBY_TIE_ROOM
        rows = cast(
            list[tuple[str, float]],
            self.client.zrevrangebyscore(
                LOBBY_KEY, top, "-inf", start=0, num=limit + extra, withscores=True
            ),
        )
        page: list[tuple[str, float]] = []
        for table_id, score in rows:
            seen = (
                after is not None
                and float(score) == after[0]
                and (after[1] is None or str(table_id) >= after[1])
            )
            if not seen:
                page.append((str(table_id), float(score)))
        return page[:limit]

    def load_many(self, table_ids: Sequence[str]) -> list[TableRecord | None]:
        """Several tables at once (one pipeline; each key may sit on its own slot)."""
        pipe = self.client.pipeline(transaction=False)
        for table_id in table_ids:
            pipe.hmget(table_key(table_id), _TABLE_FIELDS)
        replies = cast(list[list[Any]], pipe.execute())
        return [
            _record(table_id, values) for table_id, values in zip(table_ids, replies, strict=True)
        ]

    def schedule(self, table_id: str, deadline: float | None) -> None:
        """Tell the clock when the table next needs it (None: never)."""
        if deadline is None:
            self.client.zrem(DEADLINES_KEY, table_id)
        else:
            self.client.zadd(DEADLINES_KEY, {table_id: deadline})

    def claim_due(self, now: float, limit: int, until: float) -> list[str]:
        """Tables whose deadline has passed, each held for this caller until `until`.

        One script on the `deadlines` slot: what one clock claimed, no other clock is
        given before `until`, unless a commit scheduled the table again meanwhile.
        """
        rows = self._run(self._claim, [DEADLINES_KEY], [repr(now), limit, repr(until)])
        return [str(table_id) for table_id in rows]

    def lobby_after(self, after: float | None, count: int) -> list[tuple[str, float]]:
        """Up to `count` (table id, created_at) of the lobby, oldest first, created after `after`.

        A cursor by creation time, unlike a position, is not shifted by tables leaving.
        """
        low = "-inf" if after is None else f"({after!r}"
        rows = cast(
            list[tuple[str, float]],
            self.client.zrangebyscore(LOBBY_KEY, low, "+inf", start=0, num=count, withscores=True),
        )
        return [(str(table_id), float(score)) for table_id, score in rows]

    def schedules(self, table_ids: Sequence[str]) -> list[tuple[str | None, float | None]]:
        """Per table: the deadline its hash says it is scheduled at, and its `deadlines` score.

        Two pipelines, whatever the number of tables: the table hashes (each on its
        own slot), then one ZMSCORE.
        """
        if not table_ids:
            return []
        pipe = self.client.pipeline(transaction=False)
        for table_id in table_ids:
            pipe.hget(table_key(table_id), "deadline")
        fields = cast(list[str | None], pipe.execute())
        scores: list[float | None] = self.client.zmscore(DEADLINES_KEY, list(table_ids))
        return list(zip(fields, scores, strict=True))

    def forget(self, table_id: str) -> None:
        """Remove a table that no longer exists from the lobby and the clock's list."""
        self.client.zrem(DEADLINES_KEY, table_id)
        self.client.zrem(LOBBY_KEY, table_id)

    def events_after(self, table_id: str, after: int, block_ms: int | None) -> list[dict[str, Any]]:
        """Events with id > after; with block_ms, wait up to that long for the first one."""
        key = events_key(table_id)
        if block_ms is None:
            entries = cast(
                list[tuple[str, dict[str, str]]], self.client.xrange(key, f"({after}-0", "+")
            )
            return [jsonio.loads(fields["event"]) for _, fields in entries]
        reply = cast(
            list[tuple[str, list[tuple[str, dict[str, str]]]]] | None,
            self.waiting.xread({key: f"{after}-0"}, block=max(block_ms, 1)),
        )
        events: list[dict[str, Any]] = []
        for _stream, stream_entries in reply or []:
            events += [jsonio.loads(fields["event"]) for _, fields in stream_entries]
        return events

    def first_event_after(self, table_id: str, after: int) -> int | None:
        """The id of the first kept event after `after`, or None."""
        entries = cast(
            list[tuple[str, dict[str, str]]],
            self.client.xrange(events_key(table_id), f"({after}-0", "+", count=1),
        )
        return int(entries[0][0].split("-")[0]) if entries else None

    def events_between(self, table_id: str, first: int, last: int) -> list[dict[str, Any]]:
        """Events with first <= id <= last."""
        entries = cast(
            list[tuple[str, dict[str, str]]],
            self.client.xrange(events_key(table_id), f"{first}-0", f"{last}-0"),
        )
        return [jsonio.loads(fields["event"]) for _, fields in entries]

    def player_for_token(self, table_id: str, token: str) -> dict[str, Any] | None:
        """The player a seat token belongs to ({"player": id, "seat": n}), or None."""
        raw = self.client.hget(tokens_key(table_id), token_digest(token))
        return None if raw is None else dict(jsonio.loads(raw))

    def hand(self, table_id: str, hand_number: int) -> dict[str, Any] | None:
        """A finished deal's history."""
        raw = self.client.get(hand_key(table_id, hand_number))
        return None if raw is None else dict(jsonio.loads(raw))

    def get_json(self, key: str) -> dict[str, Any] | None:
        """A JSON value (idempotency records, closing records)."""
        raw = self.client.get(key)
        return None if raw is None else dict(jsonio.loads(raw))

    def claim(self, key: str, value: Mapping[str, Any], ttl: int) -> bool:
        """Set a JSON value unless the key exists; True if this call set it."""
        return bool(self.client.set(key, jsonio.dumps(value), nx=True, ex=ttl))

    def put_json(self, key: str, value: Mapping[str, Any], ttl: int) -> None:
        """Set a JSON value with a lifetime."""
        self.client.set(key, jsonio.dumps(value), ex=ttl)

    def delete(self, keys: Iterable[str]) -> None:
        """Delete keys (one by one: they may sit on different slots)."""
        for key in keys:
            self.client.delete(key)


# A move holds a connection for a round trip; a long poll or an event stream holds one
# for as long as it waits (XREAD BLOCK, up to 15 s at a time). The two get pools of
# their own (`TableStore(client, waiting)`), so watchers can never take the connections
# moves need; a process's watchers are bounded by its HTTP connections (a gevent
# worker's GATEWAY_WORKER_CONNECTIONS) and, across processes, by Redis's maxclients.
COMMAND_CONNECTIONS = 256
WAITING_CONNECTIONS = 10_000
POOL_WAIT_SECONDS = 20


def connect(url: str, cluster: bool, max_connections: int = COMMAND_CONNECTIONS) -> RedisClient:
    """A client for `url` (redis://, rediss:// for TLS; a cluster with `cluster`).

    `max_connections` bounds the pool of a single Redis, and a command finding them all
    in use waits for one; a cluster client keeps a pool per node, unbounded.
    """
    if cluster:
        url = url.replace("redis+cluster://", "redis://", 1)
        return redis.cluster.RedisCluster.from_url(
            url, decode_responses=True, socket_timeout=40, socket_connect_timeout=5
        )
    # a request finding every connection in use waits for one (up to POOL_WAIT_SECONDS)
    # instead of failing at once: a burst of requests is queued, not refused
    pool = redis.BlockingConnectionPool.from_url(
        url,
        decode_responses=True,
        socket_timeout=40,
        socket_connect_timeout=5,
        health_check_interval=30,
        max_connections=max_connections,
        timeout=POOL_WAIT_SECONDS,
    )
    return redis.Redis(connection_pool=pool)
