"""The edge's cap on the connections one client address holds open (deploy/edge/nginx.conf).

`limit_conn per_address 200` counts a connection once nginx has read its request's
headers, for as long as that request is in hand: 200 slow clients that each sent the
headers of a POST and hold its body back take the whole allowance, and one more request
from the same address is the edge's 429 `rate_limited` problem. While the test needs them
held, each sends one byte of its body every few seconds (the timeout is between reads);
then they fall silent and the edge's `client_body_timeout` cuts them. The gateway never
sees them: the edge buffers a body before passing it on.
Event streams are not used: the gateway caps those per address at 100 on its own.
"""

from __future__ import annotations

import json
import os
import selectors
import socket
import time
from collections.abc import Iterator

import httpx
import pytest

from deploy import demo
from tests.images.stack import ROOT, Stack, wait_until

pytestmark = pytest.mark.skipif(
    os.environ.get("CARDROOM_IMAGES") != "1", reason="needs the built images (make test-images)"
)

# limit_conn per_address in deploy/edge/nginx.conf
PER_ADDRESS = 200
# the body each slow client announces; it sends at most a few of these bytes
BODY_BYTES = 64
# nginx's client_body_timeout: the longest a body may pause between two reads
BODY_TIMEOUT = 10.0
# how often a held client sends one more byte of its body (well within BODY_TIMEOUT)
TRICKLE_EVERY = 3.0
# what the run held and how long the edge let it (printed with the run's figures)
REPORT = ROOT / "var" / "reports" / "edge_limits.json"


class SlowClients:
    """Up to a few hundred raw connections to the edge, each the start of a slow POST."""

    def __init__(self, port: int, count: int) -> None:
        self.links: list[socket.socket] = []
        try:
            for _ in range(count):
                self.links.append(socket.create_connection(("127.0.0.1", port), timeout=10))
        except OSError:
            self.close()
            raise
        self.sent_body = 0
        self.last_sent = time.monotonic()

    def send_headers(self) -> None:
        """Every connection sends a whole request head, then none of its body."""
        head = (
            b"POST /v1/tables HTTP/1.1\r\nHost: edge\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(BODY_BYTES).encode() + b"\r\n\r\n"
        )
        for link in self.links:
            link.sendall(head)
        self.last_sent = time.monotonic()

    def trickle(self) -> None:
        """One more byte of each body (JSON whitespace) when TRICKLE_EVERY has passed."""
        if time.monotonic() - self.last_sent < TRICKLE_EVERY:
            return
        assert self.sent_body < BODY_BYTES - 1, "held longer than the bodies allow"
        for link in self.links:
            link.sendall(b" ")
        self.sent_body += 1
        self.last_sent = time.monotonic()

    def close_one(self) -> None:
        """The client end of one connection closes (the edge ends its request)."""
        self.links.pop().close()

    def wait_closed_by_the_edge(self, seconds: float) -> list[float]:
        """Send nothing more; each connection's seconds from its last byte to the edge's close.

        A connection the edge closes reads as the end of the stream, a reset (with
        `reset_timedout_connection on`) or a `408` answer followed by either.
        """
        closed: list[float] = []
        with selectors.DefaultSelector() as selector:
            for link in self.links:
                link.setblocking(False)
                selector.register(link, selectors.EVENT_READ, data=link)
            deadline = time.monotonic() + seconds
            while len(closed) < len(self.links) and time.monotonic() < deadline:
                for key, _ in selector.select(timeout=1):
                    ready: socket.socket = key.data
                    try:
                        answer = ready.recv(4096)
                    except BlockingIOError:
                        continue
                    except ConnectionResetError:
                        answer = b""
                    assert answer == b"" or answer.startswith(b"HTTP/1.1 408"), answer[:200]
                    if answer == b"":
                        closed.append(time.monotonic() - self.last_sent)
                        selector.unregister(ready)
        return closed

    def close(self) -> None:
        """Close what is still open."""
        for link in self.links:
            link.close()
        self.links = []


def probe(stack: Stack) -> httpx.Response:
    """One request on a fresh connection from the same (loopback) address."""
    return httpx.get(f"{stack.url}/readyz", timeout=10, headers={"Connection": "close"})


def gateway_posts(stack: Stack) -> float:
    """The POSTs the gateway has answered, whatever their status (its /metrics)."""
    text = httpx.get(f"{stack.url}/metrics", timeout=10).text
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("cardroom_http_requests_total{") and 'method="POST"' in line
    )


@pytest.fixture
def slow_clients(stack: Stack) -> Iterator[SlowClients]:
    clients = SlowClients(stack.port, PER_ADDRESS)
    try:
        yield clients
    finally:
        clients.close()


def test_the_edge_caps_the_connections_one_address_holds(
    stack: Stack, slow_clients: SlowClients
) -> None:
    started = time.monotonic()
    posts_before = gateway_posts(stack)
    # 200 connections open that have sent nothing yet: none counts, a request is served
    assert probe(stack).status_code == 200

    # each sends a request's headers and holds its body back: now each one counts
    slow_clients.send_headers()
    refused: list[httpx.Response] = []

    def refused_for_the_address() -> bool:
        slow_clients.trickle()
        reply = probe(stack)
        if reply.status_code == 429:
            refused.append(reply)
        return bool(refused)

    wait_until(refused_for_the_address, 20, f"a 429 with {PER_ADDRESS} slow requests held")
    problem = refused[0]
    assert problem.headers["content-type"] == "application/problem+json"
    assert problem.headers["retry-after"] == "5"
    assert problem.json()["code"] == "rate_limited"
    assert problem.json()["status"] == 429
    assert problem.json()["type"] == "https://cardroom.dev/problems/rate_limited"

    # 199 held: the 200th connection of the address is served (the cap is exactly 200)
    slow_clients.close_one()

    def served_again() -> bool:
        slow_clients.trickle()
        return probe(stack).status_code == 200

    wait_until(served_again, 20, f"a request served with {PER_ADDRESS - 1} slow requests held")
    held_for = time.monotonic() - started

    # the rest send nothing more: the edge's client_body_timeout closes every one
    waited = slow_clients.wait_closed_by_the_edge(BODY_TIMEOUT + 30)
    assert len(waited) == PER_ADDRESS - 1, f"{len(waited)} closed by the edge"
    # ...and none of them reached the gateway: the edge buffers a body before passing it on
    assert gateway_posts(stack) == posts_before
    figures = {
        "connections_held": PER_ADDRESS,
        "held_seconds": round(held_for, 1),
        "closed_by_the_edge": len(waited),
        "seconds_from_last_byte_to_close": [round(min(waited), 1), round(max(waited), 1)],
    }

    # the address's connections are free again: play goes on through fresh ones
    lines: list[str] = []
    status = demo.main(["--url", stack.url, "--timeout", "60"], say=lines.append)
    assert status == 0, "\n".join(lines)
    figures["test_seconds"] = round(time.monotonic() - started, 1)
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    REPORT.write_text(json.dumps(figures) + "\n")
