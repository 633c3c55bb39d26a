"""`python -m evaluator` as its own process: flags, metrics over HTTP, SIGTERM, the load tool."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cardroom.evaluator.v1 import evaluator_pb2 as pb
from cardroom.evaluator.v1 import evaluator_pb2_grpc as pb_grpc
from tests.support.processes import free_port

# the plaintext health-only port of the module's evaluator (EVALUATOR_HEALTH_LISTEN)
HEALTH_PORT = free_port()


@pytest.fixture(scope="module")
def evaluator_process() -> Iterator[tuple[subprocess.Popen[str], int, int]]:
    port, metrics = free_port(), free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "evaluator", "--metrics-port", str(metrics), "--grace", "20"],
        env={
            **os.environ,
            "EVALUATOR_LISTEN": f"127.0.0.1:{port}",
            "EVALUATOR_HEALTH_LISTEN": f"127.0.0.1:{HEALTH_PORT}",
        },
        stderr=subprocess.PIPE,
        text=True,
    )
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        pb_grpc.EvaluatorStub(channel).Ping(pb.PingRequest(), wait_for_ready=True, timeout=60)
    yield process, port, metrics
    if process.poll() is None:
        process.kill()
        process.wait()


def test_metrics_are_served_over_http(
    evaluator_process: tuple[subprocess.Popen[str], int, int],
) -> None:
    _, port, metrics = evaluator_process
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        pb_grpc.EvaluatorStub(channel).Evaluate(
            pb.EvaluateRequest(game=pb.GUTS_3, hands=["Ah Kh Qh"])
        )
    text = urllib.request.urlopen(f"http://127.0.0.1:{metrics}/metrics", timeout=30).read().decode()
    assert 'cardroom_evaluator_hands_total{game="guts3"}' in text
    assert 'cardroom_evaluator_latency_seconds_bucket{le="0.001",method="Evaluate"}' in text


def test_the_health_port_answers_health_checks_alone(
    evaluator_process: tuple[subprocess.Popen[str], int, int],
) -> None:
    with grpc.insecure_channel(f"127.0.0.1:{HEALTH_PORT}") as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(
            health_pb2.HealthCheckRequest(service="cardroom.evaluator.v1.Evaluator"), timeout=30
        )
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        with pytest.raises(grpc.RpcError) as refused:
            pb_grpc.EvaluatorStub(channel).Ping(pb.PingRequest(), timeout=30)
        assert refused.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_load_tool_reports_throughput_and_percentiles(
    evaluator_process: tuple[subprocess.Popen[str], int, int], tmp_path: Path
) -> None:
    _, port, _ = evaluator_process
    png = tmp_path / "latency.png"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "evaluator.loadtest",
            "--target",
            f"127.0.0.1:{port}",
            "--concurrency",
            "3",
            "--calls",
            "60",
            "--duration",
            "30",
            "--hands",
            "200",
            "--game",
            "paiute",
            "--json",
            "--histogram",
            str(png),
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    report = json.loads(result.stdout)
    assert report["requests"] == 60
    assert report["hands"] == 60 * 200
    assert report["errors"] == 0
    assert 0 < report["p50_ms"] <= report["p90_ms"] <= report["p99_ms"] <= report["max_ms"]
    assert "hands/s" in result.stderr  # live progress
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_stream_mode_of_the_load_tool(
    evaluator_process: tuple[subprocess.Popen[str], int, int],
) -> None:
    _, port, _ = evaluator_process
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "evaluator.loadtest",
            "--target",
            f"127.0.0.1:{port}",
            "--concurrency",
            "2",
            "--duration",
            "1",
            "--hands",
            "100",
            "--mode",
            "stream",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "throughput" in result.stdout
    assert "p99" in result.stdout


def test_sigterm_lets_the_call_in_flight_finish(
    evaluator_process: tuple[subprocess.Popen[str], int, int],
) -> None:
    process, port, _ = evaluator_process
    outcome: dict[str, object] = {}
    sent = threading.Event()

    def long_call() -> None:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            # connected first, so that however slow the machine the call goes out at once
            grpc.channel_ready_future(channel).result(timeout=60)
            call = pb_grpc.EvaluatorStub(channel).Odds.future(
                pb.OddsRequest(
                    game=pb.GUTS_3, cards="Ah Kd 2c", opponents=9, samples=1_000_000, seed=3
                ),
                timeout=60,
            )
            sent.set()
            try:
                outcome["reply"] = call.result()
            except grpc.RpcError as error:
                outcome["error"] = error

    caller = threading.Thread(target=long_call)
    caller.start()
    assert sent.wait(60), "the channel did not connect"
    # the Monte Carlo run takes most of a second even on a fast machine (0.9 s): in
    # flight 0.3 s after it was sent
    caller.join(timeout=0.3)
    assert caller.is_alive(), outcome
    process.send_signal(signal.SIGTERM)
    caller.join(timeout=60)
    assert process.wait(timeout=60) == 0
    assert "error" not in outcome, outcome.get("error")
    reply = outcome["reply"]
    assert isinstance(reply, pb.OddsResponse)
    assert reply.samples == 1_000_000
    assert process.stderr is not None
    logs = [json.loads(line) for line in process.stderr.read().splitlines() if line.startswith("{")]
    messages = [entry["message"] for entry in logs]
    assert "evaluator listening" in messages
    assert messages[-1] == "evaluator stopped"
