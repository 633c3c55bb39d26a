"""`make bench-evaluator`'s parts: the transport alone answers like the evaluator, and
the stream rates count the hands the replies carry.

Rates are not checked (tests assert behaviour, not timings).
"""

from __future__ import annotations

import json

import grpc
import numpy as np
import pytest

from bench.evaluator.floors import measure_floors, report_floors
from bench.evaluator.grpc_echo import TransportServer
from bench.evaluator.rates import packed, stream_rate
from cardroom.evaluator.v1 import evaluator_pb2 as pb
from cardroom.evaluator.v1 import evaluator_pb2_grpc as pb_grpc
from evaluator.bulk import packed_request
from evaluator.loadtest import build_requests, main, random_hands


def test_the_transport_alone_answers_with_replies_of_the_evaluators_size(
    evaluator_stub: pb_grpc.EvaluatorStub,
) -> None:
    transport = TransportServer()
    try:
        rng = np.random.default_rng(2)
        guts = np.frombuffer(random_hands(5000, 3, rng), np.uint8).reshape(-1, 3)
        paiute = np.frombuffer(random_hands(5000, 6, rng, 20), np.uint8).reshape(-1, 6)
        requests = [
            packed_request(pb.GUTS_3, guts, strength_bytes=2, categories=False),
            packed_request(pb.GUTS_3, guts),
            packed_request(pb.PAIUTE, paiute, 7, categories=False),
            packed_request(pb.PAIUTE, paiute, 7),
        ]
        with grpc.insecure_channel(f"127.0.0.1:{transport.port}") as channel:
            echoed = list(pb_grpc.EvaluatorStub(channel).EvaluateStream(iter(requests)))
        ranked = list(evaluator_stub.EvaluateStream(iter(requests)))
        for alone, real in zip(echoed, ranked, strict=True):
            assert alone.ByteSize() == real.ByteSize()
            assert len(alone.packed_strengths) == len(real.packed_strengths)
            assert len(alone.packed_categories) == len(real.packed_categories)
            assert len(alone.leftovers) == len(real.leftovers)
    finally:
        transport.stop()


def test_a_stream_rate_counts_the_hands_of_narrow_and_wide_replies(evaluator_address: str) -> None:
    port = int(evaluator_address.rsplit(":", 1)[1])
    requests = build_requests("guts3", 2000, seed=1, describe=False)
    for layout in (packed(requests, describe=False, narrow=True), packed(requests, False)):
        assert stream_rate(port, layout, 6) > 0
        assert stream_rate(port, layout, 6, streams=2) > 0


def test_the_echo_server_answers_evaluate_with_the_evaluators_bytes_from_two_processes(
    evaluator_stub: pb_grpc.EvaluatorStub, capsys: pytest.CaptureFixture[str]
) -> None:
    echo = TransportServer(processes=2)
    try:
        requests = build_requests("guts3", 1, seed=4, describe=True)[:5]
        requests += build_requests("paiute", 3, seed=5, describe=False)[:5]
        for _ in range(2):  # the second time from what it kept
            with grpc.insecure_channel(f"127.0.0.1:{echo.port}") as channel:
                stub = pb_grpc.EvaluatorStub(channel)
                for request in requests:
                    assert stub.Evaluate(request) == evaluator_stub.Evaluate(request)
        # any server speaking the contract: the load tool finds it by reflection
        main(["--target", f"127.0.0.1:{echo.port}", "--calls", "40", "--hands", "1", "--json"])
        captured = capsys.readouterr()
        assert "found by reflection" in captured.err
        assert json.loads(captured.out)["requests"] == 40
    finally:
        echo.stop()


def test_the_floors_measure_every_server_and_say_each_goal() -> None:
    floors = measure_floors(rounds=1, seconds=0.5)
    assert set(floors) == {
        f"{server}_{load}"
        for server in ("evaluator", "evaluator_2_processes", "echo")
        for load in ("single", "bulk")
    }
    for measured in floors.values():
        assert measured.requests_per_second > 0
        assert measured.cpu_per_request > 0
        assert sum(measured.shares) == pytest.approx(1.0)
    assert len(floors["evaluator_2_processes_single"].shares) >= 3  # supervisor and two
    lines = report_floors(floors, 1, 16)
    verdicts = [line for line in lines if "met" in line or "MISSED" in line]
    assert len(verdicts) == 4
    assert "16 cores serve about" in lines[-1]
