"""Packed histories on a real Redis (and a Redis Cluster): a finished deal's history,
packed with its events by the packer once the next deal ended, reads back exactly as it
did before; every event of the table's log stays readable with its id; a store holding
histories written before packing keeps working; packers racing each other and the
table's own commits pack each deal once; a deal's recall copies are kept by the commit
that ends it on a single Redis, and on a cluster survive the death of the process that
committed it.
"""

from __future__ import annotations

import random
import threading
import time
from collections.abc import Iterator
from typing import Any, cast

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api import jsonio
from api.adapters import packed
from api.adapters import store as store_module
from api.adapters.recall import OUTBOX_KEY
from api.adapters.store import TableStore, events_key, hand_key, raw_command, table_key
from api.service.packing import POINT_AHEAD, Packer
from api.service.tables import TableService
from bench.gateway.deals import TABLES, play_table
from tests.integration.test_retention import _close, _gateway
from tests.support.gateway import Gateway
from tests.support.play import wait_for
from tests.support.tables_api import Player

Read = tuple[int, Any, str | None, str | None]


@pytest.fixture
def single(redis_url: str, evaluator_address: str) -> Iterator[Gateway]:
    """A gateway on the session's Redis, without a clock."""
    gateway = _gateway(redis_url, evaluator_address, clock=False)
    yield gateway
    _close(gateway)


@pytest.fixture(scope="module")
def clustered(redis_cluster: str, evaluator_address: str) -> Iterator[Gateway]:
    """A gateway on a Redis Cluster, without a clock."""
    gateway = _gateway(redis_cluster, evaluator_address, clock=False, redis_cluster=True)
    yield gateway
    _close(gateway)


def store_of(gateway: Gateway) -> TableStore:
    service: TableService = gateway.app.extensions["cardroom.service"]
    return service.store


def read(http: Any, path: str, headers: dict[str, str] | None = None) -> Read:
    """What a reader is answered at `path`: status, body, ETag and Cache-Control."""
    answer = http.get(path, headers=headers or {})
    body = answer.get_json() if answer.is_json else answer.get_data(as_text=True)
    return answer.status_code, body, answer.headers.get("ETag"), answer.headers.get("Cache-Control")


def pack(store: TableStore) -> int:
    """What the clock's packer does at a tick, once the tables a cluster's commits
    pointed it at (`POINT_AHEAD`) are due: the deals packed."""
    return Packer(store, lambda: time.time() + POINT_AHEAD + 1).run()


class Reader:
    """Every read of a table's deals and log, made as each deal ends and again later,
    with a packer's run between deals."""

    def __init__(self, http: Any, store: TableStore) -> None:
        self.http = http
        self.store = store
        self.reads: dict[tuple[str, str], Read] = {}
        self.logs: list[list[dict[str, Any]]] = []
        self.packed = 0

    def paths(self, table_id: str, number: int) -> list[str]:
        base = f"/v1/tables/{table_id}"
        return [
            f"{base}/hands/{number}",
            f"{base}/hands/{number}/phh",
            f"{base}/events?after=0",
            f"{base}/events?after={max(0, number * 7 - 5)}",
        ]

    def ended(self, table_id: str, number: int, seats: list[dict[str, str]] | None = None) -> None:
        """Deal `number` ended (its history is still JSON): read it as a spectator and
        as each seat (`seats`, their headers) do."""
        for path in self.paths(table_id, number):
            for headers in [{}, *(seats or [])]:
                key = (path, headers.get("Authorization", ""))
                self.reads[key] = read(self.http, path, headers)
        self.logs.append(cast(list[dict[str, Any]], self.store.events_after(table_id, 0, None)))
        self.packed += pack(self.store)

    def check(self, table_id: str) -> None:
        """Everything reads as it did; the whole log is every event, each with its id."""
        for (path, auth), before in self.reads.items():
            if "/events?" in path:
                continue  # the log grew since: checked as a prefix below
            headers = {"Authorization": auth} if auth else {}
            assert read(self.http, path, headers) == before, path
        log = cast(list[dict[str, Any]], self.store.events_after(table_id, 0, None))
        seq = int(cast(str, self.store.client.hget(table_key(table_id), "seq")))
        assert [event["id"] for event in log] == list(range(1, seq + 1))
        assert self.store.events_log(table_id) == log
        for earlier in self.logs:
            assert log[: len(earlier)] == earlier
        for (path, auth), before in self.reads.items():
            if "/events?" in path:
                headers = {"Authorization": auth} if auth else {}
                status, body, _, _ = read(self.http, path, headers)
                assert status == before[0] == 200
                assert body["events"][: len(before[1]["events"])] == before[1]["events"]


