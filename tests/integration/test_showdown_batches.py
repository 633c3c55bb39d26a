"""The gateway's evaluator client in a gevent process, as in a gateway worker, against
the real evaluator: showdowns made at once share calls, and each gets its own ranks, its
own refusal, and the same 503 as a call of its own when the evaluator cannot answer."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from cardroom.evaluator.v1 import evaluator_pb2 as pb
from cardroom.evaluator.v1 import evaluator_pb2_grpc as pb_grpc
from evaluator.server import EvaluatorServer
from tests.support.processes import probe_results


def _calls(server: EvaluatorServer, method: str, outcome: str) -> float:
    labels = {"method": method, "outcome": outcome}
    return (
        server.telemetry.registry.get_sample_value("cardroom_evaluator_calls_total", labels) or 0.0
    )


@pytest.fixture(scope="module")
def probe(evaluator_server: EvaluatorServer, evaluator_address: str) -> dict[str, Any]:
    batches = _calls(evaluator_server, "ShowdownBatch", "ok")
    result = probe_results("tests.support.showdown_probe", evaluator_address)
    result["batch_calls"] = _calls(evaluator_server, "ShowdownBatch", "ok") - batches
    return result


def test_showdowns_made_at_once_share_calls_and_each_gets_its_ranks(
    probe: dict[str, Any],
) -> None:
    seen = probe["concurrent"]
    assert seen["right"] == 39
    assert seen["alone_right"] == 5
    assert probe["batch_calls"] >= 1


def test_a_refused_showdown_in_a_batch_is_refused_alone(probe: dict[str, Any]) -> None:
    status, code, detail = probe["concurrent"]["refused"]
    assert (status, code) == (422, "invalid_hand")
    assert "hands[1]" in detail


def test_without_an_evaluator_each_showdown_is_unavailable(probe: dict[str, Any]) -> None:
    for status, code, _ in probe["unreachable"]["answers"]:
        assert (status, code) == (503, "evaluator_unavailable")


def test_each_showdown_keeps_its_deadline(probe: dict[str, Any]) -> None:
    for status, code, detail in probe["silent"]["answers"]:
        assert (status, code) == (503, "evaluator_unavailable")
        assert "did not answer within 0.3 s" in detail


def test_a_batch_call_ranks_each_showdown_and_refuses_one_alone(evaluator_stub: Any) -> None:
    def seat(number: int, cards: str) -> pb.SeatHand:
        return pb.SeatHand(seat=number, cards=cards)

    good = pb.ShowdownRequest(game=pb.GUTS_3, hands=[seat(1, "Ah Kh Qh"), seat(2, "2c 2d 9s")])
    bad = pb.ShowdownRequest(game=pb.GUTS_3, hands=[seat(1, "Ah Kh Qh"), seat(2, "Ah 3c 4c")])
    stub: pb_grpc.EvaluatorStub = evaluator_stub
    reply = stub.ShowdownBatch(pb.ShowdownBatchRequest(showdowns=[good, bad, good]))
    assert [outcome.WhichOneof("outcome") for outcome in reply.outcomes] == [
        "ranked",
        "fault",
        "ranked",
    ]
    assert reply.outcomes[0].ranked == stub.Showdown(good)
    assert "hands[1]" in reply.outcomes[1].fault
    assert "Ah" in reply.outcomes[1].fault
    with pytest.raises(grpc.RpcError) as empty:
        stub.ShowdownBatch(pb.ShowdownBatchRequest())
    assert empty.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "showdowns" in (empty.value.details() or "")
