"""Faults injected into the service as deployed: gunicorn, redis-server, `python -m evaluator`.

Each fault is injected at a moment that is certain, not guessed: a process is frozen
with SIGSTOP, the move is sent, and /proc shows the move's bytes waiting at the frozen
evaluator before anything is killed. Afterwards the tables are read straight from
Redis and audited: versions, the event log, the hand histories and the chips agree
with each other, and every move the gateway acknowledged is there.
"""

from __future__ import annotations

import http.client
import os
import random
import signal
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis

from api.adapters.store import Commit, TableRecord, TableStore, connect
from api.games import guts
from api.games.events import Event
from api.service.visibility import public_event
from tests.support.deployment import deployed_redis_persistence
from tests.support.games import guts_deal_of
from tests.support.ledger import assert_ledger_clean
from tests.support.processes import (
    DurableRedis,
    EvaluatorProcess,
    GunicornGateway,
    HttpGateway,
    Seat,
    poll,
    process_holding,
    unread_request_at,
)

TRANSPORT_ERRORS = (OSError, http.client.HTTPException)


@pytest.fixture(scope="module")
def evaluator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[EvaluatorProcess]:
    """One evaluator process for the tests that leave it alone."""
    process = EvaluatorProcess(tmp_path_factory.mktemp("evaluator") / "evaluator.log")
    process.start()
    yield process
    process.stop()


@dataclass(frozen=True)
class Snapshot:
    """Everything Redis holds about a table."""

    table: dict[str, str]
    events: list[Event]
    histories: list[str]


def snapshot(store: TableStore, table_id: str) -> Snapshot:
    """The table's hash, its whole event log and its hand-history keys."""
    client = store.client
    return Snapshot(
        dict(client.hgetall(f"table:{{{table_id}}}")),  # type: ignore[arg-type]
        store.events_after(table_id, 0, None),
        sorted(str(key) for key in client.scan_iter(match=f"table:{{{table_id}}}:hand:*")),
    )


def audit(store: TableStore, table_id: str, bought: int) -> list[Event]:
    """Assert the table is whole (state, log, histories and chips agree); its event log."""
    record = store.load(table_id)
    assert record is not None
    state = record.state
    events = store.events_after(table_id, 0, None)
    assert state["version"] == record.version
    assert [item["id"] for item in events] == list(range(1, record.seq + 1)), "log has gaps"
    cashed = sum(e["data"]["amount"] for e in events if e["type"] == "cashed_out")
    stacks = sum(seat["stack"] for seat in state["seats"].values())
    assert stacks + state["pot"] + state["reserve"] == bought - cashed, "chips not conserved"
    ended = {e["hand_number"] for e in events if e["type"] == "deal_ended"}
    for number in range(1, state["hand_number"] + 1):
        assert (store.hand(table_id, number) is not None) == (number in ended), number
    deal = state["deal"]
    if deal is not None and state["phase"] == "declaring":
        # the current deal's declarations are exactly those its log records
        logged = {
            str(e["data"]["seat"])
            for e in events
            if e["hand_number"] == deal["number"] and e["type"] in ("declared", "timeout")
        }
        assert set(guts_deal_of(state)["declarations"]) == logged  # declaring is Guts' alone
    return events


def store_for(url: str) -> TableStore:
    """A store reading the gateway's Redis directly."""
    return TableStore(connect(url, cluster=False))


def test_compose_runs_redis_with_an_fsynced_append_only_file() -> None:
    flags = deployed_redis_persistence()
    assert flags[flags.index("--appendonly") + 1] == "yes"
    assert flags[flags.index("--appendfsync") + 1] == "always"


# ---------------------------------------------------------------- the evaluator dies


