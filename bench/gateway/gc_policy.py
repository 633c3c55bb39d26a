"""`make bench-gateway ARGS=--gc`: a gateway worker's CPU per request with its
garbage-collection policy (api.runtime.gc_policy) on and off, in alternating runs.

Each run starts Redis, the evaluator and gunicorn with one gevent worker (so that every
table is warm in it), creates `CLIENTS x tables_per_client` 5-seat Guts tables and
measures the worker's CPU per request for `GET /healthz` (the baseline) and for warm
declares (four per table and deal, `rounds` deals), and the worker's time in garbage
collections during the declares (`cardroom_gc_pause_seconds` on its /metrics). The
policy is off with `GATEWAY_GC_THRESHOLD=0`. Figures are medians over the runs of
each setting; the ratio is "on" over "off".
"""

from __future__ import annotations

import random
import urllib.request
from collections.abc import Callable
from typing import Any

from bench.gateway.load import Load, Request
from bench.gateway.plan import CLIENTS, PLAYERS
from bench.gateway.service import GatewayConfig, Service
from bench.gateway.tables import declare_request, guts_tables, start_all, wait_for_deal
from bench.measure import alternating_runs, cpu_seconds

SETTINGS = {"off": {"GATEWAY_GC_THRESHOLD": "0"}, "on": {}}


def gc_seconds(url: str) -> float:
    """Seconds the (one) worker spent in collections so far, by its /metrics.

    The worker moves what it noted into the histogram after each answer, so the page
    is read twice: the second shows what the first request drained.
    """
    text = ""
    for _ in range(2):
        with urllib.request.urlopen(url + "/metrics", timeout=60) as response:
            text = response.read().decode()
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if line.startswith("cardroom_gc_pause_seconds_sum")
    )


def one_run(load: Load, env: dict[str, str], tables_per_client: int, rounds: int,
            healthz_seconds: float) -> dict[str, float]:  # fmt: skip
    """Start a one-worker service with `env`, measure, stop it."""
    service = Service(GatewayConfig(workers=1, extra_env=env))
    try:
        url = service.url
        assert service.gateway is not None
        worker = service.gateway.worker_pids()
        tables = guts_tables(url, CLIENTS * tables_per_client)
        start_all(url, tables)
        per_client = [tables[i::CLIENTS] for i in range(CLIENTS)]
        before = cpu_seconds(worker)
        healthz = load.requests(url, [[Request("GET", "/healthz")]] * CLIENTS,
                                healthz_seconds)  # fmt: skip
        healthz_cpu = (cpu_seconds(worker) - before) / max(1, len(healthz.latencies))
        rng = random.Random(7)
        spent, declared, collected = 0.0, 0, 0.0
        for deal in range(rounds):
            plans = [
                [
                    declare_request(t, seats[i], "in" if i < 2 else rng.choice(("in", "out")))
                    for i in range(PLAYERS - 1)
                    for t, seats in mine
                ]
                for mine in per_client
            ]
            gc_before = gc_seconds(url)
            before = cpu_seconds(worker)
            result = load.requests(url, plans, None)
            spent += cpu_seconds(worker) - before
            collected += gc_seconds(url) - gc_before
            declared += len(result.latencies)
            settle = [[declare_request(t, seats[PLAYERS - 1], "in") for t, seats in mine]
                      for mine in per_client]  # fmt: skip
            load.requests(url, settle, None)
            wait_for_deal(url, tables, deal + 2)
        return {
            "healthz_cpu_us": healthz_cpu * 1e6,
            "declare_cpu_us": spent / max(1, declared) * 1e6,
            "gc_ms_per_1000_declares": collected / max(1, declared) * 1e6,
            "declares": declared,
        }
    finally:
        service.stop()


def compare(load: Load, pairs: int, tables_per_client: int, rounds: int,
            healthz_seconds: float, log: Callable[[str], None]) -> dict[str, Any]:  # fmt: skip
    """`pairs` runs of each setting, alternating; medians and the ratios."""
    runs, medians = alternating_runs(
        SETTINGS,
        pairs,
        lambda env: one_run(load, env, tables_per_client, rounds, healthz_seconds),
        lambda figures: (
            f"gc policy: declare {figures['declare_cpu_us']:.0f} us, healthz"
            f" {figures['healthz_cpu_us']:.0f} us of worker CPU, collections"
            f" {figures['gc_ms_per_1000_declares']:.1f} ms per 1,000 declares"
        ),
        log,
    )
    return {
        "runs": runs,
        "medians": medians,
        "declare_on_over_off": medians["on"]["declare_cpu_us"] / medians["off"]["declare_cpu_us"],
        "healthz_over_declare": {
            name: m["healthz_cpu_us"] / m["declare_cpu_us"] for name, m in medians.items()
        },
    }


def report(results: dict[str, Any]) -> None:
    """Print the comparison."""
    medians = results["medians"]
    print("\none gevent worker, warm declares: worker CPU per request, garbage-collection policy")
    print(f"{'policy':28} {'healthz us':>11} {'declare us':>11} {'healthz/declare':>16} "
          f"{'collections ms/1,000 declares':>31}")  # fmt: skip
    for name, label in (("off", "off (GATEWAY_GC_THRESHOLD=0)"), ("on", "on (the default)")):
        m = medians[name]
        print(
            f"{label:28} {m['healthz_cpu_us']:11.0f} {m['declare_cpu_us']:11.0f} "
            f"{results['healthz_over_declare'][name]:16.2f} {m['gc_ms_per_1000_declares']:31.1f}"
        )
    print(f"declare CPU, on / off: {results['declare_on_over_off']:.2f}")
