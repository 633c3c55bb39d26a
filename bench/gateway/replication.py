"""`make bench-gateway ARGS=--replicas`: what acknowledging after a replica costs
(`REDIS_ACK_REPLICAS` 0 and 1), in alternating runs.

Each run starts a Redis with one replica, the evaluator and gunicorn as the default run
does (two gevent workers, the clock on) with `REDIS_ACK_REPLICAS` 0 or 1: the replica is
there either way, so the runs differ only in whether the gateway waits for it (a WAIT
after its writes, `api.adapters.replication`). Each measures the request rounds of the
default run, `batch_rounds` rounds of them; figures are medians over the runs of each
setting: a declare's requests/s, p50 and p99 (32 clients), its ratio to `/healthz` in
the same round and the gateway's CPU per declare, and the ratios of 1 to 0.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from bench.gateway.batch import request_figures
from bench.gateway.load import Load
from bench.gateway.plan import Plan
from bench.gateway.rounds import request_rounds
from bench.gateway.service import GatewayConfig, Service
from bench.measure import alternating_runs, ratios

SETTINGS = {"0": {"REDIS_ACK_REPLICAS": "0"}, "1": {"REDIS_ACK_REPLICAS": "1"}}


def one_run(load: Load, plan: Plan, env: dict[str, str]) -> dict[str, float]:
    """Start the service (its Redis with a replica) with `env`, run the request rounds."""
    service = Service(GatewayConfig(extra_env=env), replicas=1)
    try:
        rounds = request_rounds(service, load, plan, lambda _: None)
    finally:
        service.stop()
    figures = request_figures(rounds)
    figures["declare_p50_ms"] = rounds["declare"]["p50_ms"]["median"]
    figures["declare_p99_ms"] = rounds["declare"]["p99_ms"]["median"]
    return figures


def compare(load: Load, plan: Plan, log: Callable[[str], None]) -> dict[str, Any]:
    """`plan.batch_pairs` runs of each setting, alternating; medians and the ratios."""
    plan = dataclasses.replace(plan, rounds=plan.batch_rounds)
    runs, medians = alternating_runs(
        SETTINGS,
        plan.batch_pairs,
        lambda env: one_run(load, plan, env),
        lambda figures: (
            f"declare {figures['declare_per_second']:,.0f}/s, p50/p99"
            f" {figures['declare_p50_ms']:.1f}/{figures['declare_p99_ms']:.1f} ms,"
            f" {figures['declare_gateway_cpu_us']:,.0f} us of gateway CPU"
        ),
        log,
    )
    return {
        "runs": runs,
        "medians": medians,
        "one_over_none": ratios(medians["1"], medians["0"]),
    }


def report(results: dict[str, Any]) -> None:
    """Print the comparison."""
    medians = results["medians"]
    runs = len(results["runs"]["1"])
    print(
        f"\nacknowledged after a replica (REDIS_ACK_REPLICAS): medians of {runs} alternating runs"
    )
    print(
        f"{'replicas':9} {'declare/s':>10} {'p50 ms':>7} {'p99 ms':>7} {'x healthz':>10}"
        f" {'gateway us/declare':>19} {'errors':>7}"
    )
    for name in SETTINGS:
        m = medians[name]
        print(
            f"{name:9} {m['declare_per_second']:10,.0f} {m['declare_p50_ms']:7.1f}"
            f" {m['declare_p99_ms']:7.1f} {m['declare_x_healthz']:10.2f}"
            f" {m['declare_gateway_cpu_us']:19.0f} {m['errors']:7.0f}"
        )
    ratios = results["one_over_none"]
    print(
        f"1 / 0: declares/s {ratios['declare_per_second']:.2f}, p50"
        f" {ratios['declare_p50_ms']:.2f}, p99 {ratios['declare_p99_ms']:.2f}, gateway CPU"
        f" per declare {ratios['declare_gateway_cpu_us']:.2f}"
    )
