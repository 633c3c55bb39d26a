"""Tables in Redis: atomic compare-and-set of a table, its events, tokens and records.

Every key of a table carries the table id as a hash tag (`{id}`), so a table lives on
one Redis Cluster slot and one Lua script can change all of its keys at once:

    table:{id}            hash: state (JSON), version, seq (last event id)
    table:{id}:events     stream of events; entry ids are `<seq>-0`, so seq is the cursor
    table:{id}:tokens     hash: sha256(token) -> player JSON; "player:<id>" -> sha256
    table:{id}:hand:<n>   JSON hand history of deal n, written when the deal ends
    table:{id}:idem:<key> JSON idempotency record (expires)

and two keys shared by all tables:

    tables      sorted set: table id by creation time (the lobby's order)
    deadlines   sorted set: table id by its next deadline (the clock's work list)

A change is computed in Python from the state read, then written by `commit`, one Lua
script that writes only if the version is still the one read (optimistic concurrency):
a lost race changes nothing and the caller recomputes from the new state.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import redis
import redis.cluster

RedisClient = redis.Redis | redis.cluster.RedisCluster

LOBBY_KEY = "tables"
DEADLINES_KEY = "deadlines"

_COMMIT = """
-- KEYS[1] table hash, KEYS[2] events stream, KEYS[3] tokens hash, KEYS[4..] extra keys
-- ARGV: expected version, new version, state JSON, last seq,
--       event count, (id, payload) pairs,
--       token-op count, (op, field, value) triples,
--       then one (value, ttl seconds or 0) pair per extra key
local current = redis.call('HGET', KEYS[1], 'version') or '0'
if current ~= ARGV[1] then
  return 0
end
redis.call('HSET', KEYS[1], 'state', ARGV[3], 'version', ARGV[2], 'seq', ARGV[4])
local i = 5
local events = tonumber(ARGV[i]); i = i + 1
for _ = 1, events do
  redis.call('XADD', KEYS[2], ARGV[i], 'event', ARGV[i + 1])
  i = i + 2
end
local ops = tonumber(ARGV[i]); i = i + 1
for _ = 1, ops do
  if ARGV[i] == 'set' then
    redis.call('HSET', KEYS[3], ARGV[i + 1], ARGV[i + 2])
  else
    -- deleting "player:<id>" also deletes the token digest it points to
    local digest = redis.call('HGET', KEYS[3], ARGV[i + 1])
    if digest then
      redis.call('HDEL', KEYS[3], digest)
    end
    redis.call('HDEL', KEYS[3], ARGV[i + 1])
  end
  i = i + 3
end
for k = 4, #KEYS do
  local ttl = tonumber(ARGV[i + 1])
  if ttl > 0 then
    redis.call('SET', KEYS[k], ARGV[i], 'EX', ttl)
  else
    redis.call('SET', KEYS[k], ARGV[i])
  end
  i = i + 2
