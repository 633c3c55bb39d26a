"""`make bench-gateway`: the gateway's speed, measured against its own trivial endpoint.

Starts a private redis-server, the evaluator and gunicorn (clock on, rate limits off)
on free loopback ports, and measures in one run, each figure the median of `--rounds`
rounds with the range:

- requests/s, p50 and p99 of `GET /healthz` (the baseline), of reading a table as a
  seat, of a `declare` that does not end the deal and of the `declare` that settles
  it (a showdown through the evaluator), from 32 keep-alive clients;
- whole 5-player Guts deals/s with 32 tables played at once by 32 clients, each deal
  from `deal_started` through five declarations to the settled pot (`deal_ended`),
  the next deal started by the clock; with the p50/p99 of those moves and of the time
  from sending a move to its event reaching a server-sent-events watcher;
- buy-ins and cash-outs: p50/p99 of taking a fresh seat (a new player each) and of
  leaving it, cashed out into the player's wallet, checked by reading the balance
  right after (bench/gateway_seats.py);
- Redis commands per kind of move (MONITOR, in process, on a Redis of its own);
- Redis memory per table and per deal of history, and moves/s with 10, 1,000 and
  10,000 live tables;
- the CPU each process used, the load generator's included.

`--scaling` adds the same measurements with 1, 2 and 4 workers of each worker class
that suits long-lived streams (gthread, gevent); `--gc` compares a worker's CPU per
request with its garbage-collection policy on and off (bench/gateway_gc.py); `--steps`
splits a warm declare's CPU into its steps, in process (bench/gateway_steps.py);
`--batch` compares the request rounds with the Redis commands of a gevent worker's
requests batched (`REDIS_BATCH`, gateway.adapters.batching) and not, in alternating runs
(bench/gateway_batch.py); `--against REV` compares this tree's gateway with revision
REV's in alternating runs: the request rounds, whole deals' moves/s and the buy-ins and
cash-outs (bench/gateway_versions.py), and with `--steps` a warm declare's CPU in
process with each tree's gateway too; `--pairs N` sets the alternating runs of each
setting (--batch, --against); `--seats` measures, of the default parts, only the
buy-ins and cash-outs (the parts other options ask for still run); `--compression`
measures only the bytes and the CPU of compressed answers against identity ones, in
process (bench/gateway_compression.py); `--profile` profiles a move and a showdown in
process with pyinstrument; `--accept-language LANG` sends every request with that
Accept-Language (answers said in that language, docs/languages.md); `--quick` is a short
run. Results are written as JSON to bench/results/gateway.json.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import multiprocessing
import os
import random
import statistics
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from bench.gateway_http import ACCEPT_LANGUAGE_VARIABLE, Connection, Seat, guts_table
from bench.gateway_load import JobResult, Request, play_deals, run_requests
from bench.service import GatewayConfig, Service, cpu_seconds

RESULTS = Path(__file__).parent / "results"
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


# --------------------------------------------------------------------- statistics


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile of `values` (0 when there are none)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def spread(values: list[float]) -> dict[str, Any]:
    """Median, range and every round's value."""
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "rounds": values,
    }


Figures = dict[str, float]
Setting = TypeVar("Setting")


def alternating_runs(
    settings: dict[str, Setting],
    pairs: int,
    run: Callable[[Setting], Figures],
    describe: Callable[[Figures], str],
    log: Callable[[str], None],
) -> tuple[dict[str, list[Figures]], dict[str, Figures]]:
    """`pairs` runs of each setting (name -> what `run` is given), alternating, the
    order reversed every other pair (A B, B A, A B, ...), so that a drift of the
    machine's speed falls on every setting alike; the runs of each setting and the
    median of each of their figures. Each run is logged by `describe`."""
    runs: dict[str, list[Figures]] = {name: [] for name in settings}
    for pair in range(pairs):
        order = list(settings.items())
        for name, env in order[::-1] if pair % 2 else order:
            started = time.monotonic()
            figures = run(env)
            runs[name].append(figures)
            log(f"  {name} (run {pair + 1}): {describe(figures)}"
                f" ({time.monotonic() - started:.0f} s)")  # fmt: skip
    medians = {
        name: {key: statistics.median(run[key] for run in done) for key in done[0]}
        for name, done in runs.items()
    }
    return runs, medians


