"""One read of each watched table's events per process, fanned out in memory.

Every long poll and event stream of a process waits here (`EventHub.wait`) instead of
holding a Redis connection of its own blocked in XREAD. A reader reads the new events
of every table the process's watchers wait on, keeps each table's latest `keep` events
(as stored: JSON text, decoded again for each watcher, so no two share an object) and
wakes that table's watchers, each of which takes the events after its own cursor; the
service then filters them for its viewer as before. Redis thus serves one read per
new event per process, however many watch.

- On a single Redis (or a Sentinel's primary) one reader per process multiplexes XREAD
  over every watched stream on one connection of its own; a table newly watched wakes
  it with CLIENT UNBLOCK so that its next read includes it.
- On a Cluster a stream's XREAD cannot name keys of other slots: one reader per table.

Cursors are event ids, so nothing is missed or given twice: a reader resumes from the
last id it read (after losing Redis too: it reconnects, backing off up to 2 s), and a
watcher whose cursor is older than the events kept reads the rest itself (`None`: the
store's XRANGE). A table nobody has waited on for `linger` seconds is dropped, and a
reader with no table left stops and closes its connection.

The locks and the readers' threads are the standard library's: in a gevent worker,
patched, they are gevent's (a reader is a greenlet, a waiting request sleeps on an
event of its own, holding no lock); in gthread workers and a single-threaded test client, threads.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

import redis

# events kept per watched table: a watcher this far behind reads the rest from Redis
KEEP_EVENTS = 1000
# a reader's XREAD waits this long at most, then looks again at what is watched
BLOCK_MS = 5000
# seconds a table stays watched after its last watcher left (an event stream's next
# wait, a long poll's next request, comes right after: no read begins again for it)
LINGER_SECONDS = 5.0
# a newly watched table's wake-up is sent again while the reader is between two reads
WAKE_TRIES = 200
WAKE_PAUSE = 0.002
RETRY_FIRST, RETRY_MAX = 0.05, 2.0
# entries one XREAD takes of each stream at most (the rest at the next read)
READ_COUNT = 500

Entries = list[tuple[str, list[tuple[str, str]]]]


class StreamSource(Protocol):
    """Where a reader's XREAD goes: a connection of its own or a Cluster's node."""

    def read(self, streams: dict[str, int], block_ms: int) -> Entries:
        """New entries of `streams` (key -> last id read), as (key, [(id, event JSON)])."""

    def unblock(self) -> bool:
        """Interrupt a read under way; whether one was."""

    def reset(self) -> None:
        """Drop the connection after an error (the next read opens another)."""

    def close(self) -> None:
        """Give the connection back, closed."""


class OwnConnection:
    """XREAD on one connection of `pool`'s, kept by the reader while it runs; CLIENT
    UNBLOCK through `commands` interrupts it."""

    def __init__(self, pool: redis.ConnectionPool, commands: redis.Redis) -> None:
        self._pool = pool
        self._commands = commands
        self._connection: Any = None
        self._client_id: int | None = None

    def read(self, streams: dict[str, int], block_ms: int) -> Entries:
        """See `StreamSource.read`."""
        if self._connection is None:
            self._connection = self._pool.get_connection()
        connection = self._connection
        if self._client_id is None:
            connection.send_command("CLIENT", "ID")
            self._client_id = int(connection.read_response())
        keys = list(streams)
        ids = [f"{streams[key]}-0" for key in keys]
        connection.send_command(
            "XREAD", "COUNT", READ_COUNT, "BLOCK", block_ms, "STREAMS", *keys, *ids
        )
        return entries_of(connection.read_response())

    def unblock(self) -> bool:
        """See `StreamSource.unblock`."""
        client_id = self._client_id
        if client_id is None:
            return False
        try:
            return bool(self._commands.client_unblock(client_id))
        except redis.RedisError:
            return False

    def reset(self) -> None:
        """See `StreamSource.reset`."""
        self._client_id = None
        if self._connection is not None:
            self._connection.disconnect()

    def close(self) -> None:
        """See `StreamSource.close`."""
        self._client_id = None
        if self._connection is not None:
            self._connection.disconnect()
            self._pool.release(self._connection)
            self._connection = None


class ClusterStream:
    """XREAD of one table's stream through a Cluster client (to the node of its slot)."""

    def __init__(self, client: redis.cluster.RedisCluster) -> None:
        self._client = client

    def read(self, streams: dict[str, int], block_ms: int) -> Entries:
        """See `StreamSource.read`."""
        reply = self._client.xread(
            {key: f"{after}-0" for key, after in streams.items()}, count=READ_COUNT, block=block_ms
        )
        return entries_of(reply)

    def unblock(self) -> bool:
        """A Cluster reader reads one table, which it never has to add: nothing to do."""
        return False

    def reset(self) -> None:
        """The Cluster client finds its nodes again by itself."""

    def close(self) -> None:
        """The Cluster client keeps its pools."""


