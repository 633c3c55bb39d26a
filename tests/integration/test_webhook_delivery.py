"""Notices in parallel: the sender's keep-alive connections against a real local HTTP
server (reused, a closed one replaced, a proxy, closing), and the deliverer keeping
several tables in flight while each table's notices keep their order."""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from api.adapters.webhooks import ANSWER_CAP, Sender
from api.runtime.webhooks import Deliverer
from tests.integration.test_webhooks import SECRET, guts_table, play_deal
from tests.support.gateway import Gateway, close_app, make_app
from tests.support.play import wait_for

Answer = Callable[[BaseHTTPRequestHandler, bytes], int]


class QuietServer(ThreadingHTTPServer):
    """A threading HTTP server that says nothing of a client gone mid-answer."""

    daemon_threads = True

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A sender that read enough of a long answer closes its connection: expected."""


@dataclass
class Server:
    """A local HTTP server that records each request (its line, client port and body) and
    answers as `answer` says; it counts the connections its clients closed."""

    answer: Answer = lambda handler, body: 200
    close_after_answer: bool = False  # drop the connection after each answer, unannounced
    body: bytes = b""
    requests: list[tuple[str, int, bytes]] = field(default_factory=list)
    closed: int = 0
    httpd: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        """The server's /hooks."""
        assert self.httpd is not None
        return f"http://127.0.0.1:{self.httpd.server_address[1]}/hooks"

    def start(self) -> None:
        """Listen on a free loopback port."""
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers["content-length"]))
                server.requests.append((self.requestline, self.client_address[1], body))
                status = server.answer(self, body)
                self.send_response(status)
                self.send_header("content-length", str(len(server.body)))
                self.end_headers()
                self.wfile.write(server.body)
                self.wfile.flush()
                if server.close_after_answer:
                    self.close_connection = True

            def finish(self) -> None:
                super().finish()
                server.closed += 1

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = QuietServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        """Stop listening."""
        if self.httpd is not None:
            self.httpd.shutdown()
            self.httpd.server_close()


@pytest.fixture
def server() -> Iterator[Server]:
    """A server answering 200 at once."""
    made = Server()
    made.start()
    yield made
    made.stop()


HEADERS = {"content-type": "application/json"}


def test_the_sender_keeps_its_connection_alive(server: Server) -> None:
    sender = Sender(4)
    try:
        assert [sender.post(server.url, b"{}", HEADERS, 5) for _ in range(5)] == [200] * 5
    finally:
        sender.close()
    assert len({port for _, port, _ in server.requests}) == 1
    wait_for(lambda: server.closed == 1 or None, seconds=10)  # closing closed it


def test_a_connection_the_receiver_closed_is_replaced(server: Server) -> None:
    server.close_after_answer = True  # HTTP/1.1, no `Connection: close`, then gone
    sender = Sender(4)
    try:
        statuses = []
        for _ in range(4):
            statuses.append(sender.post(server.url, b"{}", HEADERS, 5))
            wait_for(lambda: server.closed == len(statuses) or None, seconds=10)
    finally:
        sender.close()
    assert statuses == [200] * 4
    assert len(server.requests) == 4  # each sent once
    assert len({port for _, port, _ in server.requests}) == 4


def test_a_long_answer_is_read_only_so_far(server: Server) -> None:
    server.body = b"x" * (16 * ANSWER_CAP)
    sender = Sender(1)
    try:
        assert sender.post(server.url, b"{}", HEADERS, 5) == 200
        assert sender.post(server.url, b"{}", HEADERS, 5) == 200
    finally:
        sender.close()


def test_the_sender_goes_through_the_environments_proxy(
    server: Server, monkeypatch: pytest.MonkeyPatch
) -> None:
    server.answer = lambda handler, body: 202
    proxy = server.url.removesuffix("/hooks")
    monkeypatch.setenv("HTTP_PROXY", proxy)
    monkeypatch.setenv("NO_PROXY", "")
    monkeypatch.delenv("no_proxy", raising=False)
    sender = Sender(1)
    try:
        assert sender.post("http://push.example/hooks", b'{"a": 1}', HEADERS, 5) == 202
    finally:
        sender.close()
    line, _, body = server.requests[0]
    assert line == "POST http://push.example/hooks HTTP/1.1"  # the absolute URI
    assert body == b'{"a": 1}'


