"""The gateway worker's garbage-collection policy (api.runtime.gc_policy) and its setting."""

from __future__ import annotations

import gc
import json
import subprocess
import sys
from typing import Any

import pytest

from api.settings import DEFAULT_YOUNG_THRESHOLD, Settings
from api.telemetry import PauseLog

PROBE = """
import gc, json, sys
from api.runtime.gc_policy import settle_after_load
import api.wsgi  # what a worker loads before the hook runs
before = gc.get_threshold()
settle_after_load(int(sys.argv[1]))
print(json.dumps({"before": before, "after": gc.get_threshold(),
                  "frozen": gc.get_freeze_count(), "tracked": len(gc.get_objects())}))
"""


def _settle(threshold: int) -> dict[str, Any]:
    # a process of its own: freezing and thresholds are process-wide
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(threshold)],
        capture_output=True,
        text=True,
        check=True,
        env={"REDIS_URL": "redis://127.0.0.1:1/0", "CLOCK": "false", "PATH": "/usr/bin:/bin"},
    )
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def test_the_loaded_app_is_frozen_and_young_collections_run_less_often() -> None:
    result = _settle(10_000)
    before = result["before"]
    assert result["after"] == [10_000, before[1], before[2]]
    # the app's objects left every collection: what remains tracked is a small rest
    assert result["frozen"] > 20_000
    assert result["tracked"] < result["frozen"] / 4


def test_a_zero_threshold_turns_the_policy_off() -> None:
    result = _settle(0)
    assert result["after"] == result["before"]
    assert result["frozen"] == 0


def test_the_threshold_is_read_from_the_environment() -> None:
    assert Settings.from_env({}).gc_threshold == DEFAULT_YOUNG_THRESHOLD
    assert Settings.from_env({"GATEWAY_GC_THRESHOLD": "50000"}).gc_threshold == 50_000
    assert Settings.from_env({"GATEWAY_GC_THRESHOLD": "0"}).gc_threshold == 0


@pytest.mark.parametrize("raw", ["many", "-1", "100000000"])
def test_a_malformed_threshold_is_refused_by_name(raw: str) -> None:
    with pytest.raises(ValueError, match="GATEWAY_GC_THRESHOLD"):
        Settings.from_env({"GATEWAY_GC_THRESHOLD": raw})


def test_collections_are_timed_by_generation_until_drained() -> None:
    pauses = PauseLog()
    pauses.install()
    pauses.install()  # once only
    try:
        gc.collect()
        gc.collect(0)
    finally:
        pauses.uninstall()
    gc.collect()  # no longer timed
    noted = pauses.drain()
    assert [generation for generation, _ in noted] == [2, 0]
    assert all(0 <= seconds < 5 for _, seconds in noted)
    assert pauses.drain() == []


def test_undrained_pauses_are_bounded() -> None:
    pauses = PauseLog(limit=3)
    pauses.install()
    try:
        for _ in range(5):
            gc.collect(1)
    finally:
        pauses.uninstall()
    assert [generation for generation, _ in pauses.drain()] == [1, 1, 1]