def test_evaluator_killed_during_a_showdown(tmp_path: Path, redis_url: str) -> None:
    evaluator = EvaluatorProcess(tmp_path / "evaluator.log")
    gateway = GunicornGateway(
        redis_url, evaluator.address, tmp_path / "gateway.log", workers=1, EVALUATOR_TIMEOUT="5"
    )
    store = store_for(redis_url)
    try:
        evaluator.start()
        gateway.start()
        client = gateway.http
        table_id = client.create(deal_pause_seconds=60, turn_seconds=600)
        alice, bob = client.sit(table_id, "alice"), client.sit(table_id, "bob")
        assert client.act(table_id, alice, action="start").status_code == 200
        assert client.act(table_id, alice, action="declare", choice="in").status_code == 200
        assert client.status("/readyz") == 200  # the worker's channel is connected
        before = snapshot(store, table_id)
        evaluator.signal(signal.SIGSTOP)
        with ThreadPoolExecutor(1) as pool:
            move = pool.submit(client.act, table_id, bob, action="declare", choice="in")
            poll(lambda: unread_request_at(evaluator.port), what="showdown sent to the evaluator")
            evaluator.kill()
            kept = move.result(timeout=120)
        # bob declared in time: the move stands and the showdown waits for an evaluator
        assert kept.status_code == 200, kept.get_json()
        assert kept.get_json()["table"]["phase"] == "showdown"
        after = snapshot(store, table_id)
        assert after.events[: len(before.events)] == before.events
        assert "declarations_revealed" in [e["type"] for e in after.events]
        assert client.status("/readyz") == 503

        # a second table whose deadline passes while no evaluator is there: against the
        # ghost, carol's lone "in" needs a showdown, which the clock cannot settle yet
        ghostly = client.create(deal_pause_seconds=60, turn_seconds=1, ghost=True)
        carol, _ = client.sit(ghostly, "carol"), client.sit(ghostly, "dave")
        assert client.act(ghostly, carol, action="start").status_code == 200
        assert client.act(ghostly, carol, action="declare", choice="in").status_code == 200
        poll(
            lambda: client.table(ghostly)["phase"] == "showdown",
            60,
            "the clock applies the deadline and leaves the showdown unsettled",
        )
        logs = gateway.logs.read_text()
        assert "showdown left to the clock" in logs
        assert ghostly in logs

        evaluator.start()  # a new evaluator on the same address
        for waiting in (table_id, ghostly):

            def settled(waiting: str = waiting) -> bool:
                return bool(client.table(waiting)["phase"] == "between_deals")

            poll(settled, 60, "the clock settles the showdown once an evaluator is back")
            events = audit(store, waiting, 200)
            assert [e["type"] for e in events].count("showdown") == 1
        assert client.status("/readyz") == 200
    finally:
        gateway.stop()
        evaluator.stop()


# ---------------------------------------------------------------- players under fire


@dataclass
class Attempt:
    """One move sent: its answer, or None when the connection broke."""

    table_id: str
    seat: int
    status: int | None
    events: list[dict[str, Any]] = field(default_factory=list)
    version: int | None = None
    code: str | None = None