def raw_hand(store: TableStore, table_id: str, number: int) -> bytes | None:
    return cast(bytes | None, raw_command(store.client, "GET", hand_key(table_id, number)))


def assert_packed_but_the_last(store: TableStore, table_id: str) -> None:
    """Every finished deal's history but the newest is packed; the stream holds what
    comes after the last packed event only."""
    last_packed = int(cast(str, store.client.hget(table_key(table_id), "packed") or 0))
    numbers = []
    number = 1
    while raw_hand(store, table_id, number) is not None:
        numbers.append(number)
        number += 1
    assert numbers, "no deal ended"
    for number in numbers[:-1]:
        assert packed.is_packed(cast(bytes, raw_hand(store, table_id, number))), number
    assert not packed.is_packed(cast(bytes, raw_hand(store, table_id, numbers[-1])))
    head = cast(list[tuple[str, Any]], store.client.xrange(events_key(table_id), count=1))
    assert head[0][0] == f"{last_packed + 1}-0"


@settings(max_examples=8, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32), options=st.sampled_from(TABLES), deals=st.integers(2, 6))
def test_packed_deals_of_both_games_read_back_as_they_were(
    single: Gateway, seed: int, options: dict[str, Any], deals: int
) -> None:
    store = store_of(single)
    http = single.app.test_client()
    reader = Reader(http, store)
    table_id = play_table(http, options, deals, random.Random(seed), reader.ended)
    pack(store)
    assert_packed_but_the_last(store, table_id)
    reader.check(table_id)


@pytest.mark.parametrize("options", [TABLES[0], TABLES[2]], ids=["guts", "paiute"])
def test_on_a_cluster_packed_deals_read_back_as_they_were(
    clustered: Gateway, options: dict[str, Any]
) -> None:
    store = store_of(clustered)
    http = clustered.app.test_client()
    reader = Reader(http, store)
    table_id = play_table(http, options, 5, random.Random(3), reader.ended)
    pack(store)
    assert_packed_but_the_last(store, table_id)
    reader.check(table_id)


def test_packers_racing_each_other_and_the_moves_pack_each_deal_once(single: Gateway) -> None:
    store = store_of(single)
    http = single.app.test_client()
    reader = Reader(http, store)
    stop = threading.Event()
    counts: list[int] = []

    def packing() -> None:
        count = 0
        while not stop.is_set():
            count += pack(store)
        counts.append(count)

    packers = [threading.Thread(target=packing) for _ in range(2)]
    for packer in packers:
        packer.start()
    try:
        table_id = play_table(http, TABLES[2], 8, random.Random(11), reader.ended)
    finally:
        stop.set()
        for packer in packers:
            packer.join()
    last = pack(store)
    assert_packed_but_the_last(store, table_id)
    reader.check(table_id)
    deals = int(cast(str, store.client.hget(table_key(table_id), "ended")))
    assert sum(counts) + reader.packed + last == deals - 1
    assert store.client.zscore(store_module.PACKING_KEY, table_id) is None


def test_a_packer_run_goes_page_after_page_while_pages_come_full(single: Gateway) -> None:
    store = store_of(single)
    store.client.delete(store_module.PACKING_KEY)  # what earlier tests left listed
    tables = []
    for _ in range(3):
        table_id = single.create(deal_pause_seconds=0, turn_seconds=60)
        seats = [single.sit(table_id, name) for name in ("ann", "bob")]
        single.act(table_id, seats[0], action="start")
        for _ in range(2):  # the deal that ends deals the next one at once
            for seat in seats:
                answer = single.act(table_id, seat, action="declare", choice="out")
                assert answer.status_code == 200, answer.get_json()
        tables.append(table_id)
    # a page a table: three full pages, then an empty one
    assert Packer(store, lambda: time.time() + POINT_AHEAD + 1).run(limit=1) == 3
    for table_id in tables:
        assert packed.is_packed(cast(bytes, raw_hand(store, table_id, 1)))
        assert not packed.is_packed(cast(bytes, raw_hand(store, table_id, 2)))