class Load:
    """Two load processes (spawned, so they share nothing with this one) and their jobs."""

    def __init__(self, processes: int = 2) -> None:
        """Start the processes."""
        self.processes = processes
        self.pool = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("spawn"))
        list(self.pool.map(time.sleep, [0.0] * processes))  # import everything once

    def _split(self, items: list[Any]) -> list[list[Any]]:
        return [items[i :: self.processes] for i in range(self.processes)]

    def requests(self, url: str, plans: list[list[Request]], duration: float | None) -> JobResult:
        """Run the plans (one thread each) spread over the processes."""
        start_at = time.monotonic() + 0.5
        futures = [
            self.pool.submit(run_requests, url, part, start_at, duration)
            for part in self._split(plans)
            if part
        ]
        return _merged(future.result() for future in futures)

    def deals(self, url: str, tables: list[tuple[str, list[Seat]]], duration: float) -> JobResult:
        """Play deals on these tables (one player and one watcher each) for `duration` s."""
        start_at = time.monotonic() + 1.0
        futures = [
            self.pool.submit(play_deals, url, part, start_at, duration, seed)
            for seed, part in enumerate(self._split(tables))
            if part
        ]
        return _merged(future.result() for future in futures)

    def cash_outs(self, url: str, plans: list[list[Any]], buy_in: int) -> JobResult:
        """Leave the seats of the plans (`bench.gateway_seats.SeatPlan`, one thread a
        plan), each leave's balance checked right after it."""
        from bench.gateway_seats import cash_outs

        start_at = time.monotonic() + 0.5
        futures = [
            self.pool.submit(cash_outs, url, part, start_at, buy_in)
            for part in self._split(plans)
            if part
        ]
        return _merged(future.result() for future in futures)

    def close(self) -> None:
        """Stop the processes."""
        self.pool.shutdown()


def _merged(results: Iterator[JobResult]) -> JobResult:
    total = JobResult()
    for result in results:
        total.merge(result)
    return total


class CpuMeter:
    """CPU seconds used by the service's processes between `start` and `stop`."""

    def __init__(self, service: Service) -> None:
        """Meter this service."""
        self.service = service
        self.before: dict[str, float] = {}
        self.seconds: dict[str, float] = {}
        self.started = 0.0

    def start(self) -> None:
        """Take the first reading."""
        self.before = {role: cpu_seconds(pids) for role, pids in self.service.pids().items()}
        self.started = time.monotonic()

    def stop(self, load_cpu: float) -> dict[str, float]:
        """Cores used on average by each role since `start` (1.0 is one core).

        The CPU seconds themselves stay in `seconds`.
        """
        wall = time.monotonic() - self.started
        self.seconds = {
            role: cpu_seconds(pids) - self.before.get(role, 0.0)
            for role, pids in self.service.pids().items()
        }
        self.seconds["load generator"] = load_cpu
        return {role: spent / wall for role, spent in self.seconds.items()}

    def per_request(self, requests: int) -> dict[str, float]:
        """Microseconds of CPU per request of the last metered span, by role and in all."""
        spent = {role: seconds / max(1, requests) * 1e6 for role, seconds in self.seconds.items()}
        return spent | {"all": sum(spent.values())}


# --------------------------------------------------------------------- tables


def guts_tables(url: str, count: int) -> list[tuple[str, list[Seat]]]:
    """`count` fresh 5-seat Guts tables, each seat a player of its own (setup, not measured).

    A gateway without players (an older revision: 404 for POST /v1/players) gets
    anonymous seats.
    """
    local = threading.local()
    opened: list[Connection] = []

    def one(_: int) -> tuple[str, list[Seat]]:
        conn = getattr(local, "conn", None)
        if conn is None:
            conn = local.conn = Connection(url)
            opened.append(conn)
        table = guts_table(conn, PLAYERS, BUY_IN, **GUTS_OPTIONS)
        return table.table_id, list(table.seats)

    try:
        with ThreadPoolExecutor(8) as pool:
            return list(pool.map(one, range(count)))
    finally:
        for conn in opened:
            conn.close()


def start_all(url: str, tables: list[tuple[str, list[Seat]]]) -> None:
    """Start the first deal of every table."""
    conn = Connection(url)
    for table_id, seats in tables:
        conn.expect("POST", f"/v1/tables/{table_id}/actions", {"action": "start"}, seats[0].token)
    conn.close()


def busy_window(result: JobResult, duration: float | None) -> tuple[list[float], float]:
    """The latencies of the requests answered while every client was busy, and that time.

    A timed round keeps every client busy to its end. A round of a fixed number of
    moves (each legal once) ends with a drain, the clients that finished early idle
    while the last ones finish theirs: it is cut where the first client ran out of
    moves, so its rate and percentiles are those of all the clients at once, like the
    baseline's.
    """
    if duration is not None:
        return [seconds for _, seconds in result.latencies], duration
    ends = min(result.client_ends, default=result.last_end)
    answered = [seconds for at, seconds in result.latencies if at <= ends]
    return answered, max(1e-9, ends - result.first_start)


