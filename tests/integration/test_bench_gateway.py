"""`make bench-gateway` runs: every part of the gateway's benchmark, once and briefly.

The figures are not checked (tests assert behaviour, not timings); that the benchmark
starts the service, plays its requests and deals without an unexpected answer, buys
into seats and cashes them out with every balance back, counts the Redis commands and
prints its report is. Its tables are seated by players where the gateway has them, and
anonymously on a revision older than players (`--against REV`); its buy-ins and
cash-outs run on a revision older than wallets too, with no balance to check.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from bench.gateway.client import Connection, act, guts_table, sign_up
from bench.gateway.load import run_requests
from bench.gateway.plan import BUY_IN, GUTS_OPTIONS, PLAYERS
from bench.gateway.seats import ALONE_TABLES, buy_in_requests, cash_outs, seat_plans
from bench.gateway.steps import step_costs
from tests.support.processes import GunicornGateway

ROOT = Path(__file__).resolve().parents[2]


def test_the_gateway_benchmark_runs_every_part() -> None:
    finished = subprocess.run(
        [
            *(sys.executable, "-m", "bench.gateway", "--smoke"),
            *("--gc", "--steps", "--scaling", "--profile", "--batch", "--sections"),
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
    # the idle gateway's CPU, left out of the settling declares' wait for the packer, is
    # measured in the same run
    assert results["requests"]["idle_cores"]["gateway"] >= 0
    spent = results["requests"]["declare"]["cpu_us_per_request"]
    assert spent["gateway"] > 0
    assert spent["all"] >= max(v for role, v in spent.items() if role != "all")
    assert results["redis_commands"]
    assert results["growth"]
    # --sections: each kind of request's CPU by section, under gunicorn's gevent workers
    assert "where a gevent worker's CPU goes" in report, report
    sections = results["sections"]
    assert sections["requests"]["settling"] > 0
    assert sections["requests"]["move"] > 0
    settling = sections["kinds"]["settling"]
    for name in ("showdown: the evaluator's call", "rules: dealing the next deal"):
        assert settling[name] > 0, settling
    assert sections["calls"]["settling"]["showdown: the evaluator's call"] >= 1
    assert "showdown: the evaluator's call" not in sections["kinds"]["move"]
    assert sections["http_server_us"] > 0
    # buy-ins and cash-outs: every seat bought and left, each balance back right after
    assert "buy-ins and cash-outs" in report, report
    seats = results["seats"]
    assert seats["errors"] == {}
    assert seats["concurrent"]["seats_per_round"] == 32 * PLAYERS
    assert seats["alone"]["seats_per_round"] == ALONE_TABLES * PLAYERS
    assert seats["balances_checked"] == (32 + ALONE_TABLES) * PLAYERS
    for group in ("concurrent", "alone"):
        for kind in ("buy_in", "cash_out", "cash_out_seen", "check"):
            row = seats[group][kind]
            assert 0 < row["p50_ms"]["median"] <= row["p99_ms"]["median"], (group, kind, row)
        assert seats[group]["buy_in"]["cpu_us_per_request"]["gateway"] > 0
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
    from bench.gateway.steps import STEPS

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
# the last revision before wallets and the ledger: a buy-in is the table's commit alone
BEFORE_LEDGER = "2adb38b"


def _gateway_of(revision: str, tree: Path) -> Path:
    """The gateway's code of `revision`, unpacked into `tree` with `git archive`."""
    archive = subprocess.run(
        ["git", "archive", "--format=tar", revision, "gateway"],
        cwd=ROOT, capture_output=True, check=True,
    )  # fmt: skip
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive.stdout, check=True)
    return tree


@pytest.fixture(scope="module")
def tree_before_players(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The gateway's code of BEFORE_PLAYERS (no git state)."""
    return _gateway_of(BEFORE_PLAYERS, tmp_path_factory.mktemp("before-players"))


@pytest.fixture(scope="module")
def tree_before_ledger(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The gateway's code of BEFORE_LEDGER (no git state)."""
    return _gateway_of(BEFORE_LEDGER, tmp_path_factory.mktemp("before-ledger"))


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


@pytest.mark.parametrize("tree", ["this tree", "before the ledger"])
def test_the_benchmark_buys_in_and_cashes_out_fresh_seats(
    redis_url: str, evaluator_address: str, tmp_path: Path, tree: str, request: Any
) -> None:
    source = ROOT if tree == "this tree" else request.getfixturevalue("tree_before_ledger")
    gateway = GunicornGateway(
        redis_url, evaluator_address, tmp_path / "gunicorn.log", source=source,
        defaults={}, CLOCK="false", LOG_LEVEL="warning", PLAYERS_PER_ADDRESS="0",
        PLAY_MONEY_GRANT=str(10**12),
    )  # fmt: skip
    gateway.start()
    try:
        plans = seat_plans(gateway.url, 2, 2, GUTS_OPTIONS)
        # each client's two tables, filled from seat 1, each seat a player of its own
        assert [[seat.number for seat in mine] for mine in plans] == [[1, 2, 3, 4, 5] * 2] * 2
        assert len({seat.key for mine in plans for seat in mine}) == 20
        wallets = tree == "this tree"
        assert all((seat.balance is not None) == wallets for mine in plans for seat in mine)
        bought = run_requests(gateway.url, buy_in_requests(plans, BUY_IN), time.monotonic(), None)
        assert dict(bought.errors) == {}
        assert len(bought.latencies) == 20
        if wallets:
            # a balance that is not back is seen: the first seat's expected one chip more
            first = plans[0][0]
            plans[0][0] = dataclasses.replace(first, balance=(first.balance or 0) + 1)
        left = cash_outs(gateway.url, plans, time.monotonic(), BUY_IN)
        assert len(left.latencies) == 20
        if wallets:
            assert dict(left.errors) == {"balance not back after the leave": 1}
            assert len(left.deliveries) == 19
            conn = Connection(gateway.url)
            me = conn.expect("GET", "/v1/players/me", token=first.key)
            conn.close()
            assert (me["balance"], me["pending"]) == (first.balance, 0)
        else:
            assert dict(left.errors) == {}
            assert left.deliveries == []  # no wallet to read back
    finally:
        gateway.stop()


@pytest.mark.parametrize("tree", ["this tree", "before the ledger"])
def test_a_warm_declare_is_measured_in_process_with_each_trees_gateway(
    redis_url: str, evaluator_address: str, tree: str, request: Any
) -> None:
    # `--against REV --steps`: the spawned process imports REV's gateway package alone
    source = None if tree == "this tree" else request.getfixturevalue("tree_before_ledger")
    costs = step_costs(redis_url, evaluator_address, 2, 1, source)
    assert costs["declares_per_round"] == 8
    assert costs["declare"]["median"] > costs["healthz"]["median"] > 0
    if source is None:
        assert Path(costs["gateway_package"]) == ROOT / "api"
    else:
        assert "cardroom-gateway-of-" in costs["gateway_package"]
        assert not (Path(costs["gateway_package"]).parent).exists()  # the link is removed
