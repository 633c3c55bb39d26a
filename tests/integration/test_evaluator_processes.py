"""`python -m evaluator --processes 2`: one port served by two processes, their metrics
summed, health answered by each, a dead one started again, SIGTERM stopping them all."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import psutil
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cardroom.evaluator.v1 import evaluator_pb2 as pb
from cardroom.evaluator.v1 import evaluator_pb2_grpc as pb_grpc
from tests.support.processes import ESTABLISHED, free_port, poll, tcp_sockets

SERVICE = "cardroom.evaluator.v1.Evaluator"


@dataclass
class Evaluator:
    """The supervisor, its ports and the log it writes."""

    process: subprocess.Popen[bytes]
    port: int
    health_port: int
    metrics_port: int
    log: Path

    def lines(self) -> list[dict[str, object]]:
        """Its JSON log lines so far."""
        text = self.log.read_text()
        return [json.loads(line) for line in text.splitlines() if line.startswith("{")]

    def pids(self) -> list[int]:
        """The workers' process ids, as the supervisor's children."""
        try:
            children = psutil.Process(self.process.pid).children()
        except psutil.NoSuchProcess:
            return []
        return [child.pid for child in children]


def _workers(evaluator: Evaluator) -> list[int]:
    """The workers serving its port (the resource tracker, also a child, serves none)."""
    return [pid for pid in evaluator.pids() if _holds_listener(pid, evaluator.port)]


def _holds_listener(pid: int, port: int) -> bool:
    inodes = {s.inode for s in tcp_sockets() if s.local_port == port and s.state == 10}
    return bool(_socket_inodes(pid) & inodes)


def _socket_inodes(pid: int) -> set[int]:
    inodes = set()
    try:
        for descriptor in Path(f"/proc/{pid}/fd").iterdir():
            target = os.readlink(descriptor)
            if target.startswith("socket:["):
                inodes.add(int(target[8:-1]))
    except OSError:
        pass
    return inodes


@pytest.fixture
def evaluator(tmp_path: Path) -> Iterator[Evaluator]:
    port, health_port, metrics_port = free_port(), free_port(), free_port()
    log = tmp_path / "evaluator.log"
    with log.open("wb") as output:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "evaluator",
                "--processes",
                "2",
                "--listen",
                f"127.0.0.1:{port}",
                "--health-listen",
                f"127.0.0.1:{health_port}",
                "--metrics-port",
                str(metrics_port),
                "--metrics-address",
                "127.0.0.1",
                "--grace",
                "20",
            ],
            stderr=output,
            env={**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(tmp_path / "metrics")},
        )
    running = Evaluator(process, port, health_port, metrics_port, log)
    poll(lambda: any(line["message"] == "evaluator listening" for line in running.lines()), 120, "")
    yield running
    if process.poll() is None:
        process.kill()
        process.wait()
    for pid in running.pids():
        os.kill(pid, signal.SIGKILL)


def _evaluate(port: int) -> tuple[grpc.Channel, pb.EvaluateResponse]:
    """A new connection and one single-hand call on it (the connection kept open)."""
    channel = grpc.insecure_channel(
        f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)]
    )
    reply = pb_grpc.EvaluatorStub(channel).Evaluate(
        pb.EvaluateRequest(game=pb.GUTS_3, hands=["Ah Kh Qh"]), timeout=30
    )
    return channel, reply


def test_connections_spread_over_both_processes_and_metrics_add_up(evaluator: Evaluator) -> None:
    workers = _workers(evaluator)
    assert len(workers) == 2
    channels = []
    for _ in range(24):  # each its own connection: the kernel picks a process for each
        channel, reply = _evaluate(evaluator.port)
        assert reply.categories == [pb.STRAIGHT_FLUSH]
        channels.append(channel)
    connections = {
        s.inode for s in tcp_sockets() if s.local_port == evaluator.port and s.state == ESTABLISHED
    }
    held = {pid: len(_socket_inodes(pid) & connections) for pid in workers}
    assert all(count > 0 for count in held.values()), held  # 2**-23 that one holds all
    assert sum(held.values()) == 24
    for channel in channels:
        channel.close()
    text = urllib.request.urlopen(
        f"http://127.0.0.1:{evaluator.metrics_port}/metrics", timeout=30
    ).read()
    assert b'cardroom_evaluator_calls_total{method="Evaluate",outcome="ok"} 24.0' in text
    assert b'cardroom_evaluator_hands_total{game="guts3"} 24.0' in text


def test_every_process_answers_health_checks(evaluator: Evaluator) -> None:
    for port in (evaluator.port, evaluator.health_port):
        for _ in range(8):
            with grpc.insecure_channel(
                f"127.0.0.1:{port}", options=[("grpc.use_local_subchannel_pool", 1)]
            ) as channel:
                reply = health_pb2_grpc.HealthStub(channel).Check(
                    health_pb2.HealthCheckRequest(service=SERVICE), timeout=30
                )
                assert reply.status == health_pb2.HealthCheckResponse.SERVING


def test_a_process_that_dies_is_started_again(evaluator: Evaluator) -> None:
    first, second = _workers(evaluator)
    os.kill(first, signal.SIGKILL)
    poll(
        lambda: len(_workers(evaluator)) == 2 and first not in _workers(evaluator),
        120,
        "a new process serving",
    )
    assert second in _workers(evaluator)
    died = [line for line in evaluator.lines() if line["message"] == "evaluator process died"]
    assert died[0]["pid"] == first
    for _ in range(8):
        channel, reply = _evaluate(evaluator.port)
        channel.close()
        assert reply.strengths


def test_sigterm_stops_every_process_and_keeps_the_log_in_order(evaluator: Evaluator) -> None:
    workers = _workers(evaluator)
    evaluator.process.send_signal(signal.SIGTERM)
    assert evaluator.process.wait(timeout=60) == 0
    for pid in workers:
        assert not Path(f"/proc/{pid}").exists() or "Z" in _state(pid)
    messages = [line["message"] for line in evaluator.lines()]
    assert messages[-2:] == ["evaluator stopping", "evaluator stopped"]


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(") ")[1][:1]
    except OSError:
        return "Z"


def test_a_second_evaluator_on_the_same_port_is_refused(evaluator: Evaluator) -> None:
    second = subprocess.run(
        [
            *(sys.executable, "-m", "evaluator", "--processes", "2", "--metrics-port", "0"),
            *("--listen", f"127.0.0.1:{evaluator.port}"),
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert second.returncode == 1
    refusal = json.loads(second.stderr.splitlines()[-1])
    assert refusal["message"] == "evaluator did not start"
    assert f"cannot listen on 127.0.0.1:{evaluator.port}" in refusal["reason"]
    assert len(_workers(evaluator)) == 2  # the first serves on
