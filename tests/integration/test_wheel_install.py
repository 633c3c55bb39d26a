"""The server as a user installs it: the built wheel in a clean virtualenv, nothing else.

The development install carries every dev extra, so a runtime dependency that the
package forgets to declare (gunicorn's gevent worker needs `packaging`) goes unseen
there. Here the wheel is built from a copy of the sources the images copy, installed
with its declared dependencies only, and the evaluator, the gateway (gunicorn with its
default worker class) and the clock are started from that virtualenv, outside the
source tree, and a Guts and a Paiute deal are played through the SDK.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from cardroom.evaluator.v1 import evaluator_pb2 as pb
from cardroom.evaluator.v1 import evaluator_pb2_grpc as pb_grpc
from deploy import demo
from tests.support.processes import RedisProcess, free_port, poll

ROOT = Path(__file__).resolve().parents[2]
# what deploy/Dockerfile.* copy into their build stage
SOURCES = ("pyproject.toml", "README.md", "protos", "gateway", "evaluator")
# in the dev install, absent from the runtime one
DEV_ONLY = ("pytest", "hypothesis", "grpc_tools", "cardroom_client")

pytestmark = pytest.mark.slow


@dataclass
class Installed:
    """A clean virtualenv with the server's wheel installed, and a directory to run in."""

    venv: Path
    run_dir: Path

    @property
    def python(self) -> str:
        """The virtualenv's interpreter."""
        return str(self.venv / "bin" / "python")

    def environment(self, **extra: str) -> dict[str, str]:
        """The environment a process of the installed server gets: no path into the tree."""
        keep = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
        return {**keep, "PATH": f"{self.venv / 'bin'}:{keep.get('PATH', '')}", **extra}


def run(command: list[str], cwd: Path, timeout: float = 600) -> str:
    """Run a build or install step; its output, or a failure that shows it."""
    done = subprocess.run(
        command, cwd=cwd, capture_output=True, text=True, timeout=timeout, check=False
    )
    assert done.returncode == 0, f"{' '.join(command)}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """Build the wheel from a copy of the image sources and install it alone in a new venv."""
    base = tmp_path_factory.mktemp("wheel")
    source = base / "source"
    source.mkdir()
    for name in SOURCES:
        origin = ROOT / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            shutil.copy2(origin, source / name)
    wheels = base / "wheels"
    run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", str(wheels), str(source)], base)
    (wheel,) = wheels.glob("cardroom-*.whl")
    venv = base / "venv"
    # the base interpreter, not this venv's: nothing of the dev install may leak in
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], base)
    run([str(venv / "bin" / "python"), "-m", "ensurepip", "--upgrade"], base)
    run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)], base)
    run_dir = base / "run"
    run_dir.mkdir()
    return Installed(venv, run_dir)


class Started:
    """Processes of the installed server, their logs kept for a failure's message."""

    def __init__(self, installed: Installed) -> None:
        """Nothing running yet."""
        self.installed = installed
        self.processes: list[tuple[str, subprocess.Popen[bytes], Path]] = []

    def start(self, name: str, command: list[str], **environment: str) -> subprocess.Popen[bytes]:
        """Start `command` from the virtualenv, in the run directory, logging to a file."""
        log = self.installed.run_dir / f"{name}.log"
        with log.open("ab") as out:
            process = subprocess.Popen(
                command,
                cwd=self.installed.run_dir,
                env=self.installed.environment(**environment),
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        self.processes.append((name, process, log))
        return process

    def logs(self) -> str:
        """Every process's exit status and the tail of its log."""
        parts = []
        for name, process, log in self.processes:
            tail = log.read_text(errors="replace")[-3000:]
            parts.append(f"--- {name} (exit {process.poll()}):\n{tail}")
        return "\n".join(parts)

    def stop(self) -> None:
        """SIGTERM each, then SIGKILL what lingers."""
        for _, process, _ in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait(10)


@pytest.fixture
def redis_server(tmp_path: Path) -> Iterator[RedisProcess]:
    """A private Redis for the installed server."""
    server = RedisProcess(str(tmp_path))
    server.start()
    yield server
    server.stop()


def test_the_installed_wheel_has_no_dev_extras(installed: Installed) -> None:
    for module in DEV_ONLY:
        found = subprocess.run(
            [installed.python, "-c", f"import {module}"],
            cwd=installed.run_dir,
            env=installed.environment(),
            capture_output=True,
            check=False,
        )
        assert found.returncode != 0, f"{module} is importable from the runtime install"


def test_the_installed_wheel_serves_whole_deals(
    installed: Installed, redis_server: RedisProcess
) -> None:
    started = Started(installed)
    evaluator_port, gateway_port = free_port(), free_port()
    heartbeat = installed.run_dir / "clock-alive"
    heartbeat.unlink(missing_ok=True)
    shared = {"REDIS_URL": redis_server.url, "EVALUATOR_ADDR": f"127.0.0.1:{evaluator_port}"}
    try:
        started.start(
            "evaluator",
            [installed.python, "-m", "evaluator", "--listen", f"127.0.0.1:{evaluator_port}"],
            EVALUATOR_METRICS_PORT=str(free_port()),
        )
        with grpc.insecure_channel(f"127.0.0.1:{evaluator_port}") as channel:
            pb_grpc.EvaluatorStub(channel).Ping(pb.PingRequest(), wait_for_ready=True, timeout=90)
        # as the image runs it: the config read from the installed package, no worker
        # class named, so gunicorn_conf's default (gevent) is the one that must load
        gunicorn = started.start(
            "gateway",
            [
                str(installed.venv / "bin" / "gunicorn"),
                "--no-control-socket",
                "-c",
                "python:gateway.runtime.gunicorn_conf",
                "gateway.wsgi:app",
            ],
            **shared,
            GATEWAY_BIND=f"127.0.0.1:{gateway_port}",
            GATEWAY_WORKERS="2",
            CLOCK="false",
        )
        started.start(
            "clock",
            [installed.python, "-m", "gateway.runtime.clock"],
            **shared,
            CLOCK_INTERVAL="0.2",
            CLOCK_HEARTBEAT_FILE=str(heartbeat),
        )
        url = f"http://127.0.0.1:{gateway_port}"

        def ready() -> bool:
            assert gunicorn.poll() is None, f"gunicorn exited:\n{started.logs()}"
            with urllib.request.urlopen(f"{url}/readyz", timeout=5) as reply:
                return bool(reply.status == 200)

        try:
            poll(ready, seconds=90, what="the installed gateway's /readyz")
        except AssertionError as error:
            raise AssertionError(f"{error}\n{started.logs()}") from None
        lines: list[str] = []
        status = demo.main(["--url", url, "--timeout", "60"], say=lines.append)
        transcript = "\n".join(lines)
        assert status == 0, f"{transcript}\n{started.logs()}"
        assert "Guts deal 1 complete" in transcript, transcript
        assert "Paiute deal 1 complete" in transcript, transcript
        poll(heartbeat.exists, seconds=30, what="the installed clock's heartbeat")
        assert "gevent" in (installed.run_dir / "gateway.log").read_text().lower()
    finally:
        started.stop()