def wait_for_deal(url: str, tables: list[tuple[str, list[Seat]]], hand: int) -> None:
    """Wait until every table is declaring deal `hand` (the clock deals it)."""
    conn = Connection(url)
    deadline = time.monotonic() + 60
    for table_id, _ in tables:
        while True:
            view = conn.expect("GET", f"/v1/tables/{table_id}")
            if view["hand_number"] >= hand and view["phase"] == "declaring":
                break
            if time.monotonic() > deadline:
                raise RuntimeError(f"table {table_id} did not reach deal {hand} in 60 s")
            time.sleep(0.02)
    conn.close()


MINIMAL = {"Prefer": "return=minimal"}
# what the request rounds' moves and reads carry: the seat's token, or (--moves-with key)
# its player's key, where the gateway has players
MOVES_WITH = {"credential": "token"}


def credential(seat: Seat) -> str:
    """The credential a seat's moves and reads are sent with (`MOVES_WITH`)."""
    if MOVES_WITH["credential"] == "key" and seat.key is not None:
        return seat.key
    return seat.token


def _declare(table_id: str, seat: Seat, choice: str, minimal: bool = False) -> Request:
    """A declare; with `minimal`, answered 204 without the table (Prefer: return=minimal)."""
    body = {"action": "declare", "choice": choice}
    path = f"/v1/tables/{table_id}/actions"
    if minimal:
        return Request("POST", path, body, credential(seat), MINIMAL, expect=204)
    return Request("POST", path, body, credential(seat))


# --------------------------------------------------------------------- measurements


def request_rounds(
    service: Service, load: Load, plan: Plan, log: Callable[[str], None]
) -> dict[str, Any]:
    """/healthz, table reads, declares (answered with the table, and without it: half the
    tables each) and settling declares, interleaved in each round."""
    url = service.url
    tables = guts_tables(url, CLIENTS * plan.tables_per_client)
    start_all(url, tables)
    per_client = [tables[i::CLIENTS] for i in range(CLIENTS)]
    rng = random.Random(7)
    kinds = ("healthz", "read_table", "declare", "declare_minimal", "declare_settles")
    rates: dict[str, list[float]] = {kind: [] for kind in kinds}
    p50s: dict[str, list[float]] = {kind: [] for kind in kinds}
    p99s: dict[str, list[float]] = {kind: [] for kind in kinds}
    cpu: dict[str, list[dict[str, float]]] = {kind: [] for kind in kinds}
    cpu_us: dict[str, list[dict[str, float]]] = {kind: [] for kind in kinds}
    errors: Counter[str] = Counter()
    meter = CpuMeter(service)
    for round_number in range(plan.rounds):
        plans: dict[str, tuple[list[list[Request]], float | None]] = {
            "healthz": ([[Request("GET", "/healthz")]] * CLIENTS, plan.seconds),
            "read_table": (
                [
                    [
                        Request("GET", f"/v1/tables/{t}", None, credential(seats[0]))
                        for t, seats in mine
                    ]
                    for mine in per_client
                ],
                plan.seconds,
            ),
            **{
                kind: (
                    [
                        [
                            _declare(
                                t,
                                seats[i],
                                "in" if i < 2 else rng.choice(("in", "out")),
                                minimal=kind == "declare_minimal",
                            )
                            for i in range(PLAYERS - 1)
                            for t, seats in mine[half::2]
                        ]
                        for mine in per_client
                    ],
                    None,
                )
                for half, kind in enumerate(("declare", "declare_minimal"))
            },
            "declare_settles": (
                [
                    [
                        _declare(t, seats[PLAYERS - 1], rng.choice(("in", "out")))
                        for t, seats in mine
                    ]
                    for mine in per_client
                ],
                None,
            ),
        }
        for kind in kinds:
            plans_for, duration = plans[kind]
            meter.start()
            result = load.requests(url, plans_for, duration)
            cpu[kind].append(meter.stop(result.cpu_seconds))
            cpu_us[kind].append(meter.per_request(len(result.latencies)))
            latencies, window = busy_window(result, duration)
            rates[kind].append(len(latencies) / window)
            p50s[kind].append(percentile(latencies, 0.5) * 1000)
            p99s[kind].append(percentile(latencies, 0.99) * 1000)
            errors.update({f"{kind}: {k}": v for k, v in result.errors.items()})
        log(
            f"  round {round_number + 1}: "
            + ", ".join(f"{kind} {rates[kind][-1]:,.0f}/s" for kind in kinds)
        )
        wait_for_deal(url, tables, round_number + 2)
    return {
        kind: {
            "requests_per_second": spread(rates[kind]),
            "p50_ms": spread(p50s[kind]),
            "p99_ms": spread(p99s[kind]),
            "cores_used": {
                role: statistics.median(sample[role] for sample in cpu[kind])
                for role in cpu[kind][0]
            },
            # the load generator's share includes opening its connections
            "cpu_us_per_request": {
                role: statistics.median(sample[role] for sample in cpu_us[kind])
                for role in cpu_us[kind][0]
            },
        }
        for kind in kinds
    } | {"errors": dict(errors), "tables": len(tables)}


