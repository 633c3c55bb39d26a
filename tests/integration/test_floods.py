"""One client (or ten) against the gateway as deployed (gunicorn, two gevent workers), while
two seated players play a Guts deal: long polls and event streams by the thousand, made-up
methods, slow headers and bodies, bad cursors. Whatever the flood, every move of the deal
is answered, none is counted out by the clock, and a flood's connections cost nothing once
they are closed.

Each flood comes from loopback aliases of its own (127.0.0.2 and up: all of 127/8 is this
machine's), the players from 127.0.0.1. Every attack is bounded in count and time. The
figures go to var/reports/floods.json.
"""

from __future__ import annotations

import contextlib
import fcntl
import functools
import json
import selectors
import socket
import statistics
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.conftest import REPORTS
from tests.support.play import wait_for
from tests.support.processes import GunicornGateway, HttpGateway

WAITING_PER_ADDRESS = 100
REPORT = REPORTS / "floods.json"


@pytest.fixture
def gateway(redis_url: str, evaluator_address: str, tmp_path: Path) -> Iterator[GunicornGateway]:
    """The gateway as deployed: two gevent workers of 1,000 connections, its clock on."""
    process = GunicornGateway(
        redis_url,
        evaluator_address,
        tmp_path / "gateway.log",
        workers=2,
        LONG_POLL_MAX_SECONDS="300",
        STREAM_MAX_SECONDS="300",
        WAITING_PER_ADDRESS=str(WAITING_PER_ADDRESS),
    )
    process.start()
    yield process
    process.stop()


def source(number: int) -> str:
    """The loopback alias of flood `number` (127.0.0.2 and up)."""
    return f"127.0.0.{2 + number}"


class Flood:
    """Connections from one source address, each sending `request` and then holding on."""

    def __init__(self, port: int, address: str, request: bytes, count: int) -> None:
        """Open `count` connections from `address` and send each the request."""
        self.address = address
        self.sockets: list[socket.socket] = []
        self.answers: dict[socket.socket, bytes] = {}
        for _ in range(count):
            conn = socket.socket()
            conn.bind((address, 0))
            conn.settimeout(30)
            conn.connect(("127.0.0.1", port))
            conn.sendall(request)
            conn.setblocking(False)
            self.sockets.append(conn)

    def read(self, seconds: float) -> Counter[int]:
        """Read what came within `seconds`; the statuses answered so far, by status."""
        with selectors.DefaultSelector() as selector:
            for conn in self.sockets:
                selector.register(conn, selectors.EVENT_READ)
            ends = time.monotonic() + seconds
            while (left := ends - time.monotonic()) > 0:
                for key, _ in selector.select(min(left, 0.2)):
                    readable: Any = key.fileobj
                    try:
                        chunk = readable.recv(65536)
                    except OSError:
                        chunk = b""
                    self.answers[readable] = self.answers.get(readable, b"") + chunk
                    if not chunk:
                        selector.unregister(readable)
        return self.statuses()

    def statuses(self) -> Counter[int]:
        """The statuses of the answers read so far."""
        return Counter(int(answer[9:12]) for answer in self.answers.values() if answer[9:12])

    def close(self) -> None:
        """Close every connection."""
        for conn in self.sockets:
            conn.close()


def waiting_held(redis_url: str, address: str) -> int:
    """The waiting requests Redis counts for a client address now."""
    client = redis.Redis.from_url(redis_url)
    try:
        now_ms = int(time.time() * 1000)
        return int(client.zcount(f"address:{{{address}}}:streams", now_ms, "+inf"))
    finally:
        client.close()


def refused_at_least(flood: Flood, count: int) -> bool:
    """Whether `count` of the flood's requests were answered 429 by now."""
    return flood.read(0.2)[429] >= count


def nothing_held(redis_url: str, address: str) -> bool:
    """Whether the address holds no waiting request any more."""
    return waiting_held(redis_url, address) == 0


