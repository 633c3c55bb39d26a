"""The server as a user installs it: a wheel built from a fresh clone, alone in a new virtualenv.

The repository is cloned (`git clone`: its committed state, which holds no protobuf code)
into a temporary folder, and the wheel is built there with `pip wheel` alone: no make, no
`make protos`; the build generates the code (protos/generate.py). The wheel is installed
with its declared dependencies only, in a virtualenv of its own, and the evaluator, the
gateway (gunicorn with its default worker class) and the clock are started from it,
outside the source tree, against a private redis-server: the evaluator answers the
standard gRPC health service, the gateway /healthz and /readyz, and a Guts and a Paiute
deal are played through the SDK. The sdist, a wheel built from the sdist and
`pip wheel git+file://...` carry the generated code too.

The development install carries every dev package, so a runtime dependency that the
package forgets to declare (gunicorn's gevent worker needs `packaging`) goes unseen
there; here it would not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tarfile
import urllib.request
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cardroom.evaluator.v1 import evaluator_pb2 as pb
from cardroom.evaluator.v1 import evaluator_pb2_grpc as pb_grpc
from deploy import demo
from tests.support.processes import RedisProcess, free_port, poll

ROOT = Path(__file__).resolve().parents[2]
# in the dev install, absent from the runtime one
DEV_ONLY = ("pytest", "hypothesis", "grpc_tools", "cardroom_client")
# what the build generates from protos/cardroom/evaluator/v1/evaluator.proto
GENERATED = (
    "cardroom/__init__.py",
    "cardroom/evaluator/__init__.py",
    "cardroom/evaluator/v1/__init__.py",
    "cardroom/evaluator/v1/evaluator_pb2.py",
    "cardroom/evaluator/v1/evaluator_pb2_grpc.py",
    "cardroom/evaluator/v1/evaluator_pb2.pyi",
    "cardroom/evaluator/v1/evaluator_pb2_grpc.pyi",
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]


@dataclass
class Installed:
    """A clean virtualenv with the server's wheel installed, and a directory to run in."""

    venv: Path
    run_dir: Path
    wheel: Path

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


def wheel_files(wheel: Path) -> set[str]:
    """The names of the files a wheel holds."""
    with zipfile.ZipFile(wheel) as archive:
        return set(archive.namelist())


def build_wheel(source: str, into: Path) -> Path:
    """`pip wheel` of a folder, an sdist or a URL, with build isolation, as a user runs it."""
    run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(into), source],
        into.parent)  # fmt: skip
    (wheel,) = into.glob("cardroom-*.whl")
    return wheel


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A fresh clone of this repository's committed state, with no generated code."""
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout: nothing to clone")
    target = tmp_path_factory.mktemp("clone") / "cardroom"
    run(["git", "clone", "--quiet", "--no-hardlinks", str(ROOT), str(target)], target.parent)
    assert not list(target.glob("protos/**/*_pb2*.py")), "the clone holds generated code"
    return target


@pytest.fixture(scope="module")
def installed(clone: Path, tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The wheel built in the clone, installed alone in a new venv."""
    base = tmp_path_factory.mktemp("wheel")
    wheel = build_wheel(str(clone), base / "wheels")
    venv = base / "venv"
    # the base interpreter, not this venv's: nothing of the dev install may leak in
    run([sys.executable, "-m", "venv", "--without-pip", str(venv)], base)
    run([str(venv / "bin" / "python"), "-m", "ensurepip", "--upgrade"], base)
    run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheel)], base)
    run_dir = base / "run"
    run_dir.mkdir()
    return Installed(venv, run_dir, wheel)


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


def test_every_build_carries_the_generated_code(
    clone: Path, installed: Installed, tmp_path: Path
) -> None:
    assert {f"{name}" for name in GENERATED} <= wheel_files(installed.wheel)
    uv = Path(sys.executable).parent / "uv"
    run([str(uv), "build", "--quiet", "--sdist", "--out-dir", str(tmp_path / "sdist")], clone)
    (sdist,) = (tmp_path / "sdist").glob("cardroom-*.tar.gz")
    with tarfile.open(sdist) as archive:
        inside = {name.partition("/")[2] for name in archive.getnames()}
    assert {f"protos/{name}" for name in GENERATED} | {"protos/generate.py"} <= inside
    from_sdist = build_wheel(str(sdist), tmp_path / "from-sdist")
    from_git = build_wheel(f"git+file://{clone}", tmp_path / "from-git")
    for wheel in (from_sdist, from_git):
        assert wheel_files(wheel) == wheel_files(installed.wheel), wheel.parent.name


def test_the_installed_wheel_has_no_dev_extras(installed: Installed) -> None:
    program = (
        "import json; from importlib import metadata; found = metadata.metadata('cardroom');"
        " print(json.dumps([found.get_all('Provides-Extra'), found['License-Expression']]))"
    )
    extras, licence = json.loads(run([installed.python, "-c", program], installed.run_dir))
    assert extras is None
    assert licence == "MIT"
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
            health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest())
            assert health.status == health_pb2.HealthCheckResponse.SERVING
        # as the image runs it: the config read from the installed package, no worker
        # class named, so gunicorn_conf's default (gevent) is the one that must load
        gunicorn = started.start(
            "gateway",
            [
                str(installed.venv / "bin" / "gunicorn"),
                "--no-control-socket",
                "-c",
                "python:api.runtime.gunicorn_conf",
                "api.wsgi:app",
            ],
            **shared,
            GATEWAY_BIND=f"127.0.0.1:{gateway_port}",
            GATEWAY_WORKERS="2",
            CLOCK="false",
        )
        started.start(
            "clock",
            [installed.python, "-m", "api.runtime.clock"],
            **shared,
            CLOCK_INTERVAL="0.2",
            CLOCK_HEARTBEAT_FILE=str(heartbeat),
        )
        url = f"http://127.0.0.1:{gateway_port}"

        def ready() -> bool:
            assert gunicorn.poll() is None, f"gunicorn exited:\n{started.logs()}"
            for path in ("/healthz", "/readyz"):
                with urllib.request.urlopen(f"{url}{path}", timeout=5) as reply:
                    if reply.status != 200:
                        return False
            return True

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