@dataclass
class Players:
    """Threads that play Guts deals on several tables until told to stop."""

    client: HttpGateway
    tables: dict[str, list[Seat]]
    attempts: list[Attempt] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    threads: list[threading.Thread] = field(default_factory=list)
    # the client port of each move being sent right now, by table
    in_flight: dict[str, int] = field(default_factory=dict)

    def start(self) -> None:
        """One thread per table."""
        for number, table_id in enumerate(self.tables):
            thread = threading.Thread(target=self._play, args=(table_id, random.Random(number)))
            thread.start()
            self.threads.append(thread)

    def finish(self) -> None:
        """Stop and join the threads."""
        self.stop.set()
        for thread in self.threads:
            thread.join(120)
            assert not thread.is_alive()

    def acknowledged(self, table_id: str | None = None) -> list[Attempt]:
        """The moves answered 2xx (on one table, or on all)."""
        return [
            a
            for a in list(self.attempts)
            if a.status is not None
            and 200 <= a.status < 300
            and (table_id is None or a.table_id == table_id)
        ]

    def wait_for_progress(self, moves: int) -> None:
        """Wait until every table has `moves` more moves acknowledged than now."""
        start = {table: len(self.acknowledged(table)) for table in self.tables}

        def progressed() -> bool:
            return all(len(self.acknowledged(t)) >= n + moves for t, n in start.items())

        poll(progressed, 120, f"{moves} more moves acknowledged at every table")

    def move_in_flight(self, seconds: float = 60.0) -> int:
        """Wait until some move is on its way; its client port."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            ports = list(self.in_flight.values())
            if ports:
                return random.choice(ports)
            time.sleep(0.001)
        raise AssertionError("no move in flight")

    def _play(self, table_id: str, rng: random.Random) -> None:
        seats = {seat.seat: seat for seat in self.tables[table_id]}
        while not self.stop.is_set():
            try:
                view = self.client.call("GET", f"/v1/tables/{table_id}")
            except TRANSPORT_ERRORS:
                time.sleep(0.05)
                continue
            table = view.get_json() if view.status_code == 200 else None
            if table is None or table["phase"] != "declaring":
                time.sleep(0.05)
                continue
            for number in table["pending"]["seats"]:
                attempt = Attempt(table_id, number, None)
                link = http.client.HTTPConnection("127.0.0.1", self.client.base_port, timeout=60)
                try:
                    link.connect()
                    self.in_flight[table_id] = link.sock.getsockname()[1]
                    reply = self.client.call(
                        "POST",
                        f"/v1/tables/{table_id}/actions",
                        seats[number],
                        {"action": "declare", "choice": rng.choice(["in", "out"])},
                        connection=link,
                    )
                except TRANSPORT_ERRORS:
                    self.attempts.append(attempt)
                    continue
                finally:
                    self.in_flight.pop(table_id, None)
                    link.close()
                attempt.status = reply.status_code
                body = reply.get_json()
                if reply.status_code == 200:
                    attempt.events = body["events"]
                    attempt.version = int(reply.headers["etag"].strip('"'))
                else:
                    attempt.code = body.get("code")
                self.attempts.append(attempt)


def seat_players(client: HttpGateway, tables: int, players: int) -> dict[str, list[Seat]]:
    """Guts tables (a cap keeps everyone in chips), seated and started."""
    variants: list[dict[str, Any]] = [
        {},
        {"ghost": True},
        {"declare": "sequential", "cards": 2},
        {"wimp": True, "losers_pay": "worst"},
    ]
    seated: dict[str, list[Seat]] = {}
    for number in range(tables):
        table_id = client.create(
            deal_pause_seconds=0, turn_seconds=30, cap=4, **variants[number % len(variants)]
        )
        seated[table_id] = [client.sit(table_id, f"p{i}", buy_in=100) for i in range(players)]
        assert client.act(table_id, seated[table_id][0], action="start").status_code == 200
    return seated


def assert_acknowledged_moves_kept(store: TableStore, players: Players, buy_in: int) -> None:
    """Every 2xx move's events are in the log as answered; versions were never reused."""
    for table_id, seats in players.tables.items():
        log = {
            item["id"]: public_event(item) for item in audit(store, table_id, buy_in * len(seats))
        }
        record = store.load(table_id)
        assert record is not None
        acknowledged = players.acknowledged(table_id)
        versions = [a.version for a in acknowledged]
        assert len(set(versions)) == len(versions), "two moves acknowledged with one version"
        for attempt in acknowledged:
            assert attempt.version is not None
            assert attempt.version <= record.version
            for item in attempt.events:
                assert log.get(item["id"]) == item, f"acknowledged event lost: {item}"


