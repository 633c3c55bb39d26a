"""What a run of the gateway's benchmark measures: how long and how much each part
takes (`Plan`: a full run, `--quick`, `--smoke`), its clients, its tables' options and
the targets its figures are read against."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

CLIENTS = 32
PLAYERS = 5
BUY_IN = 100_000
# long deadlines (a declaration is always in time), no pause between deals (the clock
# deals the next one at its next tick), a cap so that nobody runs out of chips
GUTS_OPTIONS: dict[str, Any] = {
    "ante": 1,
    "cap": 10,
    "turn_seconds": 3600,
    "deal_pause_seconds": 0,
    "min_buy_in": 100,
    "max_buy_in": 1_000_000,
    "max_players": PLAYERS,
}
TARGETS = {
    "move_vs_trivial": 0.5,
    "deals_per_second": 150.0,
    "move_p99_ms": 50.0,
    "delivery_p99_ms": 50.0,
}


@dataclass(frozen=True)
class Plan:
    """How long and how much each part of a run measures."""

    rounds: int
    seconds: float  # per timed round
    tables_per_client: int  # for the declare rounds (half with each kind of answer)
    deal_window: float  # seconds per round of the deals run
    growth_levels: tuple[int, ...]
    growth_window: float
    # --gc: runs of each setting, tables per client (all warm in one worker), deals
    gc_pairs: int = 3
    gc_tables_per_client: int = 25
    gc_deals: int = 4
    # --steps: tables per round (four declares each, half of them timed step by step)
    step_tables: int = 400
    # --scaling: the worker counts tried with each worker class
    scaling_workers: tuple[int, ...] = (1, 2, 4)
    # --profile: deals profiled (their declares, then their showdowns)
    profile_deals: int = 60
    # --batch: runs of each REDIS_BATCH setting, request rounds per run
    batch_pairs: int = 3
    batch_rounds: int = 3
    # buy-ins and cash-outs: fresh tables per client a round, each of PLAYERS seats
    seat_tables: int = 4


FULL = Plan(5, 2.0, 16, 3.0, (10, 1_000, 10_000), 2.0)
QUICK = Plan(5, 0.6, 8, 1.0, (10, 1_000), 0.8, gc_pairs=2, gc_tables_per_client=15, gc_deals=3,
             step_tables=200, batch_pairs=2, seat_tables=2)  # fmt: skip
# every part once, as briefly as it runs: proves the benchmark works, measures nothing
SMOKE = Plan(1, 0.2, 2, 0.5, (10,), 0.3, gc_pairs=1, gc_tables_per_client=1, gc_deals=1,
             step_tables=4, scaling_workers=(2,), profile_deals=3, batch_pairs=1,
             batch_rounds=1, seat_tables=1)  # fmt: skip
