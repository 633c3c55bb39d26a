"""Serve one port from several evaluator processes: a supervisor and its workers.

The supervisor starts `processes` workers (spawned, so that none inherits gRPC's state
from a parent), each of which builds its own gRPC server after it has started, bound to
the same port with `SO_REUSEPORT`: the kernel spreads the connections over them. Health
checks are answered by every worker (the health-only port is shared the same way);
the Prometheus metrics are written by each worker into `PROMETHEUS_MULTIPROC_DIR` and
served by the supervisor summed over the processes, the workers that stopped included.
SIGTERM or SIGINT reaches the supervisor, which passes SIGTERM to every worker: each
reports NOT_SERVING, lets its calls in flight finish for up to the grace period and
stops. A worker that dies on its own is started again; five deaths within a minute stop
the whole evaluator.
"""

from __future__ import annotations

import logging
import math
import multiprocessing
import multiprocessing.connection
import os
import shutil
import signal
import socket
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from evaluator.server import Handlers

log = logging.getLogger("evaluator")

# a worker that dies this often within this many seconds stops the evaluator
CRASHES_ALLOWED, CRASH_WINDOW = 5, 60.0
_READY_SECONDS = 120.0


def available_cores() -> int:
    """The cores this process may use: its CPU affinity, capped by a cgroup's CPU quota
    (a container limited to 2 CPUs on a 64-core node gets 2)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    quota = cpu_quota()
    return max(1, min(cores or 1, math.ceil(quota) if quota else cores or 1))


def cpu_quota(root: Path = Path("/sys/fs/cgroup")) -> float | None:
    """The cgroup's CPU limit in CPUs (cgroup v2's cpu.max, else v1's CFS quota), or None."""
    try:
        quota, period = (root / "cpu.max").read_text().split()[:2]
    except (OSError, ValueError):
        try:
            quota = (root / "cpu" / "cpu.cfs_quota_us").read_text().strip()
            period = (root / "cpu" / "cpu.cfs_period_us").read_text().strip()
        except OSError:
            return None
    if quota in ("max", "-1") or int(period) <= 0:
        return None
    return int(quota) / int(period)


@dataclass(frozen=True)
class WorkerSettings:
    """What each worker needs to build its server (picklable: it crosses a spawn)."""

    listen: str
    workers: int
    grace: float
    log_level: str
    tls: tuple[str, str, str | None] | None
    health_listen: str | None
    # a module-level function (it crosses the spawn by name); None: the evaluator's
    handlers: Handlers | None = None


def split_address(address: str) -> tuple[str, int]:
    """`host:port` (the host may be `[::]`) as the host as written and the port."""
    host, _, port = address.rpartition(":")
    return host, int(port)


def reserve_port(address: str) -> tuple[str, socket.socket]:
    """The address with its port chosen, when it asks for port 0, and the socket that
    holds that port (bound with SO_REUSEPORT, never listening) until the workers stop.

    A port something already listens on is refused (OSError), though that something
    allowed SO_REUSEPORT: an evaluator left running must not share its port unseen."""
    host, port = split_address(address)
    family, kind, _, _, where = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)[
        0
    ]
    if port != 0:
        with socket.socket(family, kind) as probe:  # without SO_REUSEPORT
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                probe.bind(where)
            except OSError as error:
                raise OSError(f"cannot listen on {address}: {error.strerror}") from None
    holder = socket.socket(family, kind)
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    holder.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    holder.bind(where)
    return f"{host}:{holder.getsockname()[1]}", holder


def stop_on_signals() -> threading.Event:
    """An event that SIGTERM or SIGINT sets."""
    stopping = threading.Event()

    def request_stop(signum: int, frame: FrameType | None) -> None:
        stopping.set()

    signal.signal(signal.SIGTERM, request_stop)
    signal.signal(signal.SIGINT, request_stop)
    return stopping


def run_worker(
    settings: WorkerSettings, index: int, ready: multiprocessing.connection.Connection
) -> None:
    """One worker: build the server after the start, report its port, serve until
    SIGTERM, SIGINT or the supervisor's death, then stop gracefully."""
    from evaluator.server import TlsFiles, create_server, evaluator_handlers, warm_up
    from evaluator.telemetry import configure_logging

    configure_logging(settings.log_level)
    stopping = stop_on_signals()
    parent = multiprocessing.parent_process()
    if parent is not None:  # an orphan stops too (the supervisor was killed)
        sentinel = parent.sentinel

        def watch_parent() -> None:
            multiprocessing.connection.wait([sentinel])
            stopping.set()

        threading.Thread(target=watch_parent, daemon=True).start()
    warm_up()
    tls = TlsFiles(*settings.tls) if settings.tls else None
    server = create_server(
        settings.listen,
        settings.workers,
        tls,
        health_address=settings.health_listen,
        reuse_port=True,
        handlers=settings.handlers or evaluator_handlers,
    )
    server.start()
    ready.send(server.port)
    ready.close()
    stopping.wait()
    log.debug("evaluator process stopping", extra={"index": index, "pid": os.getpid()})
    server.stop(settings.grace)