def test_a_closed_sender_answers_no_status(server: Server) -> None:
    sender = Sender(1)
    assert sender.post(server.url, b"{}", HEADERS, 5) == 200
    sender.close()
    assert sender.post(server.url, b"{}", HEADERS, 5) == 0
    assert len(server.requests) == 1


@pytest.fixture
def gateway_at(redis_url: str, evaluator_address: str) -> Iterator[Callable[..., Gateway]]:
    """Gateways in process whose commits write notices for a URL, clock off; closed after."""
    made: list[Gateway] = []

    def make(url: str, concurrency: int) -> Gateway:
        app = make_app(
            redis_url,
            evaluator_address,
            clock=False,
            webhook_url=url,
            webhook_secrets=(SECRET,),
            webhook_concurrency=concurrency,
        )
        made.append(Gateway(app, app.test_client()))
        return made[-1]

    yield make
    for gateway in made:
        close_app(gateway.app)
        gateway.app.extensions["cardroom.services"].webhooks.close()


def deliverer_of(gateway: Gateway) -> Deliverer:
    """A deliverer over the gateway's webhooks, started (the caller stops it)."""
    deliverer = Deliverer(gateway.app.extensions["cardroom.services"].webhooks, 0.05)
    deliverer.start()
    return deliverer


def test_notices_of_four_tables_are_on_their_way_at_once(
    gateway_at: Callable[..., Gateway], server: Server
) -> None:
    # the receiver answers only once it holds four notices at once (else 500, after 10 s)
    gathered = threading.Barrier(4)

    def answer(handler: BaseHTTPRequestHandler, body: bytes) -> int:
        try:
            gathered.wait(timeout=10)
        except threading.BrokenBarrierError:
            return 500
        return 200

    server.answer = answer
    gateway = gateway_at(server.url, 4)
    tables = [guts_table(gateway)[0] for _ in range(4)]  # two turn notices each
    deliverer = deliverer_of(gateway)
    try:
        wait_for(lambda: len(server.requests) >= 8 or None, seconds=60)
    finally:
        deliverer.stop()
    bodies = [json.loads(body) for _, _, body in server.requests]
    assert {body["table_id"] for body in bodies} == set(tables)
    assert len(bodies) == 8  # each delivered the first time: none answered 500


def test_each_tables_notices_arrive_in_order(
    gateway_at: Callable[..., Gateway], server: Server
) -> None:
    shuffle = random.Random(7)

    def answer(handler: BaseHTTPRequestHandler, body: bytes) -> int:
        time.sleep(shuffle.random() / 50)  # tables overtake each other
        return 200

    server.answer = answer
    gateway = gateway_at(server.url, 8)
    deals = 3
    tables = [guts_table(gateway) for _ in range(6)]
    for table_id, players in tables:
        for hand in range(1, deals + 1):
            play_deal(gateway, table_id, players, hand)
    deliverer = deliverer_of(gateway)
    wanted = len(tables) * deals * 4 + len(tables) * 2  # 2 turns, 2 ends a deal; next deal's turns
    try:
        wait_for(lambda: len(server.requests) >= wanted or None, seconds=60)
    finally:
        deliverer.stop()
    bodies = [json.loads(body) for _, _, body in server.requests]
    assert len(bodies) == wanted
    for table_id, _ in tables:
        arrived = [body for body in bodies if body["table_id"] == table_id]
        assert arrived == sorted(arrived, key=lambda body: body["at"])
        assert [body["hand_number"] for body in arrived] == sorted(
            body["hand_number"] for body in arrived
        )
    first = [body["table_id"] for body in bodies[: len(tables)]]
    assert len(set(first)) > 1  # the tables went side by side, not one after the other