def unpacked(store: TableStore, table_id: str) -> None:
    """Put the table's histories and events back as they were kept before packing: each
    history as JSON, every event in the stream."""
    log = store.events_log(table_id)
    client = store.client
    number = 1
    while (raw := raw_hand(store, table_id, number)) is not None:
        if packed.is_packed(raw):
            client.set(hand_key(table_id, number), packed.unpack(raw).record)
        number += 1
    client.delete(events_key(table_id))
    for event in log:
        client.xadd(
            events_key(table_id), {"event": jsonio.dumps_bytes(event)}, id=f"{event['id']}-0"
        )
    client.hdel(table_key(table_id), "packed", "packed_hand")


def play_on(
    gateway: Gateway, table_id: str, seats: list[Player], numbers: range, reader: Reader
) -> None:
    """Deals `numbers` of a Guts table dealing the next deal at once, every seat out."""
    http = gateway.app.test_client()
    for number in numbers:

        def declaring(n: int = number) -> bool:
            view = gateway.table(table_id)
            return bool(view["hand_number"] == n and view["phase"] == "declaring")

        wait_for(declaring, seconds=60)
        for seat in seats:
            answer = gateway.act(table_id, seat, action="declare", choice="out")
            assert answer.status_code == 200, answer.get_json()
        path = f"/v1/tables/{table_id}/hands/{number}"

        def recorded(path: str = path) -> bool:
            return read(http, path)[0] == 200

        wait_for(recorded, seconds=60)
        reader.ended(table_id, number, [seat.auth for seat in seats])


