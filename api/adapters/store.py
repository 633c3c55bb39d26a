"""Tables in Redis: atomic compare-and-set of a table, its events, tokens and records.

Every key of a table carries the table id as a hash tag (`{id}`), so a table lives on
one Redis Cluster slot and one Lua script can change all of its keys at once:

    table:{id}            hash: state (JSON), version, stamp (random, per commit), seq
                          (last event id), deadline (as scheduled), first_event /
                          first_hand (oldest kept), closed
    table:{id}:events     stream of events; entry ids are `<seq>-0`, so seq is the cursor
    table:{id}:tokens     hash: sha256(token) -> player JSON; "player:<id>" -> sha256
    table:{id}:hand:<n>   hand history of deal n, written as JSON when the deal ends and
                          in compact form, holding its events, once the next one ended
                          (`api.adapters.packed`, `api.service.packing`)
    table:{id}:idem:<key> JSON idempotency record (expires)
    table:{id}:closed     JSON closing record of a closed table (expires)
    table:{id}:ledger     hash: the table's transfers; table:{id}:outbox, its cash-outs
                          not yet relayed (api.adapters.wallets)

two keys shared by all tables, and the lobby's shards (`api.adapters.lobby`):

    tables      sorted set: table id by creation time (every open table: the clock's
                sweep walks it, and a cursor of the lobby's former order reads it)
    deadlines   sorted set: table id by its next deadline (the clock's work list; a
                table a clock claimed, by the end of that clock's hold)
    tables:packing  sorted set: table id by when it has a finished deal to pack (the
                packer's work list, claimed as `deadlines` is)

A change is computed in Python from the state read, then written by `commit`, one Lua
script that writes only if the version is still the one read (optimistic concurrency):
a lost race changes nothing and the caller recomputes from the new state. A move costs
two round trips: `read` (table, seat token and idempotency record in one pipeline, all
on the table's slot) and `commit`; one, the commit, when the gateway process made the
table's last change itself and computes from that (`api.adapters.warm`). The version and a
random stamp that each commit writes are both compared, so a Redis that lost writes
and brought a table back to a version it had before is not taken for the same table.
On a single Redis the commit also schedules the table in `deadlines` when its deadline
changed; on a cluster that key sits on another slot, so the schedule is one more round
trip, sent only when the script reports that the deadline changed.

Retention: when a deal ends, the commit keeps the hand histories of the last
`history_deals` deals and trims the events stream to the first event of the oldest
kept deal (XTRIM MINID), recording the oldest kept event and hand in the table hash.
The commit that ends a deal notes it (`ended`) and, on a single Redis, puts the table
in `tables:packing` (on a cluster, a round trip before the commit does). The packer
(`api.service.packing`, run by the clock) then packs the histories of the deals before
the newest: each written in compact form with every event since the last packed one,
which leave the stream (`pack`); the table hash notes the last packed event and deal
(`packed`, `packed_hand`). Reads of events older than the stream's first find them in
the packed histories (`events_after`).
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, NotRequired, TypedDict, cast

import redis
import redis.cluster
import redis.sentinel
from redis.client import NEVER_DECODE
from redis.commands.core import Script

from api import jsonio
from api.adapters import packed
from api.adapters.batching import Command, CommandBatcher, send_now
from api.adapters.fanout import EventHub
from api.adapters.lobby import SHARDS, LobbyEntry, LobbyIndex, rows_key, shard_key
from api.adapters.replication import Replication, acknowledging
from api.games.events import Event
from api.games.state import Flow, TableState
from api.jsonio import JsonObject

RedisClient = redis.Redis | redis.cluster.RedisCluster


def lua_script(name: str) -> str:
    """The text of the Lua script `name` (under lua/, shipped with the package)."""
    return (Path(__file__).parent / "lua" / name).read_text(encoding="utf-8")


# What a failing or unreachable store raises (answered as 503 store_unavailable; a write
# not confirmed by enough replicas, `replication.NotReplicated`, as 503 not_replicated).
STORE_ERRORS: tuple[type[Exception], ...] = (
    redis.RedisError,
    redis.exceptions.RedisClusterException,
)
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
    """An idempotency record: per table, or kept apart from any table under scope
    "create" (a table's creation) or "quick-seat"."""
    digest = hashlib.sha256(key.encode()).hexdigest()
    if scope in ("create", "quick-seat"):
        return f"idem:{{{scope}:{digest[:4]}}}:{digest}"
    return f"table:{{{scope}}}:idem:{digest}"


def closed_key(table_id: str) -> str:
    """The closing record of a closed table."""
    return f"table:{{{table_id}}}:closed"


def token_digest(token: str) -> str:
    """What is stored of a seat token: its SHA-256."""
    return hashlib.sha256(token.encode()).hexdigest()


class TokenEntry(TypedDict):
    """What a seat token's digest names in `table:{id}:tokens`: its player and seat."""

    player: int
    seat: int


class ReplayRecord(TypedDict):
    """An Idempotency-Key's record: the request's fingerprint and, once answered, the
    answer (a seat token in it sealed under the key); `pending` while the first request
    with the key runs."""

    fingerprint: str
    pending: NotRequired[bool]
    status: NotRequired[int]
    headers: NotRequired[dict[str, str]]
    body: NotRequired[JsonObject]
    sealed_token: NotRequired[str]


class ShownHand(TypedDict):
    """A hand shown at a finished deal's showdown, with its rank."""

    cards: list[str] | None
    strength: int
    category: str
    description: str


class ShowdownRecord(TypedDict):
    """A finished deal's showdown: why it came, and the hands shown."""

    reason: str | None
    hands: dict[str, ShownHand]


class Sealed(TypedDict):
    """What only the server reads of a finished deal: its deck, secret and reshuffles."""

    deck: list[str]
    salt: str
    game: str
    reshuffles: list[list[str]]


class HandRecord(TypedDict):
    """A finished deal's hand history as `table:{id}:hand:<n>` keeps it (its events are
    the table's, from `first_event` to `last_event`)."""

    table_id: str
    hand_number: int
    game_number: int
    dealer: int
    outcome: str | None
    showdown: ShowdownRecord | None
    pot_flow: list[Flow]
    wild_card: str | None
    sealed: NotRequired[Sealed]  # none in a deal finished before proofs opened card by card
    first_event: int
    last_event: int


@dataclass
class TableRecord:
    """A table as read from Redis: its state, version and last event id.

    `first_event` and `first_hand` are the oldest event and hand history still kept;
    `scheduled` is the deadline the table was last scheduled at ("" for none, None if
    unknown); `closed` is set once the table was closed; `stamp` is the random value
    its last commit wrote ("" before the first), compared with the version.
    """

    table_id: str
    state: TableState
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
    player: TokenEntry | None = None
    replay: ReplayRecord | None = None
    # every seat token's entry, by digest, when the read asked for them all
    players: dict[str, TokenEntry] = field(default_factory=dict)


@dataclass
class Trim:
    """Keep hands from `first_hand` on: their events too; delete the listed hands."""

    first_hand: int
    drop_hands: list[int] = field(default_factory=list)


@dataclass
class Pack:
    """Replace deal `hand`'s history by its compact form `value`, which holds events
    `first` to `last`: they leave the stream."""

    hand: int
    value: bytes
    first: int
    last: int


@dataclass
class DealCopies:
    """The copies of a finished deal that commit.lua makes for its players from the
    table's stream (the deal's events `first` to `last`): `head` is a copy's JSON after
    its players' ids up to its events, `players` each player's account and ids (JSON).
    With `outbox`, they are written as notes to the table's recall outbox (`keys`, its
    one key; due at `due`); else kept in the players' keys (`keys`, two a player: their
    index of `indexed` deals and their `kept` newest copies)."""

    member: str
    at: float
    first: int
    last: int
    head: str
    players: list[tuple[str, str]]
    keys: list[str]
    outbox: bool
    kept: int
    indexed: int
    due: float = 0.0


@dataclass
class Close:
    """Close the table: its keys expire after `grace` seconds, these hands go now (or,
    with `keep`, these hands and the events expire after `keep` seconds)."""

    grace: int
    closed_at: float
    drop_hands: list[int] = field(default_factory=list)
    keep: int = 0


@dataclass
class Commit:
    """Everything one change writes, atomically, if the version and stamp still match."""

    record: TableRecord
    state: TableState
    events: list[Event] = field(default_factory=list)
    token_sets: dict[str, str] = field(default_factory=dict)
    token_deletes: list[str] = field(default_factory=list)
    extra: dict[str, tuple[str, int]] = field(default_factory=dict)
    deadline: float | None = None
    # the copies of the deal the change finished, for its players' recall
    copies: DealCopies | None = None
    # the deal the change finished, and when its table's packing is due
    ended: tuple[int, float] | None = None
    trim: Trim | None = None
    close: Close | None = None
    stamp: str = field(default_factory=lambda: secrets.token_hex(8))
    # one of the `extra` keys that must not exist yet (the move's idempotency record,
    # when it was not read first): the commit fails, writing nothing, if it does
    absent: str | None = None
    # (key, field, value): entries of the table's ledger and outbox (api.adapters.wallets)
    hsets: list[tuple[str, str, str]] = field(default_factory=list)
    # the transfers the commit accepts are void after this time (Redis's clock): a
    # commit that would land later writes nothing and raises TransferExpired
    land_before: float | None = None
    # the table's place in the lobby after the change (None: left as it is)
    listing: LobbyEntry | None = None
    # the notes the commit wrote to the table's recall outbox, by field (a cluster's)
    notes: dict[str, str] = field(default_factory=dict)

    @cached_property
    def state_bytes(self) -> bytes:
        """The state as written, encoded once (api.adapters.warm keeps these same bytes)."""
        return jsonio.dumps_bytes(self.state)


class TransferExpired(Exception):  # noqa: N818 - a condition, like StopIteration
    """A commit came after the time its transfers had to land by: nothing was written."""


def deadline_field(deadline: float | None) -> str:
    """A deadline as the table hash keeps it ("" for none)."""
    return "" if deadline is None else repr(float(deadline))


def raw_command(client: Any, *args: Any) -> Any:
    """Send `args` with `client` (a client or a pipeline), its reply left as bytes (a
    packed history is not UTF-8)."""
    return client.execute_command(*args, **{NEVER_DECODE: []})


# the stream's events the packer reads of a table at most in its first round trip
STREAM_READ = 1000
# sorted set: table id by when it has a finished deal to pack (`api.service.packing`)
PACKING_KEY = "tables:packing"


def _entry_id(entry_id: str | bytes) -> int:
    """An event's id, from its stream entry's id ("<id>-0")."""
    text = entry_id.decode() if isinstance(entry_id, bytes) else entry_id
    return int(text.split("-")[0])


def stream_entries(entries: Any) -> list[tuple[int, bytes]]:
    """XRANGE's entries read as bytes: (event id, its JSON)."""
    rows = cast(list[tuple[bytes, dict[bytes, bytes]]], entries or [])
    return [(_entry_id(entry_id), fields[b"event"]) for entry_id, fields in rows]


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
        replication: Replication | None = None,
        hub: EventHub | None = None,
    ) -> None:
        """Use `client` (a Redis or RedisCluster client with decode_responses=True).

        `waiting`, a client of the same Redis with a pool of its own, serves the reads
        that wait for events (`events_after` with a block), made once per watched table
        for the whole process by `hub` (by default a hub of its own over `waiting`,
        itself by default `client`: `api.adapters.fanout`).
        `batcher` (`api.adapters.batching`, over `client`) sends the commits and the reads of
        moves; without one they are sent at once. `replication` says how many replicas
        `client`'s connections wait for after a write (`api.adapters.replication`).
        """
        self.client = client
        self.replication = replication or Replication()
        self.waiting = client if waiting is None else waiting
        self.hub = hub or EventHub(client, self.waiting)
        self.cluster = isinstance(client, redis.cluster.RedisCluster)
        self._commit = client.register_script(_COMMIT)
        self._reschedule = client.register_script(_RESCHEDULE)
        self._claim = client.register_script(_CLAIM)
        self._batcher = batcher
        self.lobby = LobbyIndex(client)

    def send(self, commands: Sequence[Command]) -> list[Any]:
        """Replies to `commands`, an error reply as its exception: batched with other
        requests' commands in a gevent worker (`api.adapters.batching`), else sent at once."""
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
        for a caller that keeps them (`api.adapters.warm`).
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
                name: jsonio.loads(value)
                for name, value in cast(dict[str, str], replies[position]).items()
                if not name.startswith("player:")
            }
            if token is not None:
                read.player = read.players.get(token_digest(token))
            position += 1
        elif token is not None:
            raw = replies[position]
            read.player = None if raw is None else jsonio.loads(raw)
            position += 1
        if replay_key is not None and replies[position] is not None:
            read.replay = jsonio.loads(replies[position])
        return read

    def commit(self, change: Commit) -> bool:
        """Write the change if nobody changed the table since it was read; False if lost.

        On a cluster the schedule, the table's lobby shard (and a closed table's entry
        among all tables) are written after the script, and only when they changed.
        """
        keys, args = _commit_arguments(change, self.cluster)
        reply = self._run(self._commit, keys, args)
        if isinstance(reply, list):  # notes written to the recall outbox
            done = int(reply[0])
            change.notes = dict(zip(reply[1::2], reply[2::2], strict=True))
        else:
            done = int(reply)
        if done == 3:
            raise TransferExpired()
        if not done:
            return False
        table_id = change.record.table_id
        if self.cluster and (done & 2 or change.close is not None):
            self.schedule(table_id, change.deadline)
        if self.cluster and done & 4 and change.listing is not None:
            self.lobby.write(table_id, change.listing)
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

    def lobby_places(
        self, table_ids: Sequence[str]
    ) -> tuple[list[str | None], dict[str, dict[str, str | None]]]:
        """Per table, the place in the lobby its last commit gave it (`LobbyEntry.place`;
        None when no commit gave it one), and per shard, the member each table has
        there (None: not listed): one pipeline."""
        if not table_ids:
            return [], {shard: {} for shard in SHARDS}
        pipe = self.client.pipeline(transaction=False)
        for table_id in table_ids:
            pipe.hget(table_key(table_id), "listing")
        for shard in SHARDS:
            pipe.hmget(rows_key(shard), list(table_ids))
        replies = pipe.execute()
        places = cast(list[str | None], replies[: len(table_ids)])
        listed = {
            shard: dict(zip(table_ids, cast(list[str | None], members), strict=True))
            for shard, members in zip(SHARDS, replies[len(table_ids) :], strict=True)
        }
        return places, listed

    def place_tables(self, places: Mapping[str, str]) -> None:
        """Record each table's place in the lobby where no commit recorded one yet (a
        commit that records one meanwhile is newer, and stays)."""
        if places:
            pipe = self.client.pipeline(transaction=False)
            for table_id, place in places.items():
                pipe.hsetnx(table_key(table_id), "listing", place)
            pipe.execute()

    def forget(self, table_id: str) -> None:
        """Remove a table that no longer exists from the lobby and the clock's list."""
        self.client.zrem(DEADLINES_KEY, table_id)
        self.lobby.forget(table_id)
        self.client.zrem(LOBBY_KEY, table_id)

    def events_after(self, table_id: str, after: int, block_ms: int | None) -> list[Event]:
        """Events with id > after, from the stream and, for older ones, the packed
        histories; with block_ms, wait up to that long for the first one (through the
        process's hub: one read per table, however many wait on it)."""
        key = events_key(table_id)
        if block_ms is not None:
            kept = self.hub.wait(key, after, max(block_ms, 1) / 1000)
            if kept is not None:
                events: list[Event] = [jsonio.loads(event) for event in kept]
                if not events or int(events[-1]["id"]) == after + len(events):
                    return events
                return self.events_log(table_id, after)
        entries = cast(
            list[tuple[str, dict[str, str]]], self.client.xrange(key, f"({after}-0", "+")
        )
        if entries and _entry_id(entries[-1][0]) != after + len(entries):
            # ids have no gaps: the missing ones are packed (or trimmed)
            return self.events_log(table_id, after)
        return [jsonio.loads(fields["event"]) for _, fields in entries]

    def events_log(self, table_id: str, after: int = 0, until: int | None = None) -> list[Event]:
        """Every kept event with after < id <= until (None: the last), in order: the
        packed histories' and the stream's (three or four round trips, however many)."""
        pipe = self.client.pipeline(transaction=False)
        pipe.hmget(table_key(table_id), ["first_event", "first_hand", "packed", "packed_hand"])
        raw_command(pipe, "XRANGE", events_key(table_id), f"({after}-0", "+")
        fields, entries = pipe.execute()
        first_event, first_hand, last_packed, packed_hand = (int(v or 0) for v in fields)
        found: dict[int, bytes] = {}
        if after < last_packed:
            found = _packed_events(
                self.client, table_id, after, until, max(first_hand, 1), packed_hand
            )
        for entry_id, values in cast(list[tuple[bytes, dict[bytes, bytes]]], entries):
            found[_entry_id(entry_id)] = values[b"event"]
        return [
            jsonio.loads(found[number])
            for number in sorted(found)
            if after < number <= (until or number) and number >= first_event
        ]

    def first_event_after(self, table_id: str, after: int) -> int | None:
        """The id of the first kept event after `after`, or None."""
        entries = cast(
            list[tuple[str, dict[str, str]]],
            self.client.xrange(events_key(table_id), f"({after}-0", "+", count=1),
        )
        first = _entry_id(entries[0][0]) if entries else None
        if first is not None and first > after + 1:
            fields = self.client.hmget(table_key(table_id), ["first_event", "packed"])
            oldest, last_packed = (int(v or 0) for v in cast(list[str | None], fields))
            if max(after + 1, oldest) <= last_packed:
                return max(after + 1, oldest)
        return first

    def events_between(self, table_id: str, first: int, last: int) -> list[Event]:
        """Events with first <= id <= last."""
        entries = cast(
            list[tuple[str, dict[str, str]]],
            self.client.xrange(events_key(table_id), f"{first}-0", f"{last}-0"),
        )
        if len(entries) < last - first + 1:
            # some are packed (or trimmed)
            return self.events_log(table_id, first - 1, last)
        return [jsonio.loads(fields["event"]) for _, fields in entries]

    def point(self, pointers: Sequence[tuple[str, str, float]]) -> None:
        """Point sweepers' sets at a table: each (set, table id, due), never earlier than
        it was pointed already; one round trip (a cluster's commit ending a deal sends it
        first, since those sets sit on other slots than the table)."""
        pipe = self.client.pipeline(transaction=False)
        for key, table_id, due in pointers:
            pipe.zadd(key, {table_id: due}, gt=True)
        pipe.execute()

    def raw_events(self, table_id: str, first: int, last: int) -> list[tuple[int, bytes]]:
        """The stream's events (id, JSON) with first <= id <= last."""
        entries = raw_command(
            self.client, "XRANGE", events_key(table_id), f"{first}-0", f"{last}-0"
        )
        return stream_entries(entries)

    def player_for_token(self, table_id: str, token: str) -> TokenEntry | None:
        """The player a seat token belongs to ({"player": id, "seat": n}), or None."""
        raw = self.client.hget(tokens_key(table_id), token_digest(token))
        return None if raw is None else cast(TokenEntry, jsonio.loads(raw))

    def hand(self, table_id: str, hand_number: int) -> HandRecord | None:
        """A finished deal's history."""
        return self.hand_and_events(table_id, hand_number)[0]

    def hand_and_events(
        self, table_id: str, hand_number: int
    ) -> tuple[HandRecord | None, list[Event] | None]:
        """A finished deal's history and, when it is packed, its events (None: they are
        read from the stream, `events_between`)."""
        return _hand_of(raw_command(self.client, "GET", hand_key(table_id, hand_number)))

    def get_json(self, key: str) -> JsonObject | None:
        """A JSON object (a closing record)."""
        raw = self.client.get(key)
        return None if raw is None else cast(JsonObject, jsonio.loads(raw))

    def replay_record(self, key: str) -> ReplayRecord | None:
        """An Idempotency-Key's record kept apart from a table (a creation's)."""
        raw = self.client.get(key)
        return None if raw is None else cast(ReplayRecord, jsonio.loads(raw))

    def claim(self, key: str, value: Mapping[str, object], ttl: int) -> bool:
        """Set a JSON value unless the key exists; True if this call set it."""
        return bool(self.client.set(key, jsonio.dumps(value), nx=True, ex=ttl))

    def put_json(self, key: str, value: Mapping[str, object], ttl: int) -> None:
        """Set a JSON value with a lifetime."""
        self.client.set(key, jsonio.dumps(value), ex=ttl)

    def confirm(self, key: str, ttl: int) -> None:
        """Before an answer kept under `key` (an Idempotency-Key's record) is given again:
        once writes wait for replicas, renew its lifetime, a write whose WAIT holds until
        a replica has everything before it, the change the answer tells of included
        (NotReplicated if none has it yet). Nothing to do when writes wait for none."""
        if self.replication.waits:
            self.client.expire(key, ttl)

    def delete(self, keys: Iterable[str]) -> None:
        """Delete keys (one by one: they may sit on different slots)."""
        for key in keys:
            self.client.delete(key)


