"""`make bench-gateway ARGS=--batch`: the gateway with its Redis commands batched
(api.adapters.batching, `REDIS_BATCH`) and without, in alternating runs.

Each run starts Redis, the evaluator and gunicorn as the default run does (two gevent
workers, the clock on) with `REDIS_BATCH` false or true, and measures the request
rounds of the default run (`/healthz`, a table read, declares with and without the
table in the answer), `batch_rounds` rounds of them. Figures are medians over the runs
of each setting: requests/s, the ratio of each request to `/healthz` in the same
round, and the gateway's CPU per declare.
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Callable
from typing import Any

from bench.gateway.load import Load
from bench.gateway.plan import Plan
from bench.gateway.rounds import request_rounds
from bench.gateway.service import GatewayConfig, Service
from bench.measure import alternating_runs, ratios

SETTINGS = {"off": {"REDIS_BATCH": "false"}, "on": {"REDIS_BATCH": "true"}}
KINDS = ("healthz", "read_table", "declare", "declare_minimal")


def one_run(load: Load, plan: Plan, env: dict[str, str]) -> dict[str, float]:
    """Start the service with `env`, run the request rounds, stop it."""
    return rounds_of(load, plan, GatewayConfig(extra_env=env))


def rounds_of(load: Load, plan: Plan, config: GatewayConfig) -> dict[str, float]:
    """Start the service as `config` says, run the request rounds, stop it; the figures."""
    service = Service(config)
    try:
        rounds = request_rounds(service, load, plan, lambda _: None)
    finally:
        service.stop()
    return request_figures(rounds)


def request_figures(rounds: dict[str, Any]) -> dict[str, float]:
    """A run's figures from its request rounds (`request_rounds`): medians over them."""
    figures = {
        f"{kind}_per_second": rounds[kind]["requests_per_second"]["median"] for kind in KINDS
    }
    for kind in KINDS[1:]:
        figures[f"{kind}_x_healthz"] = statistics.median(
            rate / healthz
            for rate, healthz in zip(
                rounds[kind]["requests_per_second"]["rounds"],
                rounds["healthz"]["requests_per_second"]["rounds"],
                strict=True,
            )
        )
    figures["declare_gateway_cpu_us"] = rounds["declare"]["cpu_us_per_request"]["gateway"]
    # the declare that ends the deal (its showdown; the clock deals the next one meanwhile)
    settles = rounds["declare_settles"]["cpu_us_per_request"]["gateway"]
    figures["settles_gateway_cpu_us"] = settles
    declare = figures["declare_gateway_cpu_us"]
    # a short run's CPU readings (ticks of 10 ms) may be none at all
    figures["settles_over_declare_cpu"] = settles / declare if declare else float("nan")
    figures["healthz_all_cpu_us"] = rounds["healthz"]["cpu_us_per_request"]["all"]
    figures["errors"] = float(sum(rounds["errors"].values()))
    return figures


def compare(load: Load, plan: Plan, log: Callable[[str], None]) -> dict[str, Any]:
    """`plan.batch_pairs` runs of each setting, alternating; medians and the ratios."""
    plan = dataclasses.replace(plan, rounds=plan.batch_rounds)
    runs, medians = alternating_runs(
        SETTINGS,
        plan.batch_pairs,
        lambda env: one_run(load, plan, env),
        lambda figures: (
            f"REDIS_BATCH: declare {figures['declare_x_healthz']:.2f}x healthz"
            f" ({figures['declare_per_second']:,.0f}/s), read"
            f" {figures['read_table_x_healthz']:.2f}x"
        ),
        log,
    )
    return {
        "runs": runs,
        "medians": medians,
        "on_over_off": ratios(medians["on"], medians["off"]),
    }


def report(results: dict[str, Any]) -> None:
    """Print the comparison."""
    medians = results["medians"]
    runs = len(results["runs"]["on"])
    print(f"\nRedis commands batched (REDIS_BATCH) or not: medians of {runs} alternating runs")
    print(
        f"{'REDIS_BATCH':12} {'healthz/s':>10} {'declare/s':>10} {'x healthz':>10}"
        f" {'minimal x':>10} {'read x':>8} {'gateway us/declare':>19} {'errors':>7}"
    )
    for name in SETTINGS:
        m = medians[name]
        print(
            f"{name:12} {m['healthz_per_second']:10,.0f} {m['declare_per_second']:10,.0f}"
            f" {m['declare_x_healthz']:10.2f} {m['declare_minimal_x_healthz']:10.2f}"
            f" {m['read_table_x_healthz']:8.2f} {m['declare_gateway_cpu_us']:19.0f}"
            f" {m['errors']:7.0f}"
        )
    ratios = results["on_over_off"]
    print(
        f"on / off: declares/s {ratios['declare_per_second']:.2f}, declare x healthz"
        f" {ratios['declare_x_healthz']:.2f}, gateway CPU per declare"
        f" {ratios['declare_gateway_cpu_us']:.2f}"
    )