@pytest.mark.parametrize("first_read", [store_module.STREAM_READ, 5], ids=["whole", "long"])
def test_a_store_holding_histories_from_before_packing_keeps_working(
    single: Gateway, first_read: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Histories and a stream as kept before packing: everything reads as it did, the
    table plays on and its histories are packed. A stream longer than the packer's
    first read brings (made so by reading 5 events) keeps its older events, and the
    packed ones leave it one by one."""
    monkeypatch.setattr(store_module, "STREAM_READ", first_read)
    store = store_of(single)
    reader = Reader(single.app.test_client(), store)
    table_id = single.create(deal_pause_seconds=0, turn_seconds=60)
    seats = [single.sit(table_id, name) for name in ("ann", "bob", "cy")]
    single.act(table_id, seats[0], action="start")
    play_on(single, table_id, seats, range(1, 5), reader)
    unpacked(store, table_id)
    assert not any(packed.is_packed(cast(bytes, raw_hand(store, table_id, n))) for n in range(1, 5))
    reader.check(table_id)

    # the table plays on: the packer packs every finished deal but the newest, the older
    # ones too
    play_on(single, table_id, seats, range(5, 9), reader)
    head = cast(list[tuple[str, Any]], store.client.xrange(events_key(table_id), count=1))
    assert (head[0][0] == "1-0") == (first_read == 5)
    kept = [packed.is_packed(cast(bytes, raw_hand(store, table_id, n))) for n in range(1, 9)]
    assert kept == [True] * 7 + [False]
    reader.check(table_id)


def test_on_a_single_redis_the_commit_ending_a_deal_keeps_its_copies(single: Gateway) -> None:
    """The players' keys are on the table's Redis: the commit's script keeps the deal in
    their indexes and copies itself, with no outbox, pointer or delivery after it."""
    gateway = single
    service: TableService = gateway.app.extensions["cardroom.service"]
    recall = service.changes.recall
    assert recall is not None
    ann, bob, cy = gateway.sign_up("ann"), gateway.sign_up("bob"), gateway.sign_up("cy")
    table_id = gateway.create(deal_pause_seconds=0, turn_seconds=60)
    players = [gateway.sit(table_id, "ann", 100, ann), gateway.sit(table_id, "bob", 100, bob)]
    gateway.act(table_id, players[0], action="start")
    gateway.sit(table_id, "cy", 100, cy)  # seated after the deal began: not dealt in
    recall.committed = lambda commit: None  # type: ignore[method-assign]
    for player in players:
        gateway.act(table_id, player, action="declare", choice="out")
    for account in (ann, bob):
        listed = gateway.call("GET", "/v1/players/me/deals", account).get_json()["deals"]
        assert [(d["table_id"], d["hand_number"]) for d in listed] == [(table_id, 1)]
        assert len(recall.store.copies(account.id)) == 1
    assert gateway.call("GET", "/v1/players/me/deals", cy).get_json()["deals"] == []
    assert recall.store.pending(table_id) == {}
    assert store_of(gateway).client.zscore(OUTBOX_KEY, table_id) is None


def test_a_deal_s_recall_outlives_the_process_that_committed_it(clustered: Gateway) -> None:
    """On a cluster, the process dies right after the commit that ends a deal: the
    deal's notes, written with it to the table's outbox, are delivered by the sweeper,
    once."""
    gateway = clustered
    service: TableService = gateway.app.extensions["cardroom.service"]
    recall = service.changes.recall
    assert recall is not None
    ann, bob = gateway.sign_up("ann"), gateway.sign_up("bob")
    table_id = gateway.create(deal_pause_seconds=0, turn_seconds=60)
    players = [gateway.sit(table_id, "ann", 100, ann), gateway.sit(table_id, "bob", 100, bob)]
    gateway.act(table_id, players[0], action="start")
    deliver = recall.committed
    recall.committed = lambda commit: None  # type: ignore[method-assign]
    try:
        for player in players:
            gateway.act(table_id, player, action="declare", choice="out")
    finally:
        recall.committed = deliver  # type: ignore[method-assign]
    assert gateway.call("GET", f"/v1/tables/{table_id}/hands/1").status_code == 200
    assert gateway.call("GET", "/v1/players/me/deals", ann).get_json()["deals"] == []
    notes = recall.store.pending(table_id)
    assert sorted(note["player"] for note in notes.values()) == sorted([ann.id, bob.id])

    recall.clock = lambda: time.time() + 60  # the sweeper's time to look
    try:
        assert recall.sweep() >= 1
    finally:
        recall.clock = time.time
    recall.store.deliver(table_id, notes, recall.copies)  # again, as a late sweeper would
    for account in (ann, bob):
        listed = gateway.call("GET", "/v1/players/me/deals", account).get_json()["deals"]
        assert [(d["table_id"], d["hand_number"]) for d in listed] == [(table_id, 1)]
        mine = gateway.call("GET", f"/v1/players/me/deals/{table_id}/1", account)
        assert mine.status_code == 200, mine.get_json()
        assert len(recall.store.copies(account.id)) == 1
    assert recall.store.pending(table_id) == {}
    assert store_of(gateway).client.zscore(OUTBOX_KEY, table_id) is None

    # a deal whose notes the committing process delivers takes the pointer back at once
    assert gateway.table(table_id)["hand_number"] == 2  # dealt when the first one ended
    for player in players:
        gateway.act(table_id, player, action="declare", choice="out")
    wait_for(lambda: gateway.call("GET", "/v1/players/me/deals", ann).get_json()["deals"])
    assert recall.store.pending(table_id) == {}
    assert store_of(gateway).client.zscore(OUTBOX_KEY, table_id) is None


def test_a_reader_behind_by_any_number_of_deals_reads_every_event_from_its_cursor(
    single: Gateway,
) -> None:
    store = store_of(single)
    table_id = play_table(single.app.test_client(), TABLES[1], 24, random.Random(5))
    log = store.events_log(table_id)
    assert [event["id"] for event in log] == list(range(1, len(log) + 1))
    for after in range(0, len(log), 5):
        assert store.events_after(table_id, after, None) == log[after:]
        assert store.events_between(table_id, after + 1, after + 6) == log[after : after + 6]
        assert store.first_event_after(table_id, after) == (after + 1 if after < len(log) else None)