# packed histories whose headers a read of older events looks at first, newest first
_HEADERS_PAGE = 16


def _headers(client: RedisClient, table_id: str, numbers: Sequence[int]) -> list[Any]:
    """The first bytes (the header) of each of these deals' histories: one pipeline."""
    pipe = client.pipeline(transaction=False)
    for number in numbers:
        raw_command(pipe, "GETRANGE", hand_key(table_id, number), 0, 63)
    return cast(list[Any], pipe.execute())


def _packed_events(
    client: RedisClient, table_id: str, after: int, until: int | None, first: int, last: int
) -> dict[int, bytes]:
    """The events with after < id <= until (None: any) that the packed histories of
    deals `first` to `last` hold, by id: their headers first (the newest
    `_HEADERS_PAGE`, then, if older ones may hold some, the rest), then the records."""
    numbers = list(range(last, first - 1, -1))
    heads = _headers(client, table_id, numbers[:_HEADERS_PAGE])
    oldest = packed.header_of(heads[-1] or b"") if heads else None
    if len(numbers) > _HEADERS_PAGE and (oldest is None or oldest[0] > after + 1):
        heads += _headers(client, table_id, numbers[_HEADERS_PAGE:])
    wanted = []
    for number, head in zip(numbers, heads, strict=False):
        held = packed.header_of(head or b"")
        if held is not None and held[1] > after and (until is None or held[0] <= until):
            wanted.append(number)
    pipe = client.pipeline(transaction=False)
    for number in wanted:
        raw_command(pipe, "GET", hand_key(table_id, number))
    found: dict[int, bytes] = {}
    for raw in pipe.execute():
        if raw is not None and packed.is_packed(raw):
            holder = packed.unpack(raw)
            found.update(enumerate(holder.events, start=holder.first))
    return found


