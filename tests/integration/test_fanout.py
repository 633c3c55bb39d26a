"""One read per watched table per process (api/adapters/fanout.py), on a real Redis, a
real Redis Cluster and the gateway as deployed (gunicorn, gevent workers): however many
wait on a table, Redis holds one blocked read for them; each watcher gets every event
after its cursor once, in order, through a reader that loses its connection too; a table
nobody watches any more is read no more."""

from __future__ import annotations

import selectors
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from api import jsonio
from api.adapters.fanout import EventHub
from api.adapters.store import TableStore, connect, events_key
from tests.support.play import wait_for
from tests.support.processes import GunicornGateway


def append(
    client: redis.Redis | redis.cluster.RedisCluster, table_id: str, first: int, last: int
) -> None:
    """Events `first`..`last` of a table, each written as a commit writes it."""
    for number in range(first, last + 1):
        event = {"id": number, "type": "turn", "data": {}, "at": 0.0, "hand_number": 1}
        client.xadd(events_key(table_id), {"event": jsonio.dumps(event)}, id=f"{number}-0")


class Watcher:
    """A thread reading a table's events from `after` as a long poll does, until `last`."""

    def __init__(self, store: TableStore, table_id: str, after: int, last: int) -> None:
        self.ids: list[int] = []
        self.cursor = after
        self.last = last
        self.thread = threading.Thread(target=self.run, args=(store, table_id), daemon=True)
        self.thread.start()

    def run(self, store: TableStore, table_id: str) -> None:
        ends = time.monotonic() + 120
        while self.cursor < self.last and time.monotonic() < ends:
            for item in store.events_after(table_id, self.cursor, 2000):
                self.ids.append(int(item["id"]))
                self.cursor = int(item["id"])

    def finished(self) -> list[int]:
        """Every id read, once the thread has read the last."""
        self.thread.join(150)
        return self.ids


def blocked_readers(client: redis.Redis) -> int:
    """Connections Redis holds blocked (in XREAD: nothing else here blocks)."""
    return int(client.info("clients")["blocked_clients"])


def xreads(client: redis.Redis) -> list[str]:
    """The ids of the connections blocked in XREAD now."""
    return [
        str(entry["id"])
        for entry in client.client_list()
        if entry["cmd"] == "xread" and "b" in entry["flags"]
    ]


def watching(store: TableStore, counts: dict[str, int]) -> bool:
    """Whether the hub counts these watchers on these tables (by table id)."""
    watched = store.hub.watched()
    return all(watched.get(events_key(table_id)) == n for table_id, n in counts.items())


@pytest.fixture
def store(redis_url: str) -> Iterator[TableStore]:
    client = connect(redis_url, cluster=False)
    yield TableStore(client)
    client.close()


def test_watchers_of_many_tables_share_one_read(store: TableStore, redis_url: str) -> None:
    tables = ["fan-a", "fan-b", "fan-c"]
    watchers = [Watcher(store, table_id, 0, 5) for table_id in tables for _ in range(10)]
    wait_for(lambda: watching(store, dict.fromkeys(tables, 10)), 30)
    probe = redis.Redis.from_url(redis_url)
    # (a reader an earlier test's watchers left stops within seconds)
    wait_for(lambda: blocked_readers(probe) == 1, 30)
    assert store.hub.readers() == 1
    for table_id in tables:
        append(store.client, table_id, 1, 3)
    for table_id in tables:
        append(store.client, table_id, 4, 5)
    for watcher in watchers:
        assert watcher.finished() == [1, 2, 3, 4, 5]


def test_no_event_missed_or_repeated_when_the_reader_loses_redis(
    store: TableStore, redis_url: str
) -> None:
    probe = redis.Redis.from_url(redis_url, decode_responses=True)
    watchers = [Watcher(store, "fan-lost", 0, 30) for _ in range(8)]
    wait_for(lambda: watching(store, {"fan-lost": 8}), 30)
    append(store.client, "fan-lost", 1, 10)
    for round_start in (11, 21):
        reading = wait_for(lambda: xreads(probe) if len(xreads(probe)) == 1 else None, 30)
        assert probe.client_kill_filter(_id=reading[0]) == 1
        append(store.client, "fan-lost", round_start, round_start + 9)
    for watcher in watchers:
        assert watcher.finished() == list(range(1, 31))


def test_a_watcher_behind_the_kept_events_reads_the_rest_from_redis(redis_url: str) -> None:
    client = connect(redis_url, cluster=False)
    store = TableStore(client, hub=EventHub(client, client, keep=3))
    first = Watcher(store, "fan-kept", 0, 10)
    wait_for(lambda: watching(store, {"fan-kept": 1}), 30)
    append(client, "fan-kept", 1, 10)
    assert first.finished() == list(range(1, 11))
    # 8, 9 and 10 are kept; from 2 the rest comes from the stream, from 8 from memory
    assert [int(item["id"]) for item in store.events_after("fan-kept", 2, 1000)] == list(
        range(3, 11)
    )
    assert [int(item["id"]) for item in store.events_after("fan-kept", 8, 1000)] == [9, 10]
    client.close()


