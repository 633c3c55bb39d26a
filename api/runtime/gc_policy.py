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

Each worker also times its collections (`api.telemetry.PAUSES`): `/metrics` shows them as
`cardroom_gc_pause_seconds{generation}`. A collection can start inside any code,
the metrics' own included, so the callback only notes the pause in a bounded queue,
and requests move what is noted into the histogram (api.telemetry) after they are
answered.
"""

from __future__ import annotations

import gc

from api.settings import DEFAULT_YOUNG_THRESHOLD
from api.telemetry import PAUSES, PauseLog

__all__ = ["DEFAULT_YOUNG_THRESHOLD", "PAUSES", "PauseLog", "settle_after_load"]


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