def test_acknowledged_moves_survive_redis_killed_and_restarted_from_its_aof(
    tmp_path: Path, evaluator: EvaluatorProcess
) -> None:
    server = DurableRedis(str(tmp_path))
    gateway = GunicornGateway(server.url, evaluator.address, tmp_path / "gateway.log", workers=2)
    store = store_for(server.url)
    players = Players(gateway.http, {})
    rng = random.Random()
    try:
        server.start()
        gateway.start()
        workers = sorted(gateway.workers())
        players.tables = seat_players(gateway.http, tables=4, players=3)
        players.start()
        for _crash in range(2):
            players.wait_for_progress(3)
            time.sleep(rng.uniform(0, 0.5))  # a random moment, while a move is being made
            players.move_in_flight()
            server.kill()
            down = gateway.http.call("GET", f"/v1/tables/{next(iter(players.tables))}")
            assert down.status_code == 503
            assert down.get_json()["code"] == "store_unavailable"
            assert int(down.headers["retry-after"]) >= 1
            assert gateway.http.status("/readyz") == 503
            server.start()  # replays the append-only file
        players.wait_for_progress(3)  # play goes on at every table
        assert gateway.http.status("/readyz") == 200
        players.finish()
        assert sorted(gateway.workers()) == workers  # recovered without restarting anything
        assert_acknowledged_moves_kept(store, players, 100)
        assert_ledger_clean(server.url)  # no chip made or lost either
    finally:
        players.finish()
        gateway.stop()
        server.stop()


# ---------------------------------------------------------------- a worker dies


def test_worker_killed_in_the_middle_of_a_move(tmp_path: Path, redis_url: str) -> None:
    evaluator = EvaluatorProcess(tmp_path / "evaluator.log")
    gateway = GunicornGateway(
        redis_url, evaluator.address, tmp_path / "gateway.log", workers=2, EVALUATOR_TIMEOUT="60"
    )
    store = store_for(redis_url)
    try:
        evaluator.start()
        gateway.start()
        client = gateway.http
        table_id = client.create(deal_pause_seconds=60, turn_seconds=600)
        alice, bob = client.sit(table_id, "alice"), client.sit(table_id, "bob")
        assert client.act(table_id, alice, action="start").status_code == 200
        assert client.act(table_id, alice, action="declare", choice="in").status_code == 200
        before = snapshot(store, table_id)
        evaluator.signal(signal.SIGSTOP)
        link = http.client.HTTPConnection("127.0.0.1", gateway.port, timeout=120)
        link.connect()
        client_port = link.sock.getsockname()[1]
        with ThreadPoolExecutor(1) as pool:
            move = pool.submit(
                client.call,
                "POST",
                f"/v1/tables/{table_id}/actions",
                bob,
                {"action": "declare", "choice": "in"},
                None,
                link,
            )
            # the worker is inside the move: it has asked the frozen evaluator to rank
            poll(lambda: unread_request_at(evaluator.port), what="showdown sent to the evaluator")
            victim = poll(
                lambda: process_holding(client_port, gateway.port, gateway.workers()),
                what="the worker serving the move",
            )
            gateway_workers = gateway.workers()
            assert victim in gateway_workers
            os.kill(victim, signal.SIGKILL)
            with pytest.raises(TRANSPORT_ERRORS):
                move.result(timeout=120)
        evaluator.signal(signal.SIGCONT)
        link.close()
        assert snapshot(store, table_id) == before  # entirely before the move
        gateway.wait_for_replacement(victim)
        retried = client.act(table_id, bob, action="declare", choice="in")
        assert retried.status_code == 200, retried.text()
        assert client.table(table_id)["phase"] == "between_deals"
        audit(store, table_id, 200)
    finally:
        gateway.stop()
        evaluator.stop()


