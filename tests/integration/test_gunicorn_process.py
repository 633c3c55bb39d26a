"""The gateway as deployed: gunicorn with two workers, over real HTTP, stopped by SIGTERM."""

from __future__ import annotations

import http.client
import json
import socket
import urllib.error
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from api.adapters.store import COMMAND_CONNECTIONS
from tests.support.play import wait_for
from tests.support.processes import GunicornGateway, process_holding


def call(
    base: str, method: str, path: str, body: Any = None, token: str | None = None
) -> tuple[int, Any]:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def test_two_workers_play_a_deal_and_stop_cleanly(
    redis_url: str, evaluator_address: str, tmp_path: Path
) -> None:
    gateway = GunicornGateway(redis_url, evaluator_address, tmp_path / "gunicorn.log")
    gateway.start()
    base = gateway.url
    try:
        keys = [call(base, "POST", "/v1/players", {"name": f"w{i}"})[1]["key"] for i in range(6)]
        body = {"game": "guts", "deal_pause_seconds": 60}
        status, table = call(base, "POST", "/v1/tables", body, keys[0])
        assert status == 201
        table_id = table["table"]["id"]
        tokens = [
            call(base, "POST", f"/v1/tables/{table_id}/seats", {"buy_in": 50}, key)[1]["token"]
            for key in keys
        ]
        assert (
            call(base, "POST", f"/v1/tables/{table_id}/actions", {"action": "start"}, tokens[0])[0]
            == 200
        )
        with ThreadPoolExecutor(6) as pool:
            codes = list(
                pool.map(
                    lambda token: call(
                        base,
                        "POST",
                        f"/v1/tables/{table_id}/actions",
                        {"action": "declare", "choice": "in"},
                        token,
                    )[0],
                    tokens,
                )
            )
        assert codes == [200] * 6
        status, view = call(base, "GET", f"/v1/tables/{table_id}")
        assert view["phase"] == "between_deals"
        chips = sum(s["stack"] for s in view["seats"].values()) + view["pot"] + view["reserve"]
        assert chips == 6 * 50
        assert call(base, "GET", "/readyz")[0] == 200

        # each worker timed the collection after loading the app (a full one, generation
        # 2) and its requests moved that into the histogram
        def gc_pauses() -> str | None:
            with urllib.request.urlopen(base + "/metrics", timeout=30) as response:
                text = response.read().decode()
            wanted = 'cardroom_gc_pause_seconds_count{generation="2"}'
            return next((line for line in text.splitlines() if line.startswith(wanted)), None)

        assert wait_for(gc_pauses, seconds=60) is not None
        # a gevent worker sends its moves' Redis commands through the batcher, which
        # counts every batch (api.adapters.batching); the page shows the worker that answers it
        batched = 0.0
        for _ in range(20):
            with urllib.request.urlopen(base + "/metrics", timeout=30) as response:
                for line in response.read().decode().splitlines():
                    if line.startswith("cardroom_redis_batch_requests_count "):
                        batched = max(batched, float(line.split()[1]))
        assert batched > 0
    finally:
        assert gateway.stop() == 0
    # the master names the address, though with SO_REUSEPORT it holds no socket itself
    logs = (tmp_path / "gunicorn.log").read_text()
    assert f"Listening at: {base} (one SO_REUSEPORT socket per worker, 2 workers)" in logs
    # each gevent worker patched the standard library before anything took ssl's classes
    assert "MonkeyPatchWarning" not in logs


def test_watchers_beyond_the_command_pool_neither_fail_nor_starve_moves(
    redis_url: str, evaluator_address: str, tmp_path: Path
) -> None:
    """More event streams on one gevent worker than its pool for commands has connections.

    Each stream waits in XREAD BLOCK on a connection of its own pool; a burst of them
    opening at once (each reading the table first) waits for a command connection
    instead of being refused 503, and the moves that follow still get theirs.
    """
    watchers = COMMAND_CONNECTIONS + 64
    # every watcher comes from one address: more than its cap on streams
    gateway = GunicornGateway(
        redis_url, evaluator_address, tmp_path / "gunicorn.log", workers=1, STREAMS_PER_ADDRESS="0"
    )
    gateway.start()
    streams: list[socket.socket] = []
    try:
        http = gateway.http
        table_id = http.create(deal_pause_seconds=60)
        seats = [http.sit(table_id, f"w{i}") for i in range(2)]
        request = f"GET /v1/tables/{table_id}/events/stream HTTP/1.1\r\nHost: t\r\n\r\n".encode()
        for _ in range(watchers):
            stream = socket.create_connection(("127.0.0.1", gateway.port), timeout=30)
            stream.sendall(request)
            streams.append(stream)
        heads = [_read_until(stream, b"\r\n\r\n") for stream in streams]
        assert [head.split(b"\r\n", 1)[0] for head in heads] == [b"HTTP/1.1 200 OK"] * watchers
        assert http.act(table_id, seats[0], action="start").status_code == 200
        assert http.table(table_id)["phase"] == "declaring"
        for stream in streams[:: watchers // 16]:
            assert b"event: deal_started" in _read_until(stream, b"event: deal_started")
    finally:
        for stream in streams:
            stream.close()
        gateway.stop()


def _read_until(stream: socket.socket, marker: bytes) -> bytes:
    data = b""
    while marker not in data:
        chunk = stream.recv(4096)
        if not chunk:
            break
        data += chunk
    return data


def test_connections_opened_at_once_spread_over_the_workers(
    redis_url: str, evaluator_address: str, tmp_path: Path
) -> None:
    """Each worker listens on its own SO_REUSEPORT socket and the kernel spreads
    connections over them: a burst of keep-alive connections cannot all land on the
    worker that woke first, leaving the other idle while they last."""
    gateway = GunicornGateway(redis_url, evaluator_address, tmp_path / "gunicorn.log", workers=2)
    gateway.start()
    links = [http.client.HTTPConnection("127.0.0.1", gateway.port, timeout=30) for _ in range(32)]
    try:
        with ThreadPoolExecutor(32) as pool:
            assert set(
                pool.map(
                    lambda link: gateway.http.call("GET", "/healthz", connection=link).status_code,
                    links,
                )
            ) == {200}
        workers = gateway.workers()
        holders = Counter(
            process_holding(link.sock.getsockname()[1], gateway.port, workers) for link in links
        )
        assert set(holders) == set(workers)
        assert min(holders.values()) >= 4  # binomial(32, 1/2): below 4 once in a million
    finally:
        for link in links:
            link.close()
        gateway.stop()
