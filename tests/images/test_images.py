"""The built images as deployed: deploy/compose.yaml under podman, played through the edge.

Each test talks to the service as a client would, through the edge's published
loopback port, or runs a command inside a container (`podman exec`, `podman
healthcheck run`); nothing reaches the containers' own addresses.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import threading
import time
import tomllib
from functools import partial

import httpx
import pytest

from cardroom_client import Client, GutsOptions
from deploy import demo
from tests.images.stack import ROOT, SERVICES, Stack, podman, wait_until

# the evaluator image's own grpcio-health-checking, asked for the whole server and
# for the Evaluator service by name
GRPC_HEALTH = """
import sys, grpc
from grpc_health.v1 import health_pb2 as h, health_pb2_grpc as hg
stub = hg.HealthStub(grpc.insecure_channel("127.0.0.1:50051"))
for service in ("", "cardroom.evaluator.v1.Evaluator"):
    status = stub.Check(h.HealthCheckRequest(service=service), timeout=5).status
    print(repr(service), h.HealthCheckResponse.ServingStatus.Name(status))
    if status != h.HealthCheckResponse.SERVING:
        sys.exit(1)
"""


# PyJWT with cryptography's native code, as the gateway verifies an identity
# provider's token: an EdDSA and an ES256 token signed and verified in the container
JWT_ROUND_TRIP = """
import jwt
from cryptography.hazmat.primitives.asymmetric import ec, ed25519
for algorithm, key in (("EdDSA", ed25519.Ed25519PrivateKey.generate()),
                       ("ES256", ec.generate_private_key(ec.SECP256R1()))):
    token = jwt.encode({"sub": "ann", "exp": 4102444800}, key, algorithm=algorithm)
    claims = jwt.decode(token, key.public_key(), algorithms=[algorithm])
    assert claims["sub"] == "ann", claims
    print(algorithm, "ok")
"""


def player(url: str, name: str) -> Client:
    """A client that sends the key of a new player named `name` (open mode)."""
    with Client(url, timeout=30) as anonymous:
        key = anonymous.create_player(name).key
    return Client(url, timeout=30, credential=key)


def test_every_service_passes_its_own_health_check(stack: Stack) -> None:
    for service in SERVICES:
        # the clock's heartbeat and the evaluator's start period may need a moment
        wait_until(partial(stack.healthy, service), 90, f"{service}'s health check")


def test_the_gateway_image_holds_the_project_s_runtime_dependencies(stack: Stack) -> None:
    pinned = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    # "gunicorn[gevent]==27.0.1": the distribution is gunicorn
    wanted = {
        name.partition("[")[0]: version
        for name, version in (requirement.split("==") for requirement in pinned)
    }
    assert {"PyJWT", "cryptography"} <= set(wanted)
    program = (
        "import json, sys; from importlib.metadata import version; "
        "print(json.dumps({name: version(name) for name in sys.argv[1:]}))"
    )
    for service in ("gateway", "clock"):
        found = podman("exec", stack.container(service), "python", "-c", program, *wanted)
        assert json.loads(found) == wanted, service
    out = podman("exec", stack.container("gateway"), "python", "-c", JWT_ROUND_TRIP)
    assert out.split() == ["EdDSA", "ok", "ES256", "ok"]


def test_a_guts_and_a_paiute_deal_play_through_the_containers(stack: Stack) -> None:
    lines: list[str] = []
    status = demo.main(["--url", stack.url, "--timeout", "60"], say=lines.append)
    transcript = "\n".join(lines)
    assert status == 0, transcript
    assert "gateway ready: redis ok, evaluator ok" in transcript
    assert re.search(r"Guts deal 1 complete: \w+, fairness verified\.", transcript), transcript
    assert re.search(r"Paiute deal 1 complete: \w+, fairness verified\.", transcript), transcript


def test_the_evaluator_answers_the_standard_grpc_health_service(stack: Stack) -> None:
    out = podman("exec", stack.container("evaluator"), "python", "-c", GRPC_HEALTH)
    assert "'' SERVING" in out
    assert "'cardroom.evaluator.v1.Evaluator' SERVING" in out


def test_tables_survive_a_redis_restart(stack: Stack) -> None:
    with (
        Client(stack.url, timeout=30) as client,
        player(stack.url, "ann") as ann,
        player(stack.url, "bo") as bo,
    ):
        # seated, no game started: no deadline can move the table on meanwhile
        table = ann.create_table(GutsOptions(), name="kept across a restart")
        for name, seated in (("ann", ann), ("bo", bo)):
            seated.take_seat(table.id, name, 100)
        before = client.table(table.id)
        podman("restart", "--time", "10", stack.container("redis"), timeout=120)
        wait_until(stack.ready, 120, "/readyz after Redis restarted")
        after = client.table(table.id)
        assert after.version == before.version
        assert after.hand_number == before.hand_number
        assert {n: s.name for n, s in after.seats.items()} == {
            n: s.name for n, s in before.seats.items()
        }
        assert table.id in {summary.id for summary in client.lobby()}
        # the players and their keys were kept too
        assert ann.me().name == "ann"


# ---------------------------------------------------------------- the edge


def test_the_edge_compresses_json(stack: Stack) -> None:
    reply = httpx.get(f"{stack.url}/openapi.json", headers={"Accept-Encoding": "gzip"},
                      timeout=30)  # fmt: skip
    assert reply.status_code == 200
    assert reply.headers["content-encoding"] == "gzip"
    assert reply.headers["content-type"].startswith("application/json")
    assert json.loads(reply.content)  # httpx has undone the gzip


def test_the_edge_refuses_a_body_over_the_limit_with_the_gateway_problem(stack: Stack) -> None:
    reply = httpx.post(f"{stack.url}/v1/tables", content=b"x" * (300 * 1024),
                       headers={"Content-Type": "application/json"}, timeout=30)  # fmt: skip
    assert reply.status_code == 413
    assert reply.headers["content-type"] == "application/problem+json"
    assert reply.json()["code"] == "body_too_large"


def test_the_edge_passes_event_streams_unbuffered(stack: Stack) -> None:
    with (
        Client(stack.url, timeout=30) as client,
        player(stack.url, "ann") as host,
        player(stack.url, "bo") as guest,
    ):
        table = host.create_table(GutsOptions(), name="streamed")
        ann = host.take_seat(table.id, "ann", 100)
        guest.take_seat(table.id, "bo", 100)
        seen: list[str] = []

        def watch() -> None:
            # the stream stays open: only an unbuffered edge delivers its first events
            # while the gateway is still holding the connection
            stream = client.stream(table.id, until=time.monotonic() + 60)
            for event in stream:
                seen.append(event.type)
                if event.type == "game_started":
                    return

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        wait_until(lambda: "seated" in seen or bool(seen), 60, "the stream's first events")
        ann.start()
        watcher.join(70)
        assert "game_started" in seen, seen


def test_the_edge_keeps_stream_tickets_out_of_its_access_log(stack: Stack) -> None:
    with player(stack.url, "ann") as ann:
        table = ann.create_table(GutsOptions(), name="ticketed")
        ann.take_seat(table.id, "ann", 100)
        ticket = ann.stream_ticket(table.id).ticket
    stream = f"{stack.url}/v1/tables/{table.id}/events/stream"
    with httpx.stream("GET", stream, params={"ticket": ticket}, timeout=30) as reply:
        assert reply.status_code == 200
        # the ticket opened the stream: its events come
        for line in reply.iter_lines():
            if line == "event: table_created":
                break
    logged = f"/v1/tables/{table.id}/events/stream"

    def requests() -> list[str]:
        """The paths of the requests in the edge's access log (its standard output)."""
        return re.findall(r'"[A-Z]+ (\S*) HTTP/[\d.]+"', podman("logs", stack.container("edge")))

    wait_until(lambda: logged in requests(), 30, "the stream's line in the access log")
    everything = subprocess.run(
        ["podman", "logs", stack.container("edge")],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30, check=True,
    ).stdout  # fmt: skip
    assert ticket not in everything
    # no query string is logged, the stream's nor any other (the demo's long polls)
    assert [path for path in requests() if "?" in path] == []


