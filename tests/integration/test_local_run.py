"""`make run`'s runner (`python -m deploy.local_run`) as a terminal runs it, and its ports.

Every socket the services listen on is on the loopback address; a port that another
program holds stops the runner, and the gateway under gunicorn, at once with one line
that names it. The runner here uses the session's Redis (REDIS_URL), so nothing is
written under ./var.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import psutil
import pytest

from deploy.processes import ProcessExitedError
from tests.support.processes import ROOT, GunicornGateway, RedisProcess, free_port, poll

LOOPBACK = {"127.0.0.1", "::ffff:127.0.0.1", "::1"}
# each port's variable, as the runner reads them
PORTS = ("GATEWAY_PORT", "EVALUATOR_PORT", "EVALUATOR_METRICS_PORT")


@contextmanager
def held_port() -> Iterator[int]:
    """A loopback port that another program (this test) listens on."""
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        yield int(holder.getsockname()[1])


def runner(redis_url: str | None, **ports: int | str) -> subprocess.Popen[str]:
    """`python -m deploy.local_run` on these ports (and variables) and the session's Redis
    (None: its own, embedded), output piped."""
    environment = {
        **os.environ,
        "GATEWAY_WORKERS": "1",
        **{name: str(port) for name, port in ports.items()},
    }
    environment.pop("REDIS_URL", None)
    if redis_url is not None:
        environment["REDIS_URL"] = redis_url
    return subprocess.Popen(
        [sys.executable, "-m", "deploy.local_run"],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def read_until(started: subprocess.Popen[str], output: list[str], beginning: str) -> None:
    """Read the runner's lines into `output` up to the first that begins with `beginning`."""
    assert started.stdout is not None
    for line in started.stdout:
        output.append(line)
        if line.startswith(beginning):
            return


def listening_addresses(pid: int) -> set[tuple[str, int]]:
    """The addresses that the process and its descendants listen on (TCP)."""
    root = psutil.Process(pid)
    found = set()
    for process in (root, *root.children(recursive=True)):
        try:
            connections = process.net_connections(kind="tcp")
        except psutil.NoSuchProcess:
            continue
        found |= {(c.laddr.ip, c.laddr.port) for c in connections if c.status == psutil.CONN_LISTEN}
    return found


def test_every_service_of_make_run_listens_on_loopback_alone(redis_process: RedisProcess) -> None:
    ports = {name: free_port() for name in PORTS}
    started = runner(redis_process.url, **ports)
    output: list[str] = []
    try:
        read_until(started, output, "Ctrl-C stops everything")
        transcript = "".join(output)
        assert "cardroom is running:" in transcript, transcript

        def all_listening() -> set[tuple[str, int]] | None:
            found = listening_addresses(started.pid)
            return found if set(ports.values()) <= {port for _, port in found} else None

        addresses = poll(all_listening, 30, "every service listening")
        assert {host for host, _ in addresses} <= LOOPBACK, addresses
        assert {port for _, port in addresses} == set(ports.values()), addresses
        # gunicorn's own "Listening at" names no socket when each worker holds its own
        assert not re.search(r"Listening at: +\(", transcript), transcript
        assert f"Listening at: http://127.0.0.1:{ports['GATEWAY_PORT']} " in transcript
    finally:
        started.send_signal(signal.SIGINT)
        rest, _ = started.communicate(timeout=60)
    assert started.returncode == 0, "".join(output) + rest
    # the embedded Redis, which this run left out (REDIS_URL), is bound to loopback too
    command = RedisProcess(ROOT / "var" / "unused", 1).command()
    assert command[command.index("--bind") + 1] == "127.0.0.1"


@pytest.mark.parametrize("variable", PORTS)
def test_a_port_in_use_stops_make_run_at_once_in_one_line(
    variable: str, redis_process: RedisProcess
) -> None:
    with held_port() as taken:
        ports = {name: free_port() for name in PORTS} | {variable: taken}
        began = time.monotonic()
        started = runner(redis_process.url, **ports)
        output, _ = started.communicate(timeout=30)
        took = time.monotonic() - began
    assert started.returncode == 1, output
    assert took < 5, f"{took:.1f} s"
    (line,) = output.splitlines()
    assert line.startswith(f"cardroom did not start: port {taken} ({variable}) is in use"), line
    suggested = int(re.findall(rf"{variable}=(\d+) make run", line)[0])
    assert suggested not in ports.values()


def test_two_variables_on_one_port_are_named(redis_process: RedisProcess) -> None:
    port = free_port()
    started = runner(redis_process.url, GATEWAY_PORT=port, EVALUATOR_METRICS_PORT=port)
    output, _ = started.communicate(timeout=30)
    assert started.returncode == 1, output
    assert output.strip() == (
        f"cardroom did not start: GATEWAY_PORT and EVALUATOR_METRICS_PORT are both {port};"
        " give each its own port"
    )


def test_gunicorn_stops_at_once_when_its_port_is_in_use(
    redis_url: str, evaluator_address: str, tmp_path: Path
) -> None:
    logs = tmp_path / "gunicorn.log"
    with held_port() as taken:
        gateway = GunicornGateway(redis_url, evaluator_address, logs, port=taken)
        began = time.monotonic()
        with pytest.raises(ProcessExitedError, match="exited with status 1"):
            gateway.start()
        took = time.monotonic() - began
    assert took < 5, f"{took:.1f} s"
    errors = [line for line in logs.read_text().splitlines() if "[ERROR]" in line]
    assert len(errors) == 1, logs.read_text()
    assert errors[0].endswith(
        f"the gateway cannot listen on 127.0.0.1:{taken}: Address already in use"
    )


def test_a_crashed_redis_is_started_again_and_play_goes_on(tmp_path: Path) -> None:
    ports = {name: free_port() for name in PORTS}
    data = str(tmp_path / "redis")
    started = runner(None, REDIS_PORT=free_port(), REDIS_DATA_DIR=data, **ports)
    output: list[str] = []
    gateway = GunicornGateway("", "", None, port=ports["GATEWAY_PORT"])
    try:
        read_until(started, output, "Ctrl-C stops everything")
        assert "cardroom is running:" in "".join(output), "".join(output)
        first = gateway.http.sign_up("ann")
        server = next(
            child
            for child in psutil.Process(started.pid).children(recursive=True)
            if "redis-server" in child.name()
        )
        server.kill()
        read_until(started, output, "redis is running again")
        transcript = "".join(output)
        assert "redis exited (status -9); starting it again" in transcript, transcript
        # the gateway, never restarted, serves again from the same Redis
        poll(lambda: gateway.status("/readyz") == 200, 60, "the gateway ready again")
        assert gateway.http.sign_up("bo").name == "bo"
        me = gateway.http.call("GET", "/v1/players/me", first)
        assert me.status_code in (200, 401)  # a write of the last second may be lost
        assert started.poll() is None
    finally:
        started.send_signal(signal.SIGINT)
        rest, _ = started.communicate(timeout=60)
    assert started.returncode == 0, "".join(output) + rest