def deal_rounds(
    service: Service, load: Load, tables_count: int, rounds: int, window: float
) -> dict[str, Any]:
    """Whole deals on `tables_count` tables at once, cut into `rounds` windows."""
    url = service.url
    tables = guts_tables(url, tables_count)
    warmup = 1.0
    meter = CpuMeter(service)
    meter.start()
    result = load.deals(url, tables, warmup + rounds * window)
    cores = meter.stop(result.cpu_seconds)
    begin = result.first_start + warmup
    deals, moves, move_p50, move_p99, p50, p99, reply_p50, reply_p99 = ([] for _ in range(8))
    for k in range(rounds):
        low, high = begin + k * window, begin + (k + 1) * window

        def inside(at: float, low: float = low, high: float = high) -> bool:
            return low <= at < high

        ended = sum(1 for at in result.deals_ended if inside(at))
        latencies = [s for at, s in result.latencies if inside(at)]
        delivered = [s for at, s in result.deliveries if inside(at)]
        deals.append(ended / window)
        moves.append(len(latencies) / window)
        move_p50.append(percentile(latencies, 0.5) * 1000)
        move_p99.append(percentile(latencies, 0.99) * 1000)
        p50.append(percentile(delivered, 0.5) * 1000)
        p99.append(percentile(delivered, 0.99) * 1000)
        after = [s for at, s in result.after_reply if inside(at)]
        reply_p50.append(percentile(after, 0.5) * 1000)
        reply_p99.append(percentile(after, 0.99) * 1000)
    return {
        "tables": tables_count,
        "deals_per_second": spread(deals),
        "moves_per_second": spread(moves),
        "move_p50_ms": spread(move_p50),
        "move_p99_ms": spread(move_p99),
        "delivery_p50_ms": spread(p50),
        "delivery_p99_ms": spread(p99),
        "delivery_after_reply_p50_ms": spread(reply_p50),
        "delivery_after_reply_p99_ms": spread(reply_p99),
        "cores_used": cores,
        "errors": dict(result.errors),
        "table_ids": [table_id for table_id, _ in tables],
    }


def table_memory(redis_url: str, table_ids: list[str]) -> dict[str, float]:
    """Mean bytes per table (MEMORY USAGE of its keys) and deals played, over `table_ids`."""
    import redis

    client = redis.Redis.from_url(redis_url)
    totals, deals, hands = [], [], []
    for table_id in table_ids:
        keys = list(client.scan_iter(match=f"table:{{{table_id}}}*", count=1000))
        sizes = {key.decode(): client.memory_usage(key, samples=0) or 0 for key in keys}
        totals.append(sum(sizes.values()))
        hands.append(sum(v for k, v in sizes.items() if ":hand:" in k))
        state = client.hget(f"table:{{{table_id}}}", "state")
        deals.append(json.loads(state or b"{}").get("hand_number", 0))
    client.close()
    return {
        "bytes": statistics.mean(totals),
        "deals": statistics.mean(deals),
        "hand_history_bytes": statistics.mean(hands),
    }


def memory_costs(service: Service, played: list[str]) -> dict[str, float]:
    """Bytes per fresh 5-seat table, and per deal of history (events and hand record)."""
    fresh = [table_id for table_id, _ in guts_tables(service.url, 5)]
    new = table_memory(service.redis.url, fresh)
    old = table_memory(service.redis.url, played)
    per_deal = (old["bytes"] - new["bytes"]) / max(1.0, old["deals"])
    return {
        "bytes_per_table": new["bytes"],
        "bytes_per_deal": per_deal,
        "hand_record_bytes_per_deal": old["hand_history_bytes"] / max(1.0, old["deals"]),
        "deals_per_played_table": old["deals"],
    }