end
return 1
"""


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


def token_digest(token: str) -> str:
    """What is stored of a seat token: its SHA-256."""
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass
class TableRecord:
    """A table as read from Redis: its state, version and last event id."""

    table_id: str
    state: dict[str, Any]
    version: int
    seq: int


@dataclass
class Commit:
    """Everything one change writes, atomically, if the version still matches."""

    record: TableRecord
    state: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)
    token_sets: dict[str, str] = field(default_factory=dict)
    token_deletes: list[str] = field(default_factory=list)
    extra: dict[str, tuple[str, int]] = field(default_factory=dict)


class TableStore:
    """The Redis side of tables; every method is one or a few round trips."""

    def __init__(self, client: RedisClient) -> None:
        """Use `client` (a Redis or RedisCluster client with decode_responses=True)."""
        self.client = client
        self._commit = client.register_script(_COMMIT)

    def ping(self) -> None:
        """Raise unless Redis answers."""
        self.client.ping()

    def load(self, table_id: str) -> TableRecord | None:
        """The table's state, version and last event id, or None if there is no such table."""
        values = cast(
            list[Any], self.client.hmget(table_key(table_id), ["state", "version", "seq"])
        )
        if values[0] is None:
            return None
        return TableRecord(table_id, json.loads(values[0]), int(values[1]), int(values[2] or 0))

    def commit(self, change: Commit) -> bool:
        """Write the change if nobody changed the table since it was read; False if lost."""
        record = change.record
        table_id = record.table_id
        keys = [table_key(table_id), events_key(table_id), tokens_key(table_id)]
        args: list[Any] = [
            record.version,
            record.version + 1,
            json.dumps(change.state, separators=(",", ":")),
            change.events[-1]["id"] if change.events else record.seq,
            len(change.events),
        ]
        for item in change.events:
            args += [f"{item['id']}-0", json.dumps(item, separators=(",", ":"))]
        args.append(len(change.token_sets) + len(change.token_deletes))
        for name, value in change.token_sets.items():
            args += ["set", name, value]
        for name in change.token_deletes:
            args += ["del", name, ""]
        for key, (value, ttl) in change.extra.items():
            keys.append(key)
            args += [value, ttl]
        return bool(self._commit(keys=keys, args=args))

    def index_table(self, table_id: str, created_at: float) -> None:
        """Add a table to the lobby."""
        self.client.zadd(LOBBY_KEY, {table_id: created_at})

    def lobby_page(self, after: float | None, limit: int) -> list[tuple[str, float]]:
        """Up to `limit` (table id, created_at), newest first, older than `after`."""
        top = f"({after!r}" if after is not None else "+inf"
        rows = cast(
            list[tuple[str, float]],
            self.client.zrevrangebyscore(
                LOBBY_KEY, top, "-inf", start=0, num=limit, withscores=True
            ),
        )
        return [(str(table_id), float(score)) for table_id, score in rows]

    def load_many(self, table_ids: Sequence[str]) -> list[TableRecord | None]:
        """Several tables at once (one pipeline; each key may sit on its own slot)."""
        pipe = self.client.pipeline(transaction=False)
        for table_id in table_ids:
            pipe.hmget(table_key(table_id), ["state", "version", "seq"])
        records: list[TableRecord | None] = []
        replies = cast(list[list[Any]], pipe.execute())
        for table_id, values in zip(table_ids, replies, strict=True):
            if values[0] is None:
                records.append(None)
            else:
                records.append(
                    TableRecord(
                        table_id, json.loads(values[0]), int(values[1]), int(values[2] or 0)
                    )
                )
        return records

    def schedule(self, table_id: str, deadline: float | None) -> None:
        """Tell the clock when the table next needs it (None: never)."""
        if deadline is None:
            self.client.zrem(DEADLINES_KEY, table_id)
        else:
            self.client.zadd(DEADLINES_KEY, {table_id: deadline})

    def due(self, now: float, limit: int = 100) -> list[str]:
        """Tables whose deadline has passed."""
        rows = self.client.zrangebyscore(DEADLINES_KEY, "-inf", now, start=0, num=limit)
        return [str(table_id) for table_id in rows]

    def all_tables(self) -> list[str]:
        """Every table id in the lobby."""
        return [str(table_id) for table_id in self.client.zrange(LOBBY_KEY, 0, -1)]

    def events_after(self, table_id: str, after: int, block_ms: int | None) -> list[dict[str, Any]]:
        """Events with id > after; with block_ms, wait up to that long for the first one."""
        key = events_key(table_id)
        if block_ms is None:
            entries = cast(
                list[tuple[str, dict[str, str]]], self.client.xrange(key, f"({after}-0", "+")
            )
            return [json.loads(fields["event"]) for _, fields in entries]
        reply = cast(
            list[tuple[str, list[tuple[str, dict[str, str]]]]] | None,
            self.client.xread({key: f"{after}-0"}, block=max(block_ms, 1)),
        )
        events: list[dict[str, Any]] = []
        for _stream, stream_entries in reply or []:
            events += [json.loads(fields["event"]) for _, fields in stream_entries]
        return events

    def events_between(self, table_id: str, first: int, last: int) -> list[dict[str, Any]]:
        """Events with first <= id <= last."""
        entries = cast(
            list[tuple[str, dict[str, str]]],
            self.client.xrange(events_key(table_id), f"{first}-0", f"{last}-0"),
        )
        return [json.loads(fields["event"]) for _, fields in entries]

    def player_for_token(self, table_id: str, token: str) -> dict[str, Any] | None:
        """The player a seat token belongs to ({"player": id, "seat": n}), or None."""
        raw = self.client.hget(tokens_key(table_id), token_digest(token))
        return None if raw is None else dict(json.loads(raw))

    def hand(self, table_id: str, hand_number: int) -> dict[str, Any] | None:
        """A finished deal's history."""
        raw = self.client.get(hand_key(table_id, hand_number))
        return None if raw is None else dict(json.loads(raw))

    def get_json(self, key: str) -> dict[str, Any] | None:
        """A JSON value (idempotency records)."""
        raw = self.client.get(key)
        return None if raw is None else dict(json.loads(raw))

    def claim(self, key: str, value: Mapping[str, Any], ttl: int) -> bool:
        """Set a JSON value unless the key exists; True if this call set it."""
        return bool(self.client.set(key, json.dumps(value), nx=True, ex=ttl))

    def put_json(self, key: str, value: Mapping[str, Any], ttl: int) -> None:
        """Set a JSON value with a lifetime."""
        self.client.set(key, json.dumps(value), ex=ttl)

    def delete(self, keys: Iterable[str]) -> None:
        """Delete keys (one by one: they may sit on different slots)."""
        for key in keys:
            self.client.delete(key)


def connect(url: str, cluster: bool) -> RedisClient:
    """A client for `url` (redis://, rediss:// for TLS; a cluster with `cluster`)."""
    if cluster:
        url = url.replace("redis+cluster://", "redis://", 1)
        return redis.cluster.RedisCluster.from_url(
            url, decode_responses=True, socket_timeout=40, socket_connect_timeout=5
        )
    return redis.Redis.from_url(
        url,
        decode_responses=True,
        socket_timeout=40,
        socket_connect_timeout=5,
        health_check_interval=30,
        max_connections=256,
    )