def _post_404s(stack: Stack) -> float:
    """The gateway's count of answered POSTs to unknown routes, from its /metrics."""
    text = httpx.get(f"{stack.url}/metrics", timeout=30).text
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("cardroom_http_requests_total{")
        and 'method="POST"' in line
        and 'status="404"' in line
    )


def _slow_post(port: int, body: bytes, answers: list[bytes]) -> None:
    """POST `body` to an unknown route one byte a second; the status line it gets back."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as link:
        link.sendall(
            b"POST /v1/slowly HTTP/1.1\r\nHost: edge\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n"
        )
        for byte in body:
            link.sendall(bytes([byte]))
            time.sleep(1)
        answers.append(link.recv(4096).split(b"\r\n", 1)[0])


@pytest.mark.parametrize("clients", [6])
def test_slow_clients_are_held_by_the_edge_while_play_goes_on(stack: Stack, clients: int) -> None:
    # each body takes ~8 s to arrive, within the edge's client_body_timeout (10 s
    # between two reads); bounded: `clients` connections of 8 bytes each
    body = b'{"a":1}\n'
    seen_before = _post_404s(stack)
    answers: list[bytes] = []
    slow = [
        threading.Thread(target=_slow_post, args=(stack.port, body, answers), daemon=True)
        for _ in range(clients)
    ]
    for thread in slow:
        thread.start()
    # a whole deal of normal play while the slow bodies trickle in
    lines: list[str] = []
    status = demo.main(["--url", stack.url, "--timeout", "60"], say=lines.append)
    still_sending = sum(thread.is_alive() for thread in slow)
    seen_meanwhile = _post_404s(stack)
    for thread in slow:
        thread.join(60)
    assert status == 0, "\n".join(lines)
    # the gateway saw none of the slow requests while their bodies were incomplete...
    if still_sending:
        assert seen_meanwhile - seen_before <= clients - still_sending
    # ...and each of them, whole, once it had arrived
    assert [answer.split()[:2] for answer in answers] == [[b"HTTP/1.1", b"404"]] * clients
    wait_until(lambda: _post_404s(stack) - seen_before == clients, 30, "the gateway's 404 count")


def test_the_edge_times_out_a_stalled_body(stack: Stack) -> None:
    with socket.create_connection(("127.0.0.1", stack.port), timeout=60) as link:
        link.sendall(
            b"POST /v1/tables HTTP/1.1\r\nHost: edge\r\nContent-Type: application/json\r\n"
            b"Content-Length: 100\r\n\r\n{"
        )
        # nothing more: the edge gives up after client_body_timeout and closes
        reply = b""
        try:
            while chunk := link.recv(4096):
                reply += chunk
        except ConnectionResetError:
            pass  # reset_timedout_connection: the edge drops it without a goodbye
    assert reply == b"" or reply.startswith(b"HTTP/1.1 408"), reply[:200]
