"""Slow clients against the gateway as deployed (gunicorn, gevent workers): a request body
that does not arrive in time is cut short with 408 body_timeout, and play goes on meanwhile."""

from __future__ import annotations

import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.processes import GunicornGateway

TIMEOUT = 1.5  # BODY_READ_TIMEOUT_SECONDS of this gateway
SLOW_CLIENTS = 3


@pytest.fixture
def gateway(redis_url: str, evaluator_address: str, tmp_path: Path) -> Iterator[GunicornGateway]:
    process = GunicornGateway(
        redis_url,
        evaluator_address,
        tmp_path / "gateway.log",
        workers=1,
        BODY_READ_TIMEOUT_SECONDS=str(TIMEOUT),
    )
    process.start()
    yield process
    process.stop()


def slow_body(port: int, key: str, seconds: float) -> tuple[bytes, int, int]:
    """A table's creation whose body comes a byte every 0.3 s: the answer, the bytes of
    the body sent by the time it came, and the body's length."""
    body = json.dumps({"game": "guts", "name": "x" * 40}).encode()
    started = time.monotonic()
    sent = 0
    with socket.create_connection(("127.0.0.1", port), timeout=seconds) as conn:
        conn.sendall(
            b"POST /v1/tables HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\n"
            + f"Authorization: Bearer {key}\r\nContent-Length: {len(body)}\r\n\r\n".encode()
        )
        answer = b""
        conn.settimeout(0.3)
        for byte in body:
            try:
                conn.sendall(bytes([byte]))
            except OSError:
                break  # the server closed the connection
            sent += 1
            try:
                chunk = conn.recv(65536)
            except TimeoutError:
                continue
            answer += chunk
            if not chunk or b"\r\n\r\n" in answer:
                break
            if time.monotonic() - started > seconds:
                break
        conn.settimeout(seconds)
        closed = False
        try:
            while chunk := conn.recv(65536):
                answer += chunk
            closed = True  # the server closed the connection
        except ConnectionResetError:
            # closed with the body's rest unread: the kernel says so with a reset
            closed = True
        except OSError:
            pass
        assert closed, "the connection stayed open"
    return answer, sent, len(body)


def test_a_body_that_does_not_arrive_in_time_is_refused_and_play_goes_on(
    gateway: GunicornGateway,
) -> None:
    http = gateway.http
    key = http.sign_up().key
    results: list[tuple[bytes, int, int]] = []
    lock = threading.Lock()

    def one() -> None:
        got = slow_body(gateway.port, key, 30)
        with lock:
            results.append(got)

    threads = [threading.Thread(target=one) for _ in range(SLOW_CLIENTS)]
    for thread in threads:
        thread.start()
    # meanwhile a table is created, seated and started as usual
    table_id = http.create(deal_pause_seconds=60, turn_seconds=600)
    ann, bo = http.sit(table_id, "ann"), http.sit(table_id, "bo")
    assert http.act(table_id, ann, action="start").status_code == 200
    assert http.act(table_id, bo, action="declare", choice="in").status_code == 200
    for thread in threads:
        thread.join(60)
    assert len(results) == SLOW_CLIENTS
    for answer, sent, length in results:
        head = answer.split(b"\r\n\r\n", 1)[0].decode("latin-1").lower()
        assert head.startswith("http/1.1 408"), answer[:200]
        assert "application/problem+json" in head
        assert "connection: close" in head  # it says it closes, and it does
        assert b'"code":"body_timeout"' in answer
        # the answer came, and the connection closed (the rest of the body was read as
        # no request), before the body was whole
        assert sent < length, (sent, length)


GUNICORN_REFUSALS = [
    (b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Bad: a\x01b\r\n\r\n", 400, "bad_request"),
    (b"POST /v1/players HTTP/1.1\r\nHost: x\r\nContent-Length: 1x\r\n\r\n", 400, "bad_request"),
    (
        b"POST /v1/players HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
        400,
        "bad_request",
    ),
    (b"GET /" + b"a" * 5000 + b" HTTP/1.1\r\nHost: x\r\n\r\n", 414, "uri_too_long"),
    (
        b"GET /healthz HTTP/1.1\r\nHost: x\r\n" + b"X-Many: y\r\n" * 150 + b"\r\n",
        431,
        "headers_too_large",
    ),
]


@pytest.mark.parametrize(("request_bytes", "status", "code"), GUNICORN_REFUSALS)
def test_what_gunicorn_refuses_by_itself_is_problem_json(
    gateway: GunicornGateway, request_bytes: bytes, status: int, code: str
) -> None:
    with socket.create_connection(("127.0.0.1", gateway.port), timeout=30) as conn:
        conn.sendall(request_bytes)
        answer = b""
        while chunk := conn.recv(65536):  # the gateway closes the connection
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").lower().split("\r\n")
    assert lines[0].startswith(f"http/1.1 {status} "), head
    assert "content-type: application/problem+json" in lines
    assert "connection: close" in lines
    problem = json.loads(body)
    assert (problem["status"], problem["code"]) == (status, code)
    assert problem["title"]
    assert problem["detail"]
