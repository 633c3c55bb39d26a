"""How a gateway worker's garbage collector runs: once the app is loaded, its objects
are frozen out of every collection, and young collections run less often.

A worker holds tens of thousands of long-lived objects from its imports (Flask, gRPC,
redis-py, the JSON schemas). With Python's defaults each move's allocations set off
a young collection about every request, and every few hundred requests a full one
walked all of those objects: measured in one gevent worker over 15,360 declares, 1.24 s
of collections, 34 full ones of 24 ms each, during which the worker answered nothing.
With the loaded objects frozen and a young collection every 10,000 allocations
instead of 700, the same work spent 90 ms in 44 collections of about 2 ms, and a
declare took 420 to 440 µs of CPU instead of 490 (`docs/performance.md`).

Reference cycles are still collected, only less often; memory freed by reference
counting (nearly all of it) is freed at once as before.

Each worker also times its collections (`PAUSES`): `/metrics` shows them as
`cardroom_gc_pause_seconds{generation}`. A collection can start inside any code,
the metrics' own included, so the callback only notes the pause in a bounded queue,
and requests move what is noted into the histogram (gateway.telemetry) after they are
answered.
"""

from __future__ import annotations

import gc
import time
from collections import deque
from typing import Any

# allocations (less deallocations) between young collections; Python's default is 700
DEFAULT_YOUNG_THRESHOLD = 10_000


def settle_after_load(young_threshold: int) -> None:
    """Collect what loading left, freeze the survivors and set the young threshold.

    Call once the app is loaded and before it serves (gunicorn's `post_worker_init`).
    `young_threshold` 0 turns the policy off: nothing is frozen, Python's thresholds
    stay (`make bench-gateway ARGS=--gc` compares the two).
    """
    if young_threshold <= 0:
        return
    gc.collect()
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(young_threshold, middle, old)


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


PAUSES = PauseLog()