def entries_of(reply: Any) -> Entries:
    """XREAD's reply (RESP2 or RESP3, raw or parsed by redis-py) as (key, [(id, event)])."""
    if not reply:
        return []
    streams = reply.items() if isinstance(reply, dict) else reply
    result: Entries = []
    for key, entries in streams:
        rows: list[tuple[str, str]] = []
        for entry in entries or []:
            entry_id, fields = entry[0], entry[1]
            if isinstance(fields, dict):
                rows.append((str(entry_id), str(fields["event"])))
            else:
                pairs = dict(zip(fields[::2], fields[1::2], strict=True))
                rows.append((str(entry_id), str(pairs["event"])))
        result.append((str(key), rows))
    return result


@dataclass
class Watched:
    """A watched table: what this process read of its stream, and who waits on it."""

    # every event after `floor` up to `cursor` is in `kept`, oldest first
    cursor: int
    floor: int
    kept: deque[tuple[int, str]] = field(default_factory=deque)
    # what wakes each watcher waiting for an event past `cursor`
    waiting: set[threading.Event] = field(default_factory=set)
    watchers: int = 0
    idle_since: float = 0.0


class Reader:
    """One reader's thread: XREAD over its group's watched tables, until none is left."""

    def __init__(self, hub: EventHub, group: str, source: StreamSource) -> None:
        self.hub = hub
        self.group = group
        self.source = source
        # the hub's generation of tables when this reader last looked at them
        self.seen = -1
        self.thread = threading.Thread(target=self.run, name=f"events {group}", daemon=True)

    def run(self) -> None:
        """Read and deliver until the group has no table left."""
        pause = RETRY_FIRST
        try:
            while True:
                streams = self.hub.streams_for(self)
                if streams is None:
                    return
                # Redis lost, or its client closed under the reader: read again, from the
                # same ids, until it answers or nobody watches any more
                try:
                    reply = self.source.read(streams, self.hub.block_ms)
                except Exception:
                    self.source.reset()
                    time.sleep(pause)
                    pause = min(pause * 2, RETRY_MAX)
                    continue
                pause = RETRY_FIRST
                self.hub.deliver(reply)
        finally:
            self.hub.forget(self)
            self.source.close()

    def wake(self, generation: int) -> None:
        """Have the next read include the tables of `generation`: interrupt the read under
        way, or see that the reader has looked at them since."""
        for _ in range(WAKE_TRIES):
            if self.seen >= generation or not self.thread.is_alive():
                return
            if self.source.unblock():
                return
            time.sleep(WAKE_PAUSE)