def test_workers_killed_at_random_while_many_clients_play(
    tmp_path: Path, redis_url: str, evaluator: EvaluatorProcess
) -> None:
    gateway = GunicornGateway(redis_url, evaluator.address, tmp_path / "gateway.log", workers=2)
    store = store_for(redis_url)
    players = Players(gateway.http, {})
    rng = random.Random()
    killed = []
    try:
        gateway.start()
        players.tables = seat_players(gateway.http, tables=4, players=3)
        players.start()
        for _ in range(3):
            players.wait_for_progress(2)
            time.sleep(rng.uniform(0, 0.3))
            # the worker serving a move right now (else any worker: the move just ended)
            victim = process_holding(
                players.move_in_flight(), gateway.port, gateway.workers()
            ) or rng.choice(gateway.workers())
            os.kill(victim, signal.SIGKILL)
            killed.append(victim)
            gateway.wait_for_replacement(victim)
        players.wait_for_progress(2)
        players.finish()
        assert_acknowledged_moves_kept(store, players, 100)
        assert not set(killed) & set(gateway.workers())
    finally:
        players.finish()
        gateway.stop()


# ---------------------------------------------------------------- Redis away


def test_redis_stopped_and_started_again_on_the_same_port(
    tmp_path: Path, evaluator: EvaluatorProcess
) -> None:
    server = DurableRedis(str(tmp_path))
    gateway = GunicornGateway(server.url, evaluator.address, tmp_path / "gateway.log", workers=2)
    client = gateway.http
    try:
        server.start()
        gateway.start()
        table_id = client.create(deal_pause_seconds=60, turn_seconds=600)
        alice, bob = client.sit(table_id, "alice"), client.sit(table_id, "bob")
        assert client.act(table_id, alice, action="start").status_code == 200
        workers = sorted(gateway.workers())
        host = client.sign_up()
        server.stop()
        # every worker answers alike: ask more often than there are workers
        for _ in range(4):
            for method, path, viewer, body in (
                ("GET", f"/v1/tables/{table_id}", None, None),
                (
                    "POST",
                    f"/v1/tables/{table_id}/actions",
                    bob,
                    {"action": "declare", "choice": "in"},
                ),
                ("GET", f"/v1/tables/{table_id}/events?after=0", alice, None),
                ("POST", "/v1/tables", host, {"game": "guts"}),
            ):
                reply = client.call(method, path, viewer, body)
                assert reply.status_code == 503, (path, reply.text())
                assert reply.mimetype == "application/problem+json"
                assert reply.get_json()["code"] == "store_unavailable"
                assert int(reply.headers["retry-after"]) >= 1
            assert client.status("/readyz") == 503
            assert client.status("/healthz") == 200
        server.start()
        poll(lambda: all(client.status("/readyz") == 200 for _ in range(4)), 60, "ready again")
        assert client.act(table_id, bob, action="declare", choice="in").status_code == 200
        assert client.act(table_id, alice, action="declare", choice="out").status_code == 200
        assert client.table(table_id)["phase"] == "between_deals"
        audit(store_for(server.url), table_id, 200)
        assert_ledger_clean(server.url)
        assert sorted(gateway.workers()) == workers  # recovered by itself, nothing restarted
    finally:
        gateway.stop()
        server.stop()


def test_the_audit_catches_a_table_torn_in_half(redis_url: str) -> None:
    """The audit above would see a change written only in part."""
    store = store_for(redis_url)
    state = guts.new_table({}, "torn", 0.0)  # as the store keeps it
    state["name"] = "torn"
    state["version"] = 1
    # Any: an event the store keeps as it is given, its data left out
    created: list[Any] = [
        {
            "id": 1,
            "type": "table_created",
            "data": {},
            "at": 0.0,
            "hand_number": 0,
            "audience": None,
        }
    ]
    assert store.commit(Commit(TableRecord("torn", state, 0, 0), state, created))
    audit(store, "torn", 0)
    # the state moves on without its event: the log and the state disagree
    client = redis.Redis.from_url(redis_url)
    client.hset("table:{torn}", "seq", 2)
    with pytest.raises(AssertionError, match="gaps"):
        audit(store, "torn", 0)