def test_a_table_nobody_watches_is_read_no_more(redis_url: str) -> None:
    client = connect(redis_url, cluster=False)
    store = TableStore(client, hub=EventHub(client, client, block_ms=200, linger=0.2))
    probe = redis.Redis.from_url(redis_url)
    assert store.events_after("fan-idle", 0, 300) == []
    wait_for(lambda: store.hub.readers() == 0, 30)
    assert store.hub.watched() == {}
    wait_for(lambda: blocked_readers(probe) == 0, 30)
    # watched again, the table gets a reader again
    later = Watcher(store, "fan-idle", 0, 2)
    wait_for(lambda: watching(store, {"fan-idle": 1}), 30)
    append(client, "fan-idle", 1, 2)
    assert later.finished() == [1, 2]
    client.close()


def test_a_cluster_reads_each_watched_table_once(redis_cluster: str) -> None:
    client = connect(redis_cluster, cluster=True)
    store = TableStore(client)
    tables = [f"fan-cluster-{n}" for n in range(4)]
    watchers = [Watcher(store, table_id, 0, 4) for table_id in tables for _ in range(5)]
    wait_for(lambda: watching(store, dict.fromkeys(tables, 5)), 30)
    assert store.hub.readers() == len(tables)
    for table_id in tables:
        append(client, table_id, 1, 4)
    for watcher in watchers:
        assert watcher.finished() == [1, 2, 3, 4]
    client.close()


def _streams(port: int, table_id: str, count: int) -> list[socket.socket]:
    """`count` event streams of a table, from 0, opened on the gateway."""
    request = (
        f"GET /v1/tables/{table_id}/events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    ).encode()
    streams = []
    for _ in range(count):
        conn = socket.create_connection(("127.0.0.1", port), timeout=30)
        conn.sendall(request)
        conn.setblocking(False)
        streams.append(conn)
    return streams


def _read_until(streams: list[socket.socket], marker: bytes, seconds: float) -> dict[int, bytes]:
    """What each stream sent until every one has sent `marker` (or `seconds` passed)."""
    received = {conn.fileno(): b"" for conn in streams}
    with selectors.DefaultSelector() as selector:
        for conn in streams:
            selector.register(conn, selectors.EVENT_READ)
        ends = time.monotonic() + seconds
        while time.monotonic() < ends and not all(marker in text for text in received.values()):
            for key, _ in selector.select(0.2):
                readable: socket.socket = key.fileobj  # type: ignore[assignment]
                chunk = readable.recv(65536)
                received[readable.fileno()] += chunk
                if not chunk:
                    selector.unregister(readable)
    return received


@pytest.mark.parametrize("worker_class", ["gevent", "gthread"])
def test_event_streams_of_a_gunicorn_gateway_hold_a_read_per_worker(
    redis_url: str, evaluator_address: str, tmp_path: Path, worker_class: str
) -> None:
    gateway = GunicornGateway(
        redis_url,
        evaluator_address,
        tmp_path / "gateway.log",
        workers=2,
        threads=64,
        GATEWAY_WORKER_CLASS=worker_class,
        STREAM_MAX_SECONDS="120",
    )
    gateway.start()
    probe = redis.Redis.from_url(redis_url)
    try:
        http = gateway.http
        tables = [http.create() for _ in range(3)]
        streams = {table_id: _streams(gateway.port, table_id, 20) for table_id in tables}
        every = [conn for conns in streams.values() for conn in conns]
        first = _read_until(every, b"event: table_created", 60)
        assert all(b"event: table_created" in text for text in first.values())
        # 60 streams over three tables: at most one blocked read per worker (once any
        # reader an earlier test left has stopped)
        wait_for(lambda: 0 < blocked_readers(probe) <= 2, 30)
        for table_id in tables:
            http.sit(table_id, "ann")
        seated = _read_until(every, b"event: seated", 60)
        assert all(b"event: seated" in text for text in seated.values())
        assert blocked_readers(probe) <= 2
        for conn in every:
            conn.close()
        # nobody watches: the readers stop (a gthread worker sees its clients gone at
        # the next keep-alive it writes)
        wait_for(lambda: blocked_readers(probe) == 0, 120)
        # and the waits their clients' going ended left no fault behind
        assert "Traceback" not in (tmp_path / "gateway.log").read_text()
    finally:
        gateway.stop()
