"""The service as separate processes that a test can stop, freeze and kill.

A gunicorn gateway, a `python -m evaluator` and a durable redis-server, each on a
fixed loopback port (so a replacement can take the same address), with their logs
written to files; a small HTTP client that keeps every status, header and body; and
the /proc readings that tell which process holds which connection, so a fault can be
injected at a moment that is certain rather than guessed.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import grpc

from bench.service import children
from cardroom.evaluator.v1 import evaluator_pb2 as pb
from cardroom.evaluator.v1 import evaluator_pb2_grpc as pb_grpc
from deploy import validate
from tests.conftest import RedisProcess, free_port
from tests.integration.tables_api import Player, TableCalls

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "deploy" / "compose.yaml"
T = TypeVar("T")


def poll(predicate: Callable[[], T | None], seconds: float = 30.0, what: str = "condition") -> T:
    """Call `predicate` until it returns something truthy (errors count as not yet)."""
    deadline = time.monotonic() + seconds
    last: BaseException | None = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
        except (OSError, http.client.HTTPException) as error:
            last = error
        else:
            if value:
                return value
        time.sleep(0.05)
    raise AssertionError(f"{what}: not met within {seconds} s (last error: {last!r})")


# ---------------------------------------------------------------- Redis


def deployed_redis_persistence() -> list[str]:
    """The persistence flags of the Redis that deploy/compose.yaml runs."""
    import yaml

    document = yaml.safe_load(COMPOSE.read_text())
    command = [str(part) for part in document["services"]["redis"]["command"]]
    flags: list[str] = []
    for name in ("--appendonly", "--appendfsync", "--save"):
        if name in command:
            flags += [name, command[command.index(name) + 1]]
    return flags


class DurableRedis(RedisProcess):
    """A redis-server run with the deployed persistence flags, restartable from its files."""

    def persistence(self) -> list[str]:
        """The persistence flags the deployment runs Redis with."""
        return deployed_redis_persistence()

    def start(self) -> None:
        """Start (replaying the append-only file if one exists) and wait until it answers."""
        super().start()
        # loading a large AOF answers LOADING for a moment; wait until it serves
        import redis

        poll(lambda: redis.Redis(port=self.port).dbsize() is not None, what="redis loaded")

    def kill(self) -> None:
        """SIGKILL: no shutdown, no final fsync; only what was already on disk survives."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None


# ---------------------------------------------------------------- evaluator


