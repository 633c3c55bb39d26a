"""`python -m evaluator.loadtest`'s schedules, reports and thresholds against the real
evaluator: counts and exit codes, never timings."""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path

import pytest
from hdrh.histogram import HdrHistogram

from evaluator.loadrun import Stage
from evaluator.loadtest import main

QUICK = ["--hands", "5", "--game", "guts3", "--json"]


def run(
    arguments: list[str], capsys: pytest.CaptureFixture[str]
) -> tuple[int, dict[str, object], str]:
    """The exit code, the JSON report and standard error of one run."""
    code = 0
    try:
        main([*arguments, *QUICK])
    except SystemExit as exit:
        code = int(exit.code or 0)
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


def test_a_constant_rate_sends_every_request_due_and_reports_from_hdrhistogram(
    evaluator_address: str, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    table = tmp_path / "report.csv"
    code, report, errors = run(
        [
            *("--target", evaluator_address, "--rate", "200", "--duration", "1"),
            *("--report-csv", str(table), "--report-json", str(tmp_path / "report.json")),
        ],
        capsys,
    )
    assert code == 0
    assert "found by reflection" in errors
    assert report["service"] == "cardroom.evaluator.v1.Evaluator"
    assert (report["requests"], report["hands"], report["errors"]) == (200, 1000, 0)
    assert report["rate"] == 200
    order = [
        float(str(report[k]))
        for k in ("p50_ms", "p90_ms", "p99_ms", "p999_ms", "p9999_ms", "max_ms")
    ]
    assert order[0] > 0
    assert order == sorted(order)
    assert isinstance(report["send_lag_p99_ms"], float)
    histogram = HdrHistogram.decode(str(report["histogram"]))
    assert histogram.get_total_count() == 200
    rows = list(csv.DictReader(table.open()))
    assert [row["requests"] for row in rows] == ["200"]
    assert json.loads((tmp_path / "report.json").read_text())["requests"] == 200


def test_steps_ramps_and_sweeps_are_stages(
    evaluator_address: str, capsys: pytest.CaptureFixture[str]
) -> None:
    target = ["--target", evaluator_address]
    _, steps, _ = run([*target, "--step", "50,50,150,1"], capsys)
    stages = steps["stages"]
    assert isinstance(stages, list)
    assert [(s["rate"], s["requests"]) for s in stages] == [(50, 50), (100, 100), (150, 150)]
    assert steps["requests"] == 300
    _, ramp, _ = run([*target, "--ramp", "0,200", "--duration", "1"], capsys)
    assert ramp["requests"] == 100  # the mean rate, 100/s, for a second
    _, sweep, _ = run([*target, "--sweep", "1,3", "--calls", "30"], capsys)
    stages = sweep["stages"]
    assert isinstance(stages, list)
    assert [(s["concurrency"], s["requests"]) for s in stages] == [(1, 30), (3, 30)]


def test_a_ramps_requests_come_ever_closer() -> None:
    ramp = Stage("ramp", 10.0, 1, 10.0, 30.0)
    offsets = [ramp.offset(i) for i in range(200)]
    gaps = [b - a for a, b in itertools.pairwise(offsets)]
    assert gaps == sorted(gaps, reverse=True)
    assert ramp.offset(200) == pytest.approx(10.0)  # (10 + 30) / 2 * 10 requests in 10 s


def test_thresholds_set_the_exit_code(
    evaluator_address: str, capsys: pytest.CaptureFixture[str]
) -> None:
    target = ["--target", evaluator_address, "--calls", "20"]
    code, _, errors = run([*target, "--max-p99", "1us"], capsys)
    assert code == 1
    assert "p99" in errors
    assert "FAILED" in errors
    code, _, errors = run([*target, "--max-p99", "60s", "--max-errors", "0.1%"], capsys)
    assert code == 0
    assert "met" in errors
    unknown = ["--service", "cardroom.evaluator.v1.Nothing"]
    code, report, errors = run([*target, *unknown, "--max-errors", "50%"], capsys)
    assert code == 1
    assert report["errors"] == 20
    assert report["error_rate"] == 1.0
    assert "UNIMPLEMENTED" in errors


def test_flags_that_cannot_go_together_are_refused(evaluator_address: str) -> None:
    for flags in (["--rate", "10", "--sweep", "1,2"], ["--max-errors", "lots"], ["--rate", "0"]):
        with pytest.raises(SystemExit) as refused:
            main(["--target", evaluator_address, *flags])
        assert refused.value.code == 2


def test_a_constant_rate_on_streams_times_each_message_from_when_it_was_due(
    evaluator_address: str, capsys: pytest.CaptureFixture[str]
) -> None:
    arguments = ["--target", evaluator_address, "--mode", "stream", "--concurrency", "3"]
    code, report, _ = run([*arguments, "--rate", "150", "--duration", "1"], capsys)
    assert code == 0
    assert (report["requests"], report["errors"], report["concurrency"]) == (150, 0, 3)
    histogram = HdrHistogram.decode(str(report["histogram"]))
    assert histogram.get_total_count() == 150
