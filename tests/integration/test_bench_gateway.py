"""`make bench-gateway` runs: every part of the gateway's benchmark, once and briefly.

The figures are not checked (tests assert behaviour, not timings); that the benchmark
starts the service, plays its requests and deals without an unexpected answer, counts
the Redis commands and prints its report is. Its tables are seated by players where the
gateway has them, and anonymously on a revision older than players (`--against REV`).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.gateway_bench import GUTS_OPTIONS
from bench.gateway_http import Connection, act, guts_table, sign_up
from tests.support.processes import GunicornGateway

ROOT = Path(__file__).resolve().parents[2]


def test_the_gateway_benchmark_runs_every_part() -> None:
    finished = subprocess.run(
        [
            *(sys.executable, "-m", "bench.gateway_bench", "--smoke"),
            *("--gc", "--steps", "--scaling", "--profile", "--batch"),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert finished.returncode == 0, finished.stderr[-3000:]
    report = finished.stdout
    for line in (
        "GET /healthz (baseline)",
        "declare (not the last)",
        "the same, Prefer: return=minimal",
        "CPU per request, us",
        "deals/s",
        "event delivery",
    ):
        assert line in report, report
    assert "unexpected answers: none" in report, report
    results = json.loads((ROOT / "bench" / "results" / "gateway_smoke.json").read_text())
    # every declare answered as asked: 200 with the table, or 204 without it
    assert results["requests"]["errors"] == {}
    assert results["requests"]["declare_minimal"]["requests_per_second"]["median"] > 0
    spent = results["requests"]["declare"]["cpu_us_per_request"]
    assert spent["gateway"] > 0
    assert spent["all"] >= max(v for role, v in spent.items() if role != "all")
    assert results["redis_commands"]
    assert results["growth"]
    # --gc: one run with the collector's policy off and one with it on
    assert "declare CPU, on / off" in report, report
    for setting in ("off", "on"):
        (run,) = results["gc"]["runs"][setting]
        assert run["declares"] == 32 * 4
        assert run["declare_cpu_us"] > 0
    # --batch: one run with the Redis commands batched and one without, no error
    assert "Redis commands batched (REDIS_BATCH) or not" in report, report
    for setting in ("off", "on"):
        (run,) = results["batch"]["runs"][setting]
        assert run["errors"] == 0
        assert run["declare_per_second"] > 0
        assert run["declare_x_healthz"] > 0
    # --steps: every step of a warm declare timed, the timers all put back afterwards
    steps = results["steps"]
    assert "where a warm declare's CPU goes" in report, report
    assert steps["declares_per_round"] == 16
    assert steps["healthz"]["median"] > 0
    assert steps["declare"]["median"] > 0
    from bench.gateway_steps import STEPS

    assert set(steps["steps"]) == set(STEPS)
    assert all(figure["median"] > 0 for figure in steps["steps"].values()), steps["steps"]
    timed = sum(figure["median"] for figure in steps["steps"].values())
    assert timed <= steps["declare_timed"]["median"] * 1.01
    # --profile: a pyinstrument profile of plain declares and of declares that settle
    profiles = results["profiles"]
    assert set(profiles) == {"declare", "declare that settles (showdown)"}
    assert all("TableService.act" in text for text in profiles.values()), profiles
    # --scaling: each worker class (the smoke run tries 2 workers of each), no error
    assert [row["config"] for row in results["scaling"]] == [
        "gthread, 2 worker(s) x 32 threads",
        "gevent, 2 worker(s)",
    ]
    for row in results["scaling"]:
        assert row["requests"]["errors"] == {}
        assert row["deals"]["errors"] == {}
        assert row["deals"]["deals_per_second"]["median"] > 0
    assert "scaling (medians)" in report, report


# the last revision before the players API: POST /v1/players answers 404 there
BEFORE_PLAYERS = "3420b94"


@pytest.fixture(scope="module")
def tree_before_players(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The gateway's code of BEFORE_PLAYERS, unpacked with `git archive` (no git state)."""
    tree = tmp_path_factory.mktemp("before-players")
    archive = subprocess.run(
        ["git", "archive", "--format=tar", BEFORE_PLAYERS, "gateway"],
        cwd=ROOT, capture_output=True, check=True,
    )  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


@pytest.mark.parametrize("tree", ["this tree", "before players"])
def test_the_benchmark_seats_players_where_the_gateway_has_them(
    redis_url: str, evaluator_address: str, tmp_path: Path, tree: str, request: Any
) -> None:
    source = ROOT if tree == "this tree" else request.getfixturevalue("tree_before_players")
    gateway = GunicornGateway(
        redis_url, evaluator_address, tmp_path / "gunicorn.log", source=source,
        defaults={}, CLOCK="false", LOG_LEVEL="warning", PLAYERS_PER_ADDRESS="0",
    )  # fmt: skip
    gateway.start()
    conn = Connection(gateway.url)
    try:
        keys = [sign_up(conn, name) for name in ("ann", "bo")]
        if tree == "this tree":
            assert all(key is not None and key.startswith("crk_") for key in keys)
            # a player is needed: the anonymous table is refused
            status, body = conn.call("POST", "/v1/tables", {"game": "guts"})
            assert (status, body["code"]) == (401, "missing_token")
        else:
            assert keys == [None, None]
        table = guts_table(conn, 3, 100, **GUTS_OPTIONS)
        assert [seat.number for seat in table.seats] == [1, 2, 3]
        status, body = act(conn, table.table_id, table.seats[0], action="start")
        assert status == 200, body
        assert body["table"]["phase"] == "declaring"
    finally:
        conn.close()
        gateway.stop()