class EvaluatorProcess:
    """`python -m evaluator` on a fixed port; stopped, frozen or killed by signals."""

    def __init__(self, logs: Path, port: int | None = None) -> None:
        """Prepare (not start) an evaluator writing its log to `logs`."""
        self.port = port or free_port()
        self.metrics_port = free_port()
        self.logs = logs
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        """host:port of its gRPC service."""
        return f"127.0.0.1:{self.port}"

    def start(self, log_level: str = "info") -> None:
        """Start and wait until it answers a Ping."""
        with self.logs.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "evaluator",
                    "--listen",
                    self.address,
                    "--metrics-port",
                    str(self.metrics_port),
                    "--grace",
                    "1",
                    "--log-level",
                    log_level,
                ],
                cwd=ROOT,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        with grpc.insecure_channel(self.address) as channel:
            pb_grpc.EvaluatorStub(channel).Ping(pb.PingRequest(), wait_for_ready=True, timeout=60)

    def signal(self, number: signal.Signals) -> None:
        """Send a signal (SIGSTOP freezes it, SIGCONT thaws it)."""
        assert self.process is not None
        self.process.send_signal(number)

    def kill(self) -> None:
        """SIGKILL and reap it."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None

    def stop(self) -> None:
        """SIGTERM (thawing it first, since a frozen process cannot handle it)."""
        if self.process is not None:
            self.process.send_signal(signal.SIGCONT)
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)
            self.process = None


# ---------------------------------------------------------------- HTTP


@dataclass
class Reply:
    """One HTTP response, kept whole: status, headers and the raw body."""

    status_code: int
    headers: dict[str, str]
    data: bytes

    @property
    def mimetype(self) -> str:
        """The media type without parameters."""
        return self.headers.get("content-type", "").split(";")[0].strip()

    @property
    def is_json(self) -> bool:
        """True for application/json and application/problem+json."""
        return self.mimetype.endswith("json")

    def get_json(self) -> Any:
        """The body parsed as JSON."""
        return json.loads(self.data)

    def text(self) -> str:
        """The body as text."""
        return self.data.decode("utf-8", "replace")

    def get_data(self, as_text: bool = False) -> bytes | str:
        """The body, as bytes or as text (as werkzeug's responses have it)."""
        return self.text() if as_text else self.data


# a seated player over HTTP is the same as in process
Seat = Player


@dataclass
class HttpGateway(TableCalls):
    """Requests to a gateway over real HTTP; optionally records every reply it gets."""

    base_port: int
    timeout: float = 60.0
    record: Callable[[Seat | None, str, str, Reply], None] | None = None
    sent: int = 0
    bytes_received: int = field(default=0)

    def call(
        self,
        method: str,
        path: str,
        viewer: Seat | None = None,
        json_body: Any = None,
        headers: dict[str, str] | None = None,
        connection: http.client.HTTPConnection | None = None,
    ) -> Reply:
        """One request on a fresh (or the given) connection; the whole reply."""
        sending = dict(headers or {})
        if viewer is not None:
            sending.update(viewer.auth)
        body = None
        if json_body is not None:
            body = json.dumps(json_body).encode()
            sending["Content-Type"] = "application/json"
        own = connection is None
        link = connection or http.client.HTTPConnection(
            "127.0.0.1", self.base_port, timeout=self.timeout
        )
        try:
            link.request(method, path, body=body, headers=sending)
            response = link.getresponse()
            reply = Reply(
                response.status, {k.lower(): v for k, v in response.getheaders()}, response.read()
            )
        finally:
            if own:
                link.close()
        self.sent += 1
        self.bytes_received += len(reply.data) + sum(
            len(k) + len(v) for k, v in reply.headers.items()
        )
        if self.record is not None:
            self.record(viewer, method, path, reply)
        return reply

    def json_call(self, method: str, path: str, player: Seat | None, body: Any) -> Reply:
        """One request through `call`, with `body` as JSON unless it is None."""
        return self.call(method, path, player, json_body=body)

    def status(self, path: str) -> int:
        """The status of a GET (health probes)."""
        return self.call("GET", path).status_code


# ---------------------------------------------------------------- gunicorn


class GunicornGateway:
    """The gateway as deployed: `gunicorn -c gateway/runtime/gunicorn_conf.py gateway.wsgi:app`."""

    def __init__(
        self,
        redis_url: str,
        evaluator_addr: str,
        logs: Path,
        workers: int = 2,
        threads: int = 8,
        **environment: str,
    ) -> None:
        """Prepare (not start) a gateway writing its log (standard error) to `logs`."""
        self.port = free_port()
        self.logs = logs
        self.environment = {
            **os.environ,
            "REDIS_URL": redis_url,
            "EVALUATOR_ADDR": evaluator_addr,
            "GATEWAY_BIND": f"127.0.0.1:{self.port}",
            "GATEWAY_WORKERS": str(workers),
            "GATEWAY_THREADS": str(threads),
            "GATEWAY_GRACEFUL_TIMEOUT": "5",
            "LOG_LEVEL": "info",
            **environment,
        }
        self.process: subprocess.Popen[bytes] | None = None
        self.http = HttpGateway(self.port)

    def start(self) -> None:
        """Start and wait until every worker is up and /healthz answers."""
        with self.logs.open("ab") as log:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "gunicorn",
                    "-c",
                    "gateway/runtime/gunicorn_conf.py",
                    "gateway.wsgi:app",
                ],
                cwd=ROOT,
                env=self.environment,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        expected = int(self.environment["GATEWAY_WORKERS"])
        poll(lambda: len(self.workers()) == expected, 60, "gunicorn workers started")
        poll(lambda: self.http.status("/healthz") == 200, 60, "gateway answers /healthz")

    @property
    def url(self) -> str:
        """http://127.0.0.1:port of the gateway."""
        return f"http://127.0.0.1:{self.port}"

    def workers(self) -> list[int]:
        """The pids of the master's live worker processes."""
        assert self.process is not None
        return children(self.process.pid)

    def wait_for_replacement(self, victim: int) -> None:
        """Wait until the master has replaced a killed worker and runs its full count."""
        expected = int(self.environment["GATEWAY_WORKERS"])

        def replaced() -> bool:
            workers = self.workers()
            return len(workers) == expected and victim not in workers

        poll(replaced, 60, "gunicorn replaces the worker")

    def stop(self) -> int | None:
        """SIGTERM and wait for the exit (killed after 60 s); its exit code."""
        if self.process is None:
            return None
        self.process.terminate()
        try:
            code = self.process.wait(60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait(10)
        self.process = None
        return code


# ---------------------------------------------------------------- /proc


@dataclass(frozen=True)
class Socket:
    """One TCP socket of /proc/net/tcp."""

    local_port: int
    remote_port: int
    state: int
    receive_queue: int
    inode: int


def tcp_sockets() -> list[Socket]:
    """Every TCP socket of this network namespace (gRPC listens on IPv6, v4-mapped)."""
    sockets = []
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            parts = line.split()
            local, remote = parts[1].rsplit(":", 1)[1], parts[2].rsplit(":", 1)[1]
            receive = parts[4].split(":")[1]
            sockets.append(
                Socket(
                    int(local, 16),
                    int(remote, 16),
                    int(parts[3], 16),
                    int(receive, 16),
                    int(parts[9]),
                )
            )
    return sockets


ESTABLISHED = 1


def unread_request_at(port: int) -> bool:
    """True once a connection to the server on `port` holds bytes the server has not read.

    With the server frozen (SIGSTOP), this says a client's request has reached it.
    """
    return any(
        s.local_port == port and s.state == ESTABLISHED and s.receive_queue > 0
        for s in tcp_sockets()
    )


def process_holding(client_port: int, server_port: int, candidates: list[int]) -> int | None:
    """Which of `candidates` holds the server end of the connection from `client_port`."""
    inodes = {
        s.inode
        for s in tcp_sockets()
        if s.local_port == server_port and s.remote_port == client_port and s.inode
    }
    for pid in candidates:
        try:
            for descriptor in Path(f"/proc/{pid}/fd").iterdir():
                target = os.readlink(descriptor)
                if target.startswith("socket:[") and int(target[8:-1]) in inodes:
                    return pid
        except OSError:
            continue
    return None


def image_healthcheck(dockerfile: str) -> list[str]:
    """The HEALTHCHECK command of an image in deploy/, as the container runtime runs it."""
    commands = validate.dockerfile_commands(validate.DEPLOY / dockerfile)
    (command,) = [command for keyword, _, command in commands if keyword == "HEALTHCHECK"]
    return [sys.executable, *command[1:]]


def run_with(command: list[str], **environment: str) -> int:
    """Run `command` with these variables added to the environment; its exit code."""
    return subprocess.run(
        command, env={**os.environ, **environment}, capture_output=True, timeout=30, check=False
    ).returncode
