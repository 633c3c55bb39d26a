"""The heartbeat file and its probe (api.runtime.heartbeat)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from api.runtime import heartbeat


def test_a_beat_creates_the_file_and_renews_its_time(tmp_path: Path) -> None:
    path = str(tmp_path / "alive")
    assert heartbeat.age(path) is None
    heartbeat.beat(path)
    fresh = heartbeat.age(path)
    assert fresh is not None
    assert fresh < 5
    os.utime(path, (1_000.0, 1_000.0))
    assert heartbeat.age(path, now=1_030.0) == 30.0
    heartbeat.beat(path)
    renewed = heartbeat.age(path)
    assert renewed is not None
    assert renewed < 5


def test_check_names_what_is_wrong(tmp_path: Path) -> None:
    path = str(tmp_path / "alive")
    assert "does not exist" in str(heartbeat.check(path, 10))
    heartbeat.beat(path)
    os.utime(path, (1_000.0, 1_000.0))
    assert heartbeat.check(path, 10, now=1_009.0) is None
    assert "last touched 11.0 s ago (more than 10 s)" in str(heartbeat.check(path, 10, now=1_011.0))


def test_the_probe_exits_0_1_or_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = str(tmp_path / "alive")
    assert heartbeat.main([path, "10"]) == 1
    heartbeat.beat(path)
    assert heartbeat.main([path, "10"]) == 0
    for bad in ([path], [path, "soon"], [path, "0"], [path, "-5"], [path, "nan"]):
        assert heartbeat.main(bad) == 2
    assert "usage: python -m api.runtime.heartbeat FILE MAX_AGE_SECONDS" in capsys.readouterr().err
