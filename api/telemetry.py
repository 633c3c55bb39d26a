"""Prometheus metrics of the gateway: requests by route and status, and their latency."""

from __future__ import annotations

import gc
import os
import time
from collections import deque
from typing import Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Histogram,
    generate_latest,
    multiprocess,
)


class PauseLog:
    """The collections of this process, timed, until `drain` takes them."""

    def __init__(self, limit: int = 4096) -> None:
        """Keep at most `limit` pauses not yet drained (the oldest go first)."""
        self._pending: deque[tuple[int, float]] = deque(maxlen=limit)
        self._started = 0.0
        self._installed = False

    def _callback(self, phase: str, info: dict[str, Any]) -> None:
        # runs inside the collection: no lock may be taken here, only a note made
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self._pending.append((int(info["generation"]), time.perf_counter() - self._started))

    def install(self) -> None:
        """Time every collection of this process from now on (once; again is a no-op)."""
        if not self._installed:
            gc.callbacks.append(self._callback)
            self._installed = True

    def uninstall(self) -> None:
        """Stop timing collections; what is noted stays until drained."""
        if self._installed:
            gc.callbacks.remove(self._callback)
            self._installed = False

    def drain(self) -> list[tuple[int, float]]:
        """The (generation, seconds) of the collections since the last drain."""
        pending = self._pending
        drained: list[tuple[int, float]] = []
        while pending:  # nearly always empty: a request pays one truth test
            try:
                drained.append(pending.popleft())
            except IndexError:  # another thread took the last one
                break
        return drained


# this process's collections, timed (installed by api.runtime.gc_policy's caller)
PAUSES = PauseLog()


REGISTRY = CollectorRegistry()
REQUESTS = Counter(
    "cardroom_http_requests",
    "HTTP requests by route and status.",
    ["method", "route", "status"],
    registry=REGISTRY,
)
LATENCY = Histogram(
    "cardroom_http_request_seconds",
    "Time to answer an HTTP request (long polls and streams excluded), by route.",
    ["method", "route"],
    registry=REGISTRY,
)
WARM_MOVES = Counter(
    "cardroom_warm_moves",
    "Changes computed from the table as this process last committed it, without a read"
    " (api.adapters.warm), by result: hit (committed in one round trip), stale (another change"
    " came first: read and computed again), refused (an error is only given from a read).",
    ["result"],
    registry=REGISTRY,
)
HOST_COPIES = Counter(
    "cardroom_host_copies",
    "Changes of a table another worker of the host committed last (api.adapters.host_commits),"
    " by result: used (computed from the copy that worker left in the host's memory), missing"
    " (the host held no copy of that commit: the table was read from Redis).",
    ["result"],
    registry=REGISTRY,
)
REDIS_BATCHES = Histogram(
    "cardroom_redis_batch_requests",
    "Requests whose Redis commands went to Redis together, per batch a gevent worker"
    " sent (api.adapters.batching); 1 when no other batch was on the wire.",
    buckets=(1, 2, 3, 4, 6, 8, 12, 16, 32, 64),
    registry=REGISTRY,
)
WEBHOOK_DELIVERIES = Counter(
    "cardroom_webhook_deliveries",
    "Webhook attempts by outcome (api.service.webhooks): delivered (a 2xx), failed (tried"
    " again later), dead (given up on, kept in {webhooks}:dead), dropped (a turn warning whose"
    " turn was taken).",
    ["outcome"],
    registry=REGISTRY,
)
GC_PAUSES = Histogram(
    "cardroom_gc_pause_seconds",
    "Time the process stood still collecting garbage, by generation (api.runtime.gc_policy).",
    ["generation"],
    buckets=(0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1.0),
    registry=REGISTRY,
)


# The methods counted under their own name: any other a client sends is one label,
# `other`, so that made-up methods cannot grow the metrics without end.
METHOD_LABELS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
OTHER_METHOD = "other"


def method_label(method: str) -> str:
    """The label a request's method is counted under: its name, or `other`."""
    return method if method in METHOD_LABELS else OTHER_METHOD


def observe_request(method: str, route: str, status: int, started: float | None) -> None:
    """Count a request answered with `status`, timed from `started` (perf_counter) if given.

    Also moves the garbage collector's pauses noted since the last request into their
    histogram (a collection may start inside the metrics' own locked code, so the
    collector's callback only notes them).
    """
    method = method_label(method)
    REQUESTS.labels(method, route, str(status)).inc()
    if started is not None:
        LATENCY.labels(method, route).observe(time.perf_counter() - started)
    for generation, seconds in PAUSES.drain():
        GC_PAUSES.labels(str(generation)).observe(seconds)


def metrics_page() -> tuple[bytes, str]:
    """The metrics page and its type; across gunicorn workers with PROMETHEUS_MULTIPROC_DIR."""
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)  # type: ignore[no-untyped-call]
        return generate_latest(registry), CONTENT_TYPE_LATEST
    return generate_latest(REGISTRY), CONTENT_TYPE_LATEST
