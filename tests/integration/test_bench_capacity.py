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

from bench.capacity import QUICK_RESULTS, SCALES

ROOT = Path(__file__).resolve().parents[2]


def test_the_capacity_benchmark_runs_every_part() -> None:
    finished = subprocess.run(
        [sys.executable, "-m", "bench.capacity", "--quick", "--against", "HEAD"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert finished.returncode == 0, finished.stdout[-3000:] + finished.stderr[-3000:]
    results = json.loads(QUICK_RESULTS.read_text())
    memory = results["memory"]
    assert memory["rows"]["10"]["hand_records"] == 10
    assert memory["bytes_per_deal"] > 0
    assert results["watchers"]["connected"] == results["watchers"]["watchers"]
    for tree in ("before", "this tree"):
        for clocks in ("1", "2"):
            assert results["clock"][tree][clocks]["applied"] > 0
        assert tree in results["sweep_clocks"]
    assert {row["repaired"] for row in results["sweep"].values()} == {0}
    assert [row["players"] for row in results["model"]] == list(SCALES)
    assert "| players at once |" in finished.stdout
