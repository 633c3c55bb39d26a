"""`make loadtest`'s locust file, run headless for a few seconds against a gunicorn gateway."""

from __future__ import annotations

import csv
import subprocess
import sys
from pathlib import Path

from tests.support.processes import GunicornGateway

ROOT = Path(__file__).resolve().parents[2]


def test_locust_players_meet_no_unexpected_answer(
    redis_url: str, evaluator_address: str, tmp_path: Path
) -> None:
    gateway = GunicornGateway(
        redis_url,
        evaluator_address,
        tmp_path / "gunicorn.log",
        threads=16,
        CLOCK_INTERVAL="0.05",
        RATE_LIMIT_PER_ADDRESS="0",
        RATE_LIMIT_PER_TOKEN="0",
        LOG_LEVEL="warning",
    )
    gateway.start()
    base = gateway.url
    try:
        prefix = tmp_path / "locust"
        run = subprocess.run(
            [
                sys.executable,
                "-m",
                "locust",
                "-f",
                "bench/gateway/locustfile.py",
                "--headless",
                "--host",
                base,
                "--users",
                "6",
                "--spawn-rate",
                "6",
                "--run-time",
                "6s",
                "--stop-timeout",
                "5",
                "--csv",
                str(prefix),
                "--only-summary",
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        with open(f"{prefix}_stats.csv", newline="") as stats:
            rows = {row["Name"]: row for row in csv.DictReader(stats)}
        total = rows.pop("Aggregated")
        assert int(total["Failure Count"]) == 0, run.stdout[-3000:]
        assert int(total["Request Count"]) > 50
        played = {name for name, row in rows.items() if int(row["Request Count"]) > 0}
        moves = {"guts: declare", "guts: declare, return=minimal", "paiute: discard"}
        assert moves | {"guts: sit", "paiute: sit"} <= played
        assert any(name.endswith("(refused)") for name in played)
        # the player moves went through; every refusal was one the player expected
        assert rows["guts: declare"]["Failure Count"] == "0"
    finally:
        gateway.stop()