class EventHub:
    """The process's readers of table streams and their watchers (see the module)."""

    def __init__(
        self,
        client: redis.Redis | redis.cluster.RedisCluster,
        waiting: redis.Redis | redis.cluster.RedisCluster,
        *,
        keep: int = KEEP_EVENTS,
        block_ms: int = BLOCK_MS,
        linger: float = LINGER_SECONDS,
    ) -> None:
        """Read through `waiting` (a single Redis: one connection of its pool per reader;
        a Cluster: its node pools); `client` sends the wake-ups."""
        self._client = client
        self._waiting = waiting
        self.keep = keep
        self.block_ms = block_ms
        self.linger = linger
        self._lock = threading.Lock()
        self._tables: dict[str, Watched] = {}
        self._readers: dict[str, Reader] = {}
        self._generation = 0

    def wait(self, key: str, after: int, timeout: float) -> list[str] | None:
        """The events (JSON) of stream `key` after id `after`, waiting up to `timeout`
        seconds for the first; [] if none came; None if `after` is older than the
        events kept (the caller reads them from Redis)."""
        ends = time.monotonic() + timeout
        watched, wake = self._join(key, after)
        # the wait holds no lock: a greenlet killed while it waits (its client gone,
        # api.http.waiting) leaves every lock as it was
        woken = threading.Event()
        try:
            if wake is not None:
                wake()
            while True:
                with self._lock:
                    if after < watched.floor:
                        return None
                    if watched.cursor > after:
                        return _kept_after(watched.kept, after)
                    woken.clear()
                    watched.waiting.add(woken)
                remaining = ends - time.monotonic()
                if remaining <= 0:
                    return []
                woken.wait(remaining)
        finally:
            with self._lock:
                watched.waiting.discard(woken)
                watched.watchers -= 1
                if watched.watchers == 0:
                    watched.idle_since = time.monotonic()

    def _join(self, key: str, after: int) -> tuple[Watched, Any]:
        """Count a watcher of `key`, watching it from `after` if nobody does; what wakes
        its reader, if it must be told (None otherwise)."""
        start: Reader | None = None
        wake = None
        with self._lock:
            watched = self._tables.get(key)
            if watched is None:
                watched = Watched(after, after)
                self._tables[key] = watched
                self._generation += 1
                group = self._group(key)
                reader = self._readers.get(group)
                if reader is None:
                    start = reader = Reader(self, group, self._source())
                    self._readers[group] = reader
                else:
                    generation = self._generation
                    wake = lambda: reader.wake(generation)  # noqa: E731 - bound now
            watched.watchers += 1
        if start is not None:
            start.thread.start()
        return watched, wake

    def streams_for(self, reader: Reader) -> dict[str, int] | None:
        """The streams `reader` reads next (key -> last id read), lingering tables
        dropped; None when it has none left (it is then no longer this hub's)."""
        now = time.monotonic()
        with self._lock:
            streams: dict[str, int] = {}
            for key, watched in list(self._tables.items()):
                if self._group(key) != reader.group:
                    continue
                if watched.watchers == 0 and now - watched.idle_since >= self.linger:
                    del self._tables[key]
                    continue
                streams[key] = watched.cursor
            reader.seen = self._generation
            if not streams:
                del self._readers[reader.group]
                return None
            return streams

    def forget(self, reader: Reader) -> None:
        """`reader` has stopped: the next watcher of its group starts another."""
        with self._lock:
            if self._readers.get(reader.group) is reader:
                del self._readers[reader.group]

    def deliver(self, reply: Entries) -> None:
        """Keep the events read and wake their tables' watchers."""
        with self._lock:
            for key, entries in reply:
                watched = self._tables.get(key)
                if watched is None:
                    continue
                for entry_id, event in entries:
                    number = int(entry_id.partition("-")[0])
                    if number <= watched.cursor:
                        continue
                    watched.kept.append((number, event))
                    watched.cursor = number
                    if len(watched.kept) > self.keep:
                        watched.floor = watched.kept.popleft()[0]
                for woken in watched.waiting:
                    woken.set()
                watched.waiting.clear()

    def watched(self) -> dict[str, int]:
        """Each watched stream and its watchers now (for the tests and the metrics)."""
        with self._lock:
            return {key: watched.watchers for key, watched in self._tables.items()}

    def readers(self) -> int:
        """How many readers run."""
        with self._lock:
            return len(self._readers)

    def _group(self, key: str) -> str:
        """The reader a stream's key is read by: the one of the process, or its own on a
        Cluster (XREAD names keys of one slot)."""
        return key if isinstance(self._waiting, redis.cluster.RedisCluster) else ""

    def _source(self) -> StreamSource:
        if isinstance(self._waiting, redis.cluster.RedisCluster):
            return ClusterStream(self._waiting)
        commands = cast(redis.Redis, self._client)
        return OwnConnection(self._waiting.connection_pool, commands)


def _kept_after(kept: deque[tuple[int, str]], after: int) -> list[str]:
    """The events of `kept` after id `after`, oldest first (the newest are at its end)."""
    newer: list[str] = []
    for number, event in reversed(kept):
        if number <= after:
            break
        newer.append(event)
    newer.reverse()
    return newer
