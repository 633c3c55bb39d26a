"""`make bench-gateway ARGS="--against REV"`: this tree's gateway against revision REV's.

REV is checked out into a temporary git worktree; the runs alternate between its
gateway and this tree's, each on a Redis and an evaluator of its own, and each measures
`batch_rounds` rounds of three parts of the default run: the request rounds
(`/healthz`, a table read, declares with and without the table in the answer), whole
deals on 32 tables (moves/s, the moves' p50/p99) and the buy-ins and cash-outs of fresh
seats (p50/p99, the gateway's CPU per request; bench/gateway/seats.py). Figures are
medians over the runs of each tree: requests/s, each request's ratio to `/healthz` in
the same round, the gateway's CPU per declare and per settling declare (with the next
deal it deals and the packing of the deal it leaves, by the gateway's clock) and their
ratio, moves/s, deals/s and a deal's cost in
`/healthz` requests, the seats' latencies; and the ratio of each of this tree's to
REV's. Only the gateway's code differs: the evaluator, the load and the protobuf code
are this tree's. Each run notes the machine's 1-minute
load average when it starts. The tables' seats are players of their own where the
gateway has players; a revision older than them answers 404 to `POST /v1/players`,
gets anonymous seats (`bench.gateway.client.guts_table`) and has no buy-ins to measure
(a buy-in needs a player).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import statistics
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.gateway.batch import request_figures
from bench.gateway.load import Load
from bench.gateway.plan import CLIENTS, Plan
from bench.gateway.rounds import deal_rounds, request_rounds
from bench.gateway.seats import NoPlayersError, seat_figures, seat_rounds
from bench.gateway.service import GatewayConfig, Service
from bench.gateway.steps import step_costs
from bench.measure import alternating_runs
from tests.support.processes import ROOT

nan = float("nan")
# figures that are no cost of the gateway's: no ratio
NOT_RATIOS = ("errors", "seat_errors", "deal_errors", "load_average")
# the buy-ins' and cash-outs' figures, absent where the gateway has no players
SEAT_LABELS = {
    "buy_in": "buy-in, 32 clients",
    "cash_out": "cash-out, 32 clients",
    "buy_in_alone": "buy-in, alone",
    "cash_out_alone": "cash-out, alone",
}
SEAT_KEYS = (
    *(
        f"{kind}_{figure}"
        for kind in SEAT_LABELS
        for figure in ("p50_ms", "p99_ms", "gateway_cpu_us")
    ),
    "seat_errors",
)


def run_of(load: Load, plan: Plan, config: GatewayConfig) -> dict[str, float]:
    """Start the service as `config` says, run the three parts, stop it; the figures."""
    figures = {"load_average": os.getloadavg()[0]}
    service = Service(config)
    try:
        figures |= request_figures(request_rounds(service, load, plan, lambda _: None))
        deals = deal_rounds(service, load, CLIENTS, plan.rounds, plan.deal_window)
        with contextlib.suppress(NoPlayersError):  # a revision older than players
            figures |= seat_figures(seat_rounds(service, load, plan, lambda _: None))
    finally:
        service.stop()
    figures["moves_per_second"] = deals["moves_per_second"]["median"]
    figures["deals_per_second"] = deals["deals_per_second"]["median"]
    # what a whole deal costs in `/healthz` requests of the same run
    deals_per_second = figures["deals_per_second"]
    figures["deal_in_healthz"] = (
        figures["healthz_per_second"] / deals_per_second if deals_per_second else nan
    )
    # the same from CPU: every process's CPU a deal over every process's CPU a `/healthz`
    # (steadier on a shared machine than two rates measured a minute apart)
    figures["gateway_cpu_us_per_deal"] = deals["cpu_us_per_deal"]["gateway"]
    figures["deal_in_healthz_cpu"] = deals["cpu_us_per_deal"]["all"] / figures["healthz_all_cpu_us"]
    figures["move_p50_ms"] = deals["move_p50_ms"]["median"]
    figures["move_p99_ms"] = deals["move_p99_ms"]["median"]
    figures["deal_errors"] = float(sum(deals["errors"].values()))
    return figures


def declare_cpu(in_process: tuple[str, str], plan: Plan, source: Path | None) -> dict[str, float]:
    """A warm declare's CPU and `/healthz`'s, in process (bench/gateway/steps.py), with the
    gateway of the tree `source` (None: this tree's), on the Redis and the evaluator
    `in_process` names; medians over `plan.batch_rounds` rounds."""
    costs = step_costs(*in_process, plan.step_tables, plan.batch_rounds, source)
    declare, healthz = costs["declare"]["rounds"], costs["healthz"]["rounds"]
    return {
        "healthz_cpu_us": costs["healthz"]["median"],
        "declare_cpu_us": costs["declare"]["median"],
        "declare_over_healthz": statistics.median(
            d / h for d, h in zip(declare, healthz, strict=True)
        ),
    }


def compare(
    load: Load,
    plan: Plan,
    revision: str,
    log: Callable[[str], None],
    in_process: tuple[str, str] | None = None,
) -> dict[str, Any]:
    """`plan.batch_pairs` runs of REV's gateway and of this tree's, alternating; then,
    given `in_process` (a Redis URL and an evaluator's address: `--steps`), as many
    alternating runs of a warm declare's CPU in process with each tree's gateway."""
    plan = dataclasses.replace(plan, rounds=plan.batch_rounds)
    with tempfile.TemporaryDirectory(prefix="cardroom-against-") as scratch:
        tree = Path(scratch) / "tree"
        subprocess.run(
            ["git", "worktree", "add", "--detach", str(tree), revision],
            cwd=ROOT, check=True, capture_output=True,
        )  # fmt: skip
        try:
            settings = {revision: GatewayConfig(source=tree), "this tree": GatewayConfig()}
            runs, medians = alternating_runs(
                settings,
                plan.batch_pairs,
                lambda config: run_of(load, plan, config),
                lambda figures: (
                    f"load {figures['load_average']:.1f}: declare"
                    f" {figures['declare_x_healthz']:.2f}x healthz"
                    f" ({figures['declare_per_second']:,.0f}/s,"
                    f" {figures['declare_gateway_cpu_us']:,.0f} us), read"
                    f" {figures['read_table_x_healthz']:.2f}x,"
                    f" {figures['moves_per_second']:,.0f} moves/s, buy-in p50/p99"
                    f" {figures.get('buy_in_p50_ms', nan):.1f}"
                    f"/{figures.get('buy_in_p99_ms', nan):.1f} ms, cash-out"
                    f" {figures.get('cash_out_p50_ms', nan):.1f}"
                    f"/{figures.get('cash_out_p99_ms', nan):.1f} ms"
                ),
                log,
            )
            steps = None
            if in_process is not None:
                log("  a warm declare's CPU in process, each tree's gateway, alternating runs")
                steps_runs, steps_medians = alternating_runs(
                    {revision: tree, "this tree": None},
                    plan.batch_pairs,
                    lambda source: declare_cpu(in_process, plan, source),
                    lambda figures: (
                        f"declare {figures['declare_cpu_us']:,.0f} us,"
                        f" healthz {figures['healthz_cpu_us']:,.0f} us"
                    ),
                    log,
                )
                steps = {
                    "runs": steps_runs,
                    "medians": steps_medians,
                    "this_over_revision": {
                        key: steps_medians["this tree"][key] / steps_medians[revision][key]
                        for key in steps_medians["this tree"]
                    },
                }
        finally:
            subprocess.run(
                ["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, check=False
            )
    after, before = medians["this tree"], medians[revision]
    return {
        "revision": revision,
        "runs": runs,
        "medians": medians,
        "this_over_revision": {
            key: after[key] / before[key]
            for key in after
            if key not in NOT_RATIOS and before.get(key)
        },
    } | ({} if steps is None else {"in_process": steps})


def report(results: dict[str, Any]) -> None:
    """Print the comparison."""
    medians = results["medians"]
    runs = len(results["runs"]["this tree"])
    print(f"\nthis tree against {results['revision']}: medians of {runs} alternating runs")
    print(
        f"{'gateway':12} {'healthz/s':>10} {'declare/s':>10} {'x healthz':>10}"
        f" {'minimal x':>10} {'read x':>8} {'gateway us/declare':>19} {'errors':>7}"
    )
    for name, m in medians.items():
        print(
            f"{name[:12]:12} {m['healthz_per_second']:10,.0f} {m['declare_per_second']:10,.0f}"
            f" {m['declare_x_healthz']:10.2f} {m['declare_minimal_x_healthz']:10.2f}"
            f" {m['read_table_x_healthz']:8.2f} {m['declare_gateway_cpu_us']:19.0f}"
            f" {m['errors']:7.0f}"
        )
    print(
        f"{'gateway':12} {'load':>5} {'moves/s':>8} {'move p50 ms':>12} {'move p99 ms':>12}"
        f" {'deal errors':>12}"
    )
    for name, m in medians.items():
        print(
            f"{name[:12]:12} {m['load_average']:5.1f} {m['moves_per_second']:8,.0f}"
            f" {m['move_p50_ms']:12.1f} {m['move_p99_ms']:12.1f} {m['deal_errors']:12.0f}"
        )
    print(
        f"{'gateway':12} {'us/declare':>11} {'us/settling':>12} {'settling x':>11}"
        f" {'deals/s':>8} {'deal in healthz':>16} {'(by CPU)':>9} {'gateway us/deal':>16}"
    )
    for name, m in medians.items():
        print(
            f"{name[:12]:12} {m['declare_gateway_cpu_us']:11,.0f}"
            f" {m['settles_gateway_cpu_us']:12,.0f} {m['settles_over_declare_cpu']:11.2f}"
            f" {m['deals_per_second']:8,.0f} {m['deal_in_healthz']:16.1f}"
            f" {m['deal_in_healthz_cpu']:9.1f} {m['gateway_cpu_us_per_deal']:16,.0f}"
        )
    print("buy-ins and cash-outs, p50 / p99 ms (gateway us per request)")
    print(f"{'gateway':12} " + " ".join(f"{label:>25}" for label in SEAT_LABELS.values()))
    for name, figures in medians.items():
        m = {key: float("nan") for key in SEAT_KEYS} | figures
        print(
            f"{name[:12]:12} "
            + " ".join(
                f"{m[kind + '_p50_ms']:7.1f} / {m[kind + '_p99_ms']:6.1f}"
                f" ({m[kind + '_gateway_cpu_us']:6,.0f})"
                for kind in SEAT_LABELS
            )
            + ("" if not m["seat_errors"] else f"  errors {m['seat_errors']:.0f}")
        )
    ratios = {key: float("nan") for key in SEAT_KEYS} | results["this_over_revision"]
    print(
        f"this tree / {results['revision']}: declare x healthz"
        f" {ratios['declare_x_healthz']:.3f}, read x healthz {ratios['read_table_x_healthz']:.3f},"
        f" gateway CPU per declare {ratios['declare_gateway_cpu_us']:.3f},"
        f" moves/s {ratios['moves_per_second']:.3f}, move p50 {ratios['move_p50_ms']:.3f}"
    )
    print(
        f"this tree / {results['revision']}, p50 / p99 (gateway CPU): "
        + "; ".join(
            f"{label} {ratios[kind + '_p50_ms']:.2f} / {ratios[kind + '_p99_ms']:.2f}"
            f" ({ratios[kind + '_gateway_cpu_us']:.2f})"
            for kind, label in SEAT_LABELS.items()
        )
    )
    if "in_process" in results:
        steps = results["in_process"]
        runs = len(steps["runs"]["this tree"])
        print(f"a warm declare's CPU in process, us: medians of {runs} alternating runs")
        print(f"{'gateway':12} {'declare':>8} {'healthz':>8} {'declare/healthz':>16}")
        for name, m in steps["medians"].items():
            print(
                f"{name[:12]:12} {m['declare_cpu_us']:8,.0f} {m['healthz_cpu_us']:8,.0f}"
                f" {m['declare_over_healthz']:16.2f}"
            )
        ratios = steps["this_over_revision"]
        print(
            f"this tree / {results['revision']}: declare {ratios['declare_cpu_us']:.3f},"
            f" healthz {ratios['healthz_cpu_us']:.3f},"
            f" declare/healthz {ratios['declare_over_healthz']:.3f}"
        )