def grow(service: Service, load: Load, plan: Plan, log: Callable[[str], None]) -> dict[str, Any]:
    """Moves/s on 10 busy tables while the store holds 10, 1,000 and 10,000 live tables."""
    import redis

    from bench.gateway_inprocess import create_live_tables

    client = redis.Redis.from_url(service.redis.url)
    client.flushall()
    busy = 10
    results = {}
    spawn = multiprocessing.get_context("spawn")
    assert service.gateway is not None
    for level in plan.growth_levels:
        missing = level - busy - client.zcard("tables")
        started = time.monotonic()
        if missing > 0:
            parts = [missing // 2, missing - missing // 2]
            with ProcessPoolExecutor(2, mp_context=spawn) as pool:
                list(
                    pool.map(
                        create_live_tables,
                        [service.redis.url] * 2,
                        [service.evaluator.address] * 2,
                        parts,
                        [1, 2],
                    )
                )
        made = time.monotonic() - started
        memory = int(client.info("memory")["used_memory"])
        measured = deal_rounds(service, load, busy, plan.rounds, plan.growth_window)
        results[str(level)] = {
            "live_tables": int(client.zcard("tables")),
            "seconds_to_create": made,
            "used_memory": memory,
            **{k: v for k, v in measured.items() if k != "table_ids"},
        }
        log(
            f"  {results[str(level)]['live_tables']:,} live tables: "
            f"{measured['moves_per_second']['median']:,.0f} moves/s, "
            f"p99 {measured['move_p99_ms']['median']:.1f} ms"
        )
    client.close()
    return results


def scaling_configs(workers: tuple[int, ...] = (1, 2, 4)) -> list[GatewayConfig]:
    """The matrix: each count of `workers` with gthread (64 threads in all) and gevent."""
    configs = [GatewayConfig(workers=w, threads=64 // w, worker_class="gthread") for w in workers]
    configs += [GatewayConfig(workers=w, worker_class="gevent") for w in workers]
    return configs


def scaling(service: Service, load: Load, plan: Plan, log: Callable[[str], None]) -> list[Any]:
    """The request rounds and the deals with each configuration of the matrix."""
    rows = []
    small = Plan(plan.rounds, plan.seconds, max(1, plan.tables_per_client // 2), plan.deal_window,
                 (), 0.0)  # fmt: skip
    for config in scaling_configs(plan.scaling_workers):
        log(f"scaling: {config.label}")
        service.restart_gateway(config)
        requests = request_rounds(service, load, small, lambda _: None)
        deals = deal_rounds(service, load, CLIENTS, plan.rounds, plan.deal_window)
        deals.pop("table_ids")
        rows.append({"config": config.label, "requests": requests, "deals": deals})
        log(
            f"  healthz {requests['healthz']['requests_per_second']['median']:,.0f}/s, "
            f"declare {requests['declare']['requests_per_second']['median']:,.0f}/s, "
            f"{deals['deals_per_second']['median']:.1f} deals/s, "
            f"delivery p99 {deals['delivery_p99_ms']['median']:.1f} ms"
        )
    return rows


def sdk_overhead(url: str, calls: int = 300) -> dict[str, float]:
    """Client CPU microseconds per sequential GET /healthz: raw http.client and the SDK."""
    from cardroom_client import Client

    conn = Connection(url)
    conn.call("GET", "/healthz")
    started = time.process_time()
    for _ in range(calls):
        conn.call("GET", "/healthz")
    raw = (time.process_time() - started) / calls
    conn.close()
    with Client(url) as client:
        client.health()
        started = time.process_time()
        for _ in range(calls):
            client.health()
        sdk = (time.process_time() - started) / calls
    return {"raw_http_us": raw * 1e6, "sdk_us": sdk * 1e6}


# --------------------------------------------------------------------- report


def _fmt(values: dict[str, Any], digits: int = 0) -> str:
    return (
        f"{values['median']:,.{digits}f} [{values['min']:,.{digits}f}-{values['max']:,.{digits}f}]"
    )


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"


def _report_moves(results: dict[str, Any]) -> None:
    """The request rounds, whole deals, Redis commands per move and memory."""
    basic = results["requests"]
    base = basic["healthz"]["requests_per_second"]["median"]
    print(f"\n{CLIENTS} keep-alive clients, closed loop")
    print(f"{'request':34} {'requests/s':>24} {'x healthz':>9} {'p50 ms':>18} {'p99 ms':>20}")
    labels = {
        "healthz": "GET /healthz (baseline)",
        "read_table": "GET /v1/tables/{id} as a seat",
        "declare": "declare (not the last)",
        "declare_minimal": "the same, Prefer: return=minimal",
        "declare_settles": "declare that settles (showdown)",
    }
    for kind, label in labels.items():
        row = basic[kind]
        rate = row["requests_per_second"]
        print(
            f"{label:34} {_fmt(rate):>24} {rate['median'] / base:9.2f} "
            f"{_fmt(row['p50_ms'], 1):>18} {_fmt(row['p99_ms'], 1):>20}"
        )
    for kind, what in (("declare", "answered with the table"),
                       ("declare_minimal", "answered without it")):  # fmt: skip
        ratio = basic[kind]["requests_per_second"]["median"] / base
        print(f"target: a move >= {TARGETS['move_vs_trivial']}x healthz, {what}: {ratio:.2f}, "
              f"{_verdict(ratio >= TARGETS['move_vs_trivial'])}")  # fmt: skip
    print("\nCPU per request, us (medians; all processes of the machine that took part)")
    roles = ("gateway", "redis", "evaluator", "load generator", "all")
    print(f"{'request':34} " + " ".join(f"{role:>14}" for role in roles) + f" {'healthz/this':>13}")
    base_cpu = basic["healthz"]["cpu_us_per_request"]["all"]
    for kind, label in labels.items():
        spent = basic[kind]["cpu_us_per_request"]
        print(f"{label:34} " + " ".join(f"{spent[role]:14.0f}" for role in roles)
              + f" {base_cpu / spent['all']:13.2f}")  # fmt: skip
    deals = results["deals"]
    print(f"\nwhole 5-player Guts deals, {deals['tables']} tables played at once by 32 clients")
    print(f"  deals/s            {_fmt(deals['deals_per_second'], 1)}")
    print(f"  moves/s            {_fmt(deals['moves_per_second'])}")
    print(
        f"  move p50 / p99     {_fmt(deals['move_p50_ms'], 1)} / {_fmt(deals['move_p99_ms'], 1)} ms"
    )
    print(
        f"  event delivery     p50 {_fmt(deals['delivery_p50_ms'], 1)} / "
        f"p99 {_fmt(deals['delivery_p99_ms'], 1)} ms (move sent -> event at an SSE watcher)"
    )
    print(
        f"  after the reply    p50 {_fmt(deals['delivery_after_reply_p50_ms'], 1)} / "
        f"p99 {_fmt(deals['delivery_after_reply_p99_ms'], 1)} ms "
        "(move's reply back -> event at the watcher)"
    )
    print("  cores used: " + ", ".join(f"{r} {v:.2f}" for r, v in deals["cores_used"].items()))
    for name, key, target, higher in (
        ("deals/s", "deals_per_second", TARGETS["deals_per_second"], True),
        ("move p99 ms", "move_p99_ms", TARGETS["move_p99_ms"], False),
        ("delivery p99 ms", "delivery_p99_ms", TARGETS["delivery_p99_ms"], False),
    ):
        value = deals[key]["median"]
        ok = value >= target if higher else value <= target
        sign = ">=" if higher else "<="
        print(f"  target {name} {sign} {target:g}: {value:,.1f}, {_verdict(ok)}")
    errors = {**basic["errors"], **deals["errors"]}
    print(f"  unexpected answers: {errors or 'none'}")
    print("\nRedis commands per move (MONITOR; commands the gateway sent, and run inside scripts)")
    print(f"{'move':44} {'sent':>6} {'in scripts':>10}  commands sent")
    for kind, row in results["redis_commands"].items():
        names = ", ".join(f"{n} {v:g}" for n, v in row["by_command"].items())
        print(f"{kind:44} {row['round_trips']:6.2f} {row['script_commands']:10.2f}  {names}")
    memory = results["memory"]
    print(
        f"\nRedis memory: {memory['bytes_per_table']:,.0f} bytes per fresh 5-seat table, "
        f"{memory['bytes_per_deal']:,.0f} bytes per deal of history "
        f"({memory['hand_record_bytes_per_deal']:,.0f} of it the hand record)"
    )


def report(results: dict[str, Any]) -> None:
    """Print the tables of medians, ranges, ratios and targets."""
    print(f"\nmedians [min-max] of {results['rounds']} rounds; {results['machine']}")
    print(f"redis: {results['redis']}")
    print(f"gateway: {results['gateway']}, clock every {results['clock_interval']} s")
    if "requests" in results:
        _report_moves(results)
    if "seats" in results:
        from bench.gateway_seats import report as seats_report

        seats_report(results["seats"])
    if "growth" in results:
        print("\nmoves on 10 busy tables with more live tables stored")
        print(f"{'live tables':>12} {'moves/s':>22} {'move p99 ms':>22} {'used_memory':>14}")
        for row in results["growth"].values():
            print(
                f"{row['live_tables']:>12,} {_fmt(row['moves_per_second']):>22} "
                f"{_fmt(row['move_p99_ms'], 1):>22} {row['used_memory']:>14,}"
            )
    if "sdk_overhead" in results:
        sdk = results["sdk_overhead"]
        print(
            f"\nclient CPU per call: raw http.client {sdk['raw_http_us']:.0f} us, "
            f"Python SDK {sdk['sdk_us']:.0f} us (the hot loops use raw HTTP)"
        )
    if results.get("scaling"):
        print("\nscaling (medians)")
        print(f"{'configuration':36} {'healthz/s':>10} {'declare/s':>10} {'deals/s':>8} "
              f"{'move p99':>9} {'deliv p99':>10} {'errors':>7}")  # fmt: skip
        for row in results["scaling"]:
            r, d = row["requests"], row["deals"]
            print(
                f"{row['config']:36} {r['healthz']['requests_per_second']['median']:10,.0f} "
                f"{r['declare']['requests_per_second']['median']:10,.0f} "
                f"{d['deals_per_second']['median']:8.1f} {d['move_p99_ms']['median']:9.1f} "
                f"{d['delivery_p99_ms']['median']:10.1f} "
                f"{sum(r['errors'].values()) + sum(d['errors'].values()):7}"
            )
    if "steps" in results:
        from bench.gateway_steps import report as steps_report

        steps_report(results["steps"])
    if "gc" in results:
        from bench.gateway_gc import report as gc_report

        gc_report(results["gc"])
    if "against" in results:
        from bench.gateway_versions import report as versions_report

        versions_report(results["against"])
    if "batch" in results:
        from bench.gateway_batch import report as batch_report

        batch_report(results["batch"])
    for name, text in results.get("profiles", {}).items():
        print(f"\nprofile: {name}\n{text}")


def main() -> None:
    """Run every measurement, print the tables and write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="short rounds, fewer tables")
    parser.add_argument(
        "--smoke", action="store_true", help="every part once, briefly (the tests run this)"
    )
    parser.add_argument("--rounds", type=int, default=None, help="rounds per figure (>= 5)")
    parser.add_argument("--scaling", action="store_true", help="1/2/4 workers, gthread and gevent")
    parser.add_argument("--profile", action="store_true", help="profile a move and a showdown")
    parser.add_argument(
        "--gc",
        action="store_true",
        help="worker CPU per request with the garbage-collection policy on and off",
    )
    parser.add_argument(
        "--steps",
        action="store_true",
        help="a warm declare's CPU step by step, in process, against /healthz",
    )
    parser.add_argument(
        "--compression",
        action="store_true",
        help="only the bytes and CPU of answers in br and gzip against identity, in process",
    )
    parser.add_argument(
        "--batch",
        action="store_true",
        help="requests with the Redis commands batched (REDIS_BATCH) and not, alternating runs",
    )
    parser.add_argument(
        "--against",
        metavar="REV",
        help="this tree's gateway against revision REV's, alternating runs (a git worktree)",
    )
    parser.add_argument(
        "--pairs",
        type=int,
        default=None,
        help="alternating runs of each setting for --batch and --against",
    )
    parser.add_argument(
        "--seats",
        action="store_true",
        help="of the default parts only the buy-ins and cash-outs (other options still run)",
    )
    parser.add_argument(
        "--moves-with",
        choices=("token", "key"),
        default="token",
        help="send the request rounds' moves and reads with the seat token or the player's key",
    )
    parser.add_argument(
        "--accept-language", default=None, help="send every request with this Accept-Language"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=32)
    parser.add_argument("--worker-class", choices=("gthread", "gevent"), default="gevent")
    parser.add_argument(
        "--durable",
        action="store_true",
        help="Redis as deployed: appendonly yes, appendfsync always",
    )
    parser.add_argument(
        "--clock-interval", type=float, default=0.05, help="CLOCK_INTERVAL: the next deal's delay"
    )
    arguments = parser.parse_args()
    if arguments.accept_language:
        os.environ[ACCEPT_LANGUAGE_VARIABLE] = arguments.accept_language
    MOVES_WITH["credential"] = arguments.moves_with
    plan = SMOKE if arguments.smoke else QUICK if arguments.quick else FULL
    if arguments.rounds is not None:
        plan = dataclasses.replace(plan, rounds=max(1, arguments.rounds))
    if arguments.pairs is not None:
        plan = dataclasses.replace(plan, batch_pairs=max(1, arguments.pairs))
    config = GatewayConfig(
        arguments.workers, arguments.threads, arguments.worker_class, arguments.clock_interval
    )

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    results: dict[str, Any] = {
        "machine": {
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "load_average_before": os.getloadavg(),
        },
        "rounds": plan.rounds,
        "gateway": config.label,
        "clock_interval": config.clock_interval,
        "clients": CLIENTS,
        "redis": "appendfsync always" if arguments.durable else "no persistence",
        "accept_language": arguments.accept_language,
    }
    log(f"starting Redis, the evaluator and gunicorn ({config.label})")
    service = Service(config, durable=arguments.durable)
    if arguments.compression:
        compression_only(service, plan.rounds, results, log)
        return
    load = Load()
    try:
        default_parts(service, load, plan, arguments.seats, results, log)
        if arguments.profile:
            from bench.gateway_inprocess import profile_moves

            log("profiling a move and a showdown in process")
            results["profiles"] = profile_moves(
                service.redis.url, service.evaluator.address, plan.profile_deals
            )
        if arguments.steps:
            from bench.gateway_steps import step_costs

            log("a warm declare's CPU step by step, in process")
            results["steps"] = step_costs(
                service.redis.url, service.evaluator.address, plan.step_tables, plan.rounds
            )
        if not arguments.seats:
            log("live tables: " + ", ".join(f"{n:,}" for n in plan.growth_levels))
            results["growth"] = grow(service, load, plan, log)
        if arguments.scaling:
            results["scaling"] = scaling(service, load, plan, log)
        if arguments.gc:
            from bench.gateway_gc import compare

            log("garbage-collection policy on and off, one worker, alternating runs")
            results["gc"] = compare(load, plan.gc_pairs, plan.gc_tables_per_client,
                                    plan.gc_deals, plan.seconds, log)  # fmt: skip
        if arguments.batch:
            from bench.gateway_batch import compare as compare_batching

            log("Redis commands batched and not (REDIS_BATCH), alternating runs")
            results["batch"] = compare_batching(load, plan, log)
        if arguments.against:
            from bench.gateway_versions import compare as compare_versions

            log(f"this tree's gateway against {arguments.against}'s, alternating runs")
            in_process = (service.redis.url, service.evaluator.address)
            results["against"] = compare_versions(
                load, plan, arguments.against, log, in_process if arguments.steps else None
            )
    finally:
        load.close()
        service.stop()
    results["machine"]["load_average_after"] = os.getloadavg()
    report(results)
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / ("gateway_smoke.json" if arguments.smoke else "gateway.json")
    path.write_text(json.dumps(results, indent=2))
    for name, text in results.get("profiles", {}).items():
        slug = "".join(c if c.isalnum() else "_" for c in name).strip("_")
        (RESULTS / f"gateway_profile_{slug}.txt").write_text(text)
    print(f"\nresults written to {path}")


def default_parts(
    service: Service,
    load: Load,
    plan: Plan,
    seats_only: bool,
    results: dict[str, Any],
    log: Callable[[str], None],
) -> None:
    """The default run's parts before the live tables (only the buy-ins and cash-outs
    with `seats_only`)."""
    from bench.gateway_seats import seat_rounds

    if not seats_only:
        log("requests: /healthz, table reads, declares, settling declares")
        results["requests"] = request_rounds(service, load, plan, log)
        log("whole deals, 32 tables at once, with SSE watchers")
        deals = deal_rounds(service, load, CLIENTS, plan.rounds, plan.deal_window)
        played = deals.pop("table_ids")
        results["deals"] = deals
    log("buy-ins and cash-outs, a fresh player for each seat")
    results["seats"] = seat_rounds(service, load, plan, log)
    if seats_only:
        return
    log("Redis memory per table and per deal")
    results["memory"] = memory_costs(service, played)
    results["sdk_overhead"] = sdk_overhead(service.url)
    log("Redis commands per move")
    from bench.gateway_inprocess import count_commands

    results["redis_commands"] = count_commands(service.evaluator.address)


def compression_only(
    service: Service, rounds: int, results: dict[str, Any], log: Callable[[str], None]
) -> None:
    """`--compression`: that measurement alone (bench/results/gateway_compression.json)."""
    from bench.gateway_compression import compression_costs
    from bench.gateway_compression import report as compression_report

    try:
        log("answers in identity, gzip and br, in process")
        results["compression"] = compression_costs(
            service.redis.url, service.evaluator.address, rounds
        )
    finally:
        service.stop()
    compression_report(results["compression"])
    RESULTS.mkdir(exist_ok=True)
    path = RESULTS / "gateway_compression.json"
    path.write_text(json.dumps(results, indent=2))
    print(f"\nresults written to {path}")


if __name__ == "__main__":
    main()
