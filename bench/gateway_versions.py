"""`make bench-gateway ARGS="--against REV"`: this tree's gateway against revision REV's.

REV is checked out into a temporary git worktree; the runs alternate between its
gateway and this tree's, each on a Redis and an evaluator of its own, with the request
rounds of the default run (`/healthz`, a table read, declares with and without the
table in the answer). Figures are medians over the runs of each tree: requests/s, each
request's ratio to `/healthz` in the same round, the gateway's CPU per declare. Only
the gateway's code differs: the evaluator, the load and the protobuf code are this
tree's. The tables' seats are players of their own where the gateway has players; a
revision older than them answers 404 to `POST /v1/players` and gets anonymous seats
(`bench.gateway_http.guts_table`).
"""

from __future__ import annotations

import dataclasses
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.gateway_batch import rounds_of
from bench.service import GatewayConfig

ROOT = Path(__file__).resolve().parents[1]


def compare(load: Any, plan: Any, revision: str, log: Callable[[str], None]) -> dict[str, Any]:
    """`plan.batch_pairs` runs of REV's gateway and of this tree's, alternating."""
    from bench.gateway_bench import alternating_runs

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
                lambda config: rounds_of(load, plan, config),
                lambda figures: (
                    f"declare {figures['declare_x_healthz']:.2f}x healthz"
                    f" ({figures['declare_per_second']:,.0f}/s), read"
                    f" {figures['read_table_x_healthz']:.2f}x"
                ),
                log,
            )
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
            key: after[key] / before[key] for key in after if key != "errors" and before[key]
        },
    }


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
    ratios = results["this_over_revision"]
    print(
        f"this tree / {results['revision']}: declare x healthz"
        f" {ratios['declare_x_healthz']:.3f}, read x healthz {ratios['read_table_x_healthz']:.3f},"
        f" gateway CPU per declare {ratios['declare_gateway_cpu_us']:.3f}"
    )