def long_poll(table_id: str, after: int, wait: int = 300) -> bytes:
    """A long poll's request."""
    return (
        f"GET /v1/tables/{table_id}/events?after={after}&wait={wait} HTTP/1.1\r\n"
        "Host: 127.0.0.1\r\n\r\n"
    ).encode()


def stream(table_id: str) -> bytes:
    """An event stream's request."""
    return f"GET /v1/tables/{table_id}/events/stream HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()


def quiet_table(http: HttpGateway) -> tuple[str, int]:
    """A table where nothing happens (what a flood waits on), and its last event's id."""
    table_id = http.create()
    return table_id, int(http.call("GET", f"/v1/tables/{table_id}/events").get_json()["next"])


def play_a_deal(http: HttpGateway) -> list[float]:
    """Two players play a Guts deal, each with 20 s a turn; each move's seconds.

    Every move must be answered 200, and the clock must count nobody out.
    """
    table_id = http.create(turn_seconds=20, deal_pause_seconds=60)
    ann, bo = http.sit(table_id, "ann"), http.sit(table_id, "bo")
    seconds = []
    for player, move in (
        (ann, {"action": "start"}),
        (ann, {"action": "declare", "choice": "in"}),
        (bo, {"action": "declare", "choice": "out"}),
    ):
        started = time.monotonic()
        answer = http.act(table_id, player, **move)
        seconds.append(time.monotonic() - started)
        assert answer.status_code == 200, answer.get_data(as_text=True)
    events = http.call("GET", f"/v1/tables/{table_id}/events").get_json()["events"]
    kinds = [event["type"] for event in events]
    assert "timeout" not in kinds
    assert kinds.count("declared") == 2
    return seconds


def during(attack: Callable[[threading.Event], None], http: HttpGateway) -> list[float]:
    """A deal played once `attack`, run in another thread, says it is under way (it sets
    the event it is given); its moves' seconds."""
    underway = threading.Event()
    thread = threading.Thread(target=attack, args=(underway,), daemon=True)
    thread.start()
    try:
        assert underway.wait(120), "the attack got under way"
        return play_a_deal(http)
    finally:
        thread.join(120)


def note(attack: str, moves: list[float], **figures: Any) -> None:
    """Add an attack's figures to the report (each test process adds its own)."""
    REPORTS.mkdir(parents=True, exist_ok=True)
    with REPORT.open("a+") as report:
        fcntl.flock(report, fcntl.LOCK_EX)
        report.seek(0)
        kept = json.loads(report.read() or "{}")
        kept[attack] = {
            "moves_seconds_max": round(max(moves), 3),
            "moves_seconds_median": round(statistics.median(moves), 3),
            **figures,
        }
        report.seek(0)
        report.truncate()
        report.write(json.dumps(kept, indent=2, sort_keys=True))


def test_a_long_poll_flood_from_one_address(gateway: GunicornGateway, redis_url: str) -> None:
    http = gateway.http
    note("baseline", play_a_deal(http))
    table_id, last = quiet_table(http)
    count = 1_500
    flood = Flood(gateway.port, source(0), long_poll(table_id, last), count)
    try:
        wait_for(lambda: flood.read(0.5)[429] >= count - WAITING_PER_ADDRESS or None)
        moves = play_a_deal(http)
        assert flood.read(0.5) == Counter({429: count - WAITING_PER_ADDRESS})
        assert waiting_held(redis_url, source(0)) == WAITING_PER_ADDRESS
    finally:
        flood.close()
    # the closed connections give their places back at once, not when their waits end
    wait_for(lambda: waiting_held(redis_url, source(0)) == 0, 60)
    assert (
        http.call("GET", f"/v1/tables/{table_id}/events?after={last}&wait=0.5").status_code == 200
    )
    note("long_polls_one_address", moves, sent=count, refused_429=count - WAITING_PER_ADDRESS)