class Supervisor:
    """Starts, watches, restarts and stops the workers."""

    def __init__(self, settings: WorkerSettings, processes: int) -> None:
        """Prepare `processes` workers serving `settings.listen` (port 0 picks one)."""
        self.listen, holder = reserve_port(settings.listen)
        self._holders = [holder]
        health_listen = None
        if settings.health_listen:
            health_listen, health_holder = reserve_port(settings.health_listen)
            self._holders.append(health_holder)
        self.settings = WorkerSettings(
            self.listen,
            settings.workers,
            settings.grace,
            settings.log_level,
            settings.tls,
            health_listen,
            settings.handlers,
        )
        self.processes = processes
        self._context = multiprocessing.get_context("spawn")
        self.workers: list[BaseProcess | None] = [None] * processes
        self._crashes: list[float] = []
        self.port = split_address(self.listen)[1]

    def _spawn(self, index: int) -> BaseProcess:
        receiver, sender = self._context.Pipe(duplex=False)
        worker = self._context.Process(
            target=run_worker,
            args=(self.settings, index, sender),
            name=f"evaluator-{index}",
            daemon=False,
        )
        worker.start()
        sender.close()
        if not receiver.poll(_READY_SECONDS):
            worker.kill()
            raise OSError(f"evaluator process {index} did not start serving {self.listen}")
        try:
            receiver.recv()
        except EOFError:
            worker.join()
            raise OSError(
                f"evaluator process {index} could not serve {self.listen}"
                f" (exit code {worker.exitcode})"
            ) from None
        self.workers[index] = worker
        return worker

    def start(self) -> None:
        """Start every worker and wait until each serves."""
        try:
            for index in range(self.processes):
                self._spawn(index)
        except OSError:
            self.stop(0)
            raise

    def watch(self, stopping: threading.Event) -> bool:
        """Restart the workers that die until `stopping` is set; False when they die
        too often (the evaluator must then stop)."""
        while not stopping.is_set():
            alive = [worker for worker in self.workers if worker is not None]
            multiprocessing.connection.wait([w.sentinel for w in alive], timeout=0.5)
            for index, worker in enumerate(self.workers):
                if worker is None or worker.is_alive() or stopping.is_set():
                    continue
                now = time.monotonic()
                self._crashes = [t for t in self._crashes if now - t < CRASH_WINDOW] + [now]
                log.error(
                    "evaluator process died",
                    extra={"index": index, "pid": worker.pid, "exit_code": worker.exitcode},
                )
                if len(self._crashes) >= CRASHES_ALLOWED:
                    return False
                self._spawn(index)
        return True

    def pids(self) -> list[int]:
        """The workers' process ids."""
        return [worker.pid for worker in self.workers if worker is not None and worker.pid]

    def stop(self, grace: float) -> None:
        """SIGTERM every worker and wait for each (grace, plus a margin; then SIGKILL)."""
        for worker in self.workers:
            if worker is not None and worker.is_alive():
                os.kill(worker.pid or 0, signal.SIGTERM)
        deadline = time.monotonic() + grace + 10
        for worker in self.workers:
            if worker is None:
                continue
            worker.join(max(0.0, deadline - time.monotonic()))
            if worker.is_alive():
                worker.kill()
                worker.join()
        for holder in self._holders:
            holder.close()


def metrics_directory() -> tuple[str, Callable[[], None]]:
    """The folder the workers write their metrics to (PROMETHEUS_MULTIPROC_DIR, emptied
    of an earlier run's files, or a new temporary one) and how to clean it up."""
    given = os.environ.get("PROMETHEUS_MULTIPROC_DIR")
    if given:
        Path(given).mkdir(parents=True, exist_ok=True)
        for stale in Path(given).glob("*.db"):
            stale.unlink()
        return given, lambda: None
    made = tempfile.mkdtemp(prefix="cardroom-evaluator-metrics-")
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = made
    return made, lambda: shutil.rmtree(made, ignore_errors=True)