def _hand_of(raw: bytes | None) -> tuple[HandRecord | None, list[Event] | None]:
    """A stored hand history and, when it is packed, its own events."""
    if raw is None:
        return None, None
    if not packed.is_packed(raw):
        return cast(HandRecord, jsonio.loads(raw)), None
    held = packed.unpack(raw)
    events = [
        jsonio.loads(event)
        for number, event in enumerate(held.events, start=held.first)
        if number >= held.first_event
    ]
    return cast(HandRecord, jsonio.loads(held.record)), events


def _commit_arguments(change: Commit, cluster: bool) -> tuple[list[str], list[Any]]:
    """The keys and arguments of commit.lua for `change`, in the order its header says."""
    record = change.record
    table_id = record.table_id
    keys = [table_key(table_id), events_key(table_id), tokens_key(table_id)]
    args: list[Any] = [
        record.version,
        record.version + 1,
        change.state_bytes,
        change.events[-1]["id"] if change.events else record.seq,
        deadline_field(change.deadline),
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
    _retention_arguments(change, cluster, keys, args)
    _index_arguments(change, cluster, keys, args)
    args.append(len(change.hsets))
    for key, name, value in change.hsets:
        keys.append(key)
        args += [name, value]
    args.append("" if change.land_before is None else repr(change.land_before))
    return keys, args


def _retention_arguments(change: Commit, cluster: bool, keys: list[str], args: list[Any]) -> None:
    """commit.lua's copies, deal end, trim and close, with the keys they change."""
    table_id = change.record.table_id
    copies = change.copies
    if copies is None:
        args.append(0)
    else:
        args += [len(copies.players), "1" if copies.outbox else "0", copies.first, copies.last]
        args += [copies.member, repr(copies.at), repr(copies.due), copies.kept, copies.indexed]
        args.append(copies.head)
        for account, ids in copies.players:
            args += [account, ids]
        keys += copies.keys
    if change.ended is None:
        args += ["", "", ""]
    elif cluster:
        args += [change.ended[0], "", ""]
    else:
        args += [change.ended[0], repr(change.ended[1]), table_id]
        keys.append(PACKING_KEY)
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
        args += [1 + len(close.drop_hands), close.grace, repr(close.closed_at), close.keep]
        keys += [hand_key(table_id, number) for number in close.drop_hands]


def _index_arguments(change: Commit, cluster: bool, keys: list[str], args: list[Any]) -> None:
    """commit.lua's schedule and lobby operations; none on a cluster, where those keys sit
    on other slots (`TableStore.commit` writes them after the script)."""
    table_id = change.record.table_id
    # the script compares the deadline with the one stored, so a record that is
    # not fresh from Redis (api.adapters.warm) schedules right too
    if cluster:
        args.append("none")
    elif change.close is not None:
        args += ["del", table_id]
        keys.append(DEADLINES_KEY)
    else:
        args += ["sync", table_id]
        keys.append(DEADLINES_KEY)
    if cluster or change.close is None:
        args.append("none")
    else:
        args += ["del", table_id]
        keys.append(LOBBY_KEY)
    listing = change.listing
    if listing is None:
        args.append("none")
    elif cluster:
        args += ["note", listing.place, listing.member]
    else:
        args += ["list", listing.place, listing.member, table_id]
        keys += [shard_key(listing.shard), rows_key(listing.shard)]


# A move holds a connection for a round trip; the long polls and event streams of a
# process wait on its hub (`api.adapters.fanout`), whose reader holds one connection
# blocked in XREAD over every table they watch (on a Cluster, one a table), from a pool
# of its own (`TableStore(client, waiting)`), so it never waits behind moves; a second
# serves while a stopping reader gives its connection back. Nothing but a round trip
# holds a command connection, so a few dozen serve a worker's thousand requests (a burst
# waits its turn, POOL_WAIT_SECONDS at most), and Redis's clients stay a few per process.
COMMAND_CONNECTIONS = 32
WAITING_CONNECTIONS = 4
POOL_WAIT_SECONDS = 20


def connect(
    url: str,
    cluster: bool,
    max_connections: int = COMMAND_CONNECTIONS,
    replication: Replication | None = None,
) -> RedisClient:
    """A client for `url`: redis:// (rediss:// for TLS), a cluster with `cluster`
    (redis+cluster://), or the primary a Sentinel names (redis+sentinel://).

    `max_connections` bounds the pool of a single Redis, and a command finding them all
    in use waits for one; a cluster client keeps a pool per node, unbounded. Its
    connections wait for `replication.replicas` replicas after each write.
    """
    replication = replication or Replication()
    if url.startswith("redis+sentinel://"):
        return sentinel_primary(url, replication)
    base = redis.SSLConnection if url.startswith(("rediss://", "rediss+")) else redis.Connection
    connection_class = acknowledging(base, replication)
    if cluster:
        url = url.replace("redis+cluster://", "redis://", 1).replace(
            "rediss+cluster://", "rediss://", 1
        )
        return redis.cluster.RedisCluster.from_url(
            url,
            decode_responses=True,
            socket_timeout=40,
            socket_connect_timeout=5,
            connection_class=connection_class,
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
        connection_class=connection_class,
    )
    return redis.Redis(connection_pool=pool)


def sentinel_primary(url: str, replication: Replication) -> redis.Redis:
    """The primary that Sentinels name, for a URL
    `redis+sentinel://[:password@]host:port[,host:port...]/service[/db]`: the client
    finds the primary through the Sentinels again after a failover."""
    rest = url[len("redis+sentinel://") :]
    credentials, _, rest = rest.rpartition("@")
    hosts, _, path = rest.partition("/")
    service, _, database = path.partition("/")
    if not hosts or not service:
        raise ValueError("a Sentinel URL names its Sentinels and its service")
    sentinels = []
    for host in hosts.split(","):
        name, _, port = host.rpartition(":")
        sentinels.append((name or host, int(port or 26379)))
    password = credentials.partition(":")[2] or None
    # redis-py's Sentinel is untyped: its primary is a plain redis.Redis
    manager = redis.sentinel.Sentinel(  # type: ignore[no-untyped-call]
        sentinels, socket_timeout=5, socket_connect_timeout=5
    )
    primary: redis.Redis = manager.master_for(  # type: ignore[no-untyped-call]
        service,
        db=int(database or 0),
        password=password,
        decode_responses=True,
        socket_timeout=40,
        socket_connect_timeout=5,
        health_check_interval=30,
        connection_class=acknowledging(redis.sentinel.SentinelManagedConnection, replication),
    )
    return primary