def test_long_polls_and_streams_from_ten_addresses(
    gateway: GunicornGateway, redis_url: str
) -> None:
    http = gateway.http
    table_id, last = quiet_table(http)
    floods: list[Flood] = []
    try:
        for number in range(1, 11):
            request = long_poll(table_id, last) if number % 2 else stream(table_id)
            floods.append(Flood(gateway.port, source(number), request, 110))
        moves = play_a_deal(http)
        for flood in floods:
            wait_for(functools.partial(refused_at_least, flood, 10))
            assert flood.read(0.2)[429] == 10
            assert waiting_held(redis_url, flood.address) == WAITING_PER_ADDRESS
    finally:
        for flood in floods:
            flood.close()
    for flood in floods:
        wait_for(functools.partial(nothing_held, redis_url, flood.address), 60)
    note("long_polls_and_streams_ten_addresses", moves, sent=1_100, waiting=1_000)


def test_made_up_methods_do_not_grow_the_metrics(gateway: GunicornGateway) -> None:
    http = gateway.http
    before = len(http.call("GET", "/metrics").data)
    count = 4_000

    def attack(underway: threading.Event) -> None:
        address = ("127.0.0.1", gateway.port)
        with socket.create_connection(address, 60, source_address=(source(30), 0)) as conn:
            for number in range(count):
                if number == count // 4:
                    underway.set()
                method = f"X{number:05d}ABCDEFGHIJKLMN"
                conn.sendall(f"{method} /v1/tables HTTP/1.1\r\nHost: x\r\n\r\n".encode())
                assert b" 405 " in _answer(conn)

    moves = during(attack, http)
    after = http.call("GET", "/metrics").data
    assert b"ABCDEFGHIJ" not in after
    assert len(after) - before < 20_000
    note(
        "made_up_methods",
        moves,
        sent=count,
        metrics_bytes_before=before,
        metrics_bytes_after=len(after),
    )


def _answer(conn: socket.socket) -> bytes:
    """One whole answer with a Content-Length from a keep-alive connection."""
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":")[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length")
    )
    while len(body) < length:
        body += conn.recv(65536)
    return head


def test_slow_headers_and_bodies(gateway: GunicornGateway) -> None:
    http = gateway.http
    count = 200
    conns: list[socket.socket] = []

    def attack(underway: threading.Event) -> None:
        for number in range(count):
            conn = socket.socket()
            conn.bind((source(20 + number % 10), 0))
            conn.connect(("127.0.0.1", gateway.port))
            conns.append(conn)
        head = b"POST /v1/players HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n"
        for step in range(40):  # a byte a connection every 0.25 s, 10 s in all
            if step == 4:
                underway.set()
            for number, conn in enumerate(conns):
                # the odd ones send their headers a byte at a time; the even ones their
                # headers whole, then their body a byte at a time
                part = head[step : step + 1] if number % 2 else b" "
                if number % 2 == 0 and step == 0:
                    part = head + b"{"
                with contextlib.suppress(OSError):  # cut by the gateway
                    conn.sendall(part)
            time.sleep(0.25)

    moves = during(attack, http)
    closed = 0
    for conn in conns:
        conn.settimeout(60)
        try:
            while conn.recv(65536):
                pass
            closed += 1
        except OSError:
            closed += 1
        conn.close()
    assert closed == count
    note("slow_headers_and_bodies", moves, connections=count)


BAD_CURSORS = [
    "/v1/tables?cursor=nan",
    "/v1/tables?cursor=1e999:x",
    "/v1/tables?cursor=" + "9" * 400,
]


def test_bad_cursors(gateway: GunicornGateway) -> None:
    http = gateway.http

    def attack(underway: threading.Event) -> None:
        for round_number in range(100):
            if round_number == 20:
                underway.set()
            for path in BAD_CURSORS:
                answer = http.call("GET", path)
                assert answer.status_code == 400, answer.data
                assert answer.get_json()["code"] in ("invalid_cursor", "invalid_parameter")

    note("bad_cursors", during(attack, http), sent=100 * len(BAD_CURSORS))
