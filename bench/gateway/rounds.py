"""The gateway benchmark's request rounds and whole deals, the measurements most of its
parts repeat (the default run, `--scaling`, `--batch`, `--against`)."""

from __future__ import annotations

import random
import statistics
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

import redis

from api.adapters.store import PACKING_KEY
from bench.gateway.load import Load, Request, busy_window
from bench.gateway.plan import CLIENTS, PLAYERS, Plan
from bench.gateway.service import GatewayConfig, Service
from bench.gateway.tables import (
    credential,
    declare_request,
    guts_tables,
    start_all,
    wait_for_deal,
)
from bench.measure import CpuMeter, percentile, spread


def request_rounds(
    service: Service,
    load: Load,
    plan: Plan,
    log: Callable[[str], None],
    ready: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """/healthz, table reads, declares (answered with the table, and without it: half the
    tables each) and settling declares, interleaved in each round; `ready` is called once
    the tables are made and started, before the first round."""
    url = service.url
    tables = guts_tables(url, CLIENTS * plan.tables_per_client)
    start_all(url, tables)
    if ready is not None:
        ready()
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
    # the settling declares' span ends when the packer has packed what they left: its
    # wait, at most PACK_SECONDS, is charged only the packer's work, not the CPU the
    # gateway spends with nothing to do (its clock's idle ticks), measured here
    idle = meter.idle_cores()
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
                            declare_request(
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
                        declare_request(t, seats[PLAYERS - 1], rng.choice(("in", "out")))
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
            waited = packed_out(service) if kind == "declare_settles" else 0.0
            cpu[kind].append(meter.stop(result.cpu_seconds, idle, waited))
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
    } | {"errors": dict(errors), "tables": len(tables), "idle_cores": idle}


def packed_out(service: Service, seconds: float = 10.0) -> float:
    """Wait until the gateway's packer (run by its clock) has packed what the settling
    declares left it, so that its work counts as theirs (a gateway that packs in the move
    itself leaves nothing listed): the seconds waited."""
    client = redis.Redis.from_url(service.redis.url)
    started = time.monotonic()
    deadline = started + seconds
    while client.zcard(PACKING_KEY) and time.monotonic() < deadline:
        time.sleep(0.005)
    client.close()
    return time.monotonic() - started


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
    per_deal = meter.per_request(len(result.deals_ended))
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
        # µs of CPU a deal over the whole span (the warm-up's deals too), by process
        "cpu_us_per_deal": per_deal,
        "errors": dict(result.errors),
        "table_ids": [table_id for table_id, _ in tables],
    }


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
