"""`python -m api.runtime.clock` as deployed: it applies deadlines, beats its heartbeat file,
fails its liveness probe when its loop stops turning, and stops on SIGTERM."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from api.app import create_app
from tests.support.gateway import Gateway, gateway_settings
from tests.support.play import wait_for

ROOT = Path(__file__).resolve().parents[2]


def probe(path: Path, max_age: float) -> subprocess.CompletedProcess[str]:
    """The liveness probe of deploy/k8s/clock.yaml, run as kubelet would."""
    return subprocess.run(
        [sys.executable, "-m", "api.runtime.heartbeat", str(path), str(max_age)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=30,
    )


@pytest.fixture
def gateway_without_clock(redis_url: str, evaluator_address: str) -> Iterator[Gateway]:
    """A gateway app in process whose own clock is off: only the clock process ticks."""
    app = create_app(gateway_settings(redis_url, evaluator_address, clock=False))
    app.testing = True
    yield Gateway(app, app.test_client())
    app.extensions["cardroom.service"].evaluator.close()


def start_clock(redis_url: str, evaluator_address: str, heartbeat: Path) -> subprocess.Popen[str]:
    """`python -m api.runtime.clock` as deployed, beating `heartbeat`; its logs on stdout."""
    env = {
        **os.environ,
        "REDIS_URL": redis_url,
        "EVALUATOR_ADDR": evaluator_address,
        "CLOCK_INTERVAL": "0.05",
        "CLOCK_HEARTBEAT_FILE": str(heartbeat),
        "LOG_LEVEL": "info",
    }
    return subprocess.Popen(
        [sys.executable, "-m", "api.runtime.clock"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


@pytest.fixture
def clock_process(
    redis_url: str, evaluator_address: str, tmp_path: Path
) -> Iterator[tuple[subprocess.Popen[str], Path]]:
    """`python -m api.runtime.clock` with a heartbeat file, stopped (and resumed) at the end."""
    heartbeat = tmp_path / "clock-alive"
    process = start_clock(redis_url, evaluator_address, heartbeat)
    try:
        yield process, heartbeat
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGCONT)
            process.kill()
        process.communicate(timeout=30)


def test_the_clock_process_applies_deadlines_and_beats(
    gateway_without_clock: Gateway, clock_process: tuple[subprocess.Popen[str], Path]
) -> None:
    _, heartbeat = clock_process
    wait_for(heartbeat.exists, seconds=30)
    assert probe(heartbeat, 5).returncode == 0
    first = heartbeat.stat().st_mtime
    wait_for(lambda: heartbeat.stat().st_mtime > first)

    gateway = gateway_without_clock
    table_id = gateway.create(turn_seconds=1, deal_pause_seconds=0)
    players = [gateway.sit(table_id, name) for name in ("ann", "bob")]
    started = gateway.call("POST", f"/v1/tables/{table_id}/actions", players[0],
                           json={"action": "start"})  # fmt: skip
    assert started.status_code == 200, started.get_json()

    # nobody declares: only the clock process can end the deal at its deadline and,
    # with no pause, deal the next one
    def next_deal() -> bool:
        view = gateway.call("GET", f"/v1/tables/{table_id}").get_json()
        return bool(view["hand_number"] >= 2)

    wait_for(next_deal, seconds=20)


def test_a_stopped_clock_fails_its_probe_and_sigterm_stops_it(
    clock_process: tuple[subprocess.Popen[str], Path],
) -> None:
    process, heartbeat = clock_process
    wait_for(heartbeat.exists, seconds=30)
    process.send_signal(signal.SIGSTOP)  # a loop that no longer turns
    try:
        time.sleep(1.5)
        stale = probe(heartbeat, 1)
        assert stale.returncode == 1
        assert "last touched" in stale.stderr
    finally:
        process.send_signal(signal.SIGCONT)
    wait_for(lambda: probe(heartbeat, 1).returncode == 0, seconds=60)

    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=60)
    assert process.returncode == 0
    assert "clock stopped" in output


def test_a_clock_that_cannot_write_its_heartbeat_keeps_ticking_and_says_so(
    redis_url: str, evaluator_address: str, tmp_path: Path
) -> None:
    missing = tmp_path / "no-such-directory" / "clock-alive"
    process = start_clock(redis_url, evaluator_address, missing)
    assert process.stdout is not None
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(process.stdout or ()), daemon=True)
    reader.start()
    # the first failed beat comes after the loop (and its SIGTERM handler) started, however
    # long a loaded machine takes to import; then a second of ticks that must stay quiet
    wait_for(lambda: any("heartbeat file not written" in line for line in lines), seconds=120)
    time.sleep(1)
    process.send_signal(signal.SIGTERM)
    process.wait(60)
    reader.join(60)
    output = "".join(lines)
    assert process.returncode == 0
    assert output.count("heartbeat file not written") == 1  # once, not every tick
    assert "clock stopped" in output
    assert probe(missing, 5).returncode == 1
