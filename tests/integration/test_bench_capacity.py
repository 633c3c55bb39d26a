"""`make bench-capacity` runs: every part of the capacity benchmark, small and briefly.

The figures are not checked (tests assert behaviour, not timings); that each part
measures what it names, against another revision's clock too, and that the model is
printed from them, is.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.gateway.capacity import QUICK_RESULTS, SCALES

ROOT = Path(__file__).resolve().parents[2]


def capacity(*arguments: str) -> subprocess.CompletedProcess[str]:
    """`python -m bench.gateway.capacity --quick ARGUMENTS`, which must succeed."""
    finished = subprocess.run(
        [sys.executable, "-m", "bench.gateway.capacity", "--quick", *arguments],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
    return finished


def test_the_capacity_benchmark_runs_every_part() -> None:
    finished = capacity("--against", "HEAD")
    results = json.loads(QUICK_RESULTS.read_text())
    memory = results["memory"]
    assert memory["rows"]["10"]["hand_records"] == 10
    assert memory["bytes_per_deal"] > 0
    histories = results["histories"]
    assert set(histories["kinds"]) == {
        "guts 5 seats",
        "guts 3 seats",
        "paiute 4 seats",
        "paiute 3 seats",
    }
    # a packed deal takes at most a quarter of what it took as JSON with its events
    assert 0 < histories["packed_bytes_per_deal"] < histories["json_bytes_per_deal"] / 4
    assert results["watchers"]["connected"] == results["watchers"]["watchers"]
    for tree in ("before", "this tree"):
        for clocks in ("1", "2"):
            assert results["clock"][tree][clocks]["applied"] > 0
        assert tree in results["sweep_clocks"]
    assert {row["repaired"] for row in results["sweep"].values()} == {0}
    assert [row["players"] for row in results["model"]] == list(SCALES)
    assert "| players at once |" in finished.stdout


def test_the_capacity_benchmark_measures_the_lobby() -> None:
    capacity("--parts", "lobby")
    lobby = json.loads(QUICK_RESULTS.read_text())["lobby"]
    assert set(lobby["levels"]) == {"100", "2000"}
    for row in lobby["levels"].values():
        assert row["guts, ante 1-10, a free seat"]["tables_on_the_page"] == 20
        assert row["listed"] > 0
    assert set(lobby["ratios"]) == set(lobby["levels"]["100"]) - {"listed"}
    assert lobby["seats"]["quick_seat_ms"] > 0
    assert lobby["seats"]["plain_seat_ms"] > 0
