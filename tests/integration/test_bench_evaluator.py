"""`make bench-evaluator`'s parts: the transport alone answers like the evaluator, and
the stream rates count the hands the replies carry.

Rates are not checked (tests assert behaviour, not timings).
"""

from __future__ import annotations

import grpc
import numpy as np

from bench.evaluator_bench import TransportServer, packed, stream_rate
from cardroom.evaluator.v1 import evaluator_pb2 as pb
from cardroom.evaluator.v1 import evaluator_pb2_grpc as pb_grpc
from evaluator.bulk import packed_request
from evaluator.loadtest import build_requests, random_hands


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
