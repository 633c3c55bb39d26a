"""evaluator.codec writes exactly what the generated protobuf code would."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cardroom.evaluator.v1 import evaluator_pb2 as pb
from evaluator.codec import ResponseEncoder, encode_varint, encode_varints


@given(st.lists(st.integers(0, 2**32 - 1), max_size=300))
def test_varints_match_protobuf(values: list[int]) -> None:
    message = pb.EvaluateResponse(strengths=values)
    expected = message.SerializeToString()
    payload = encode_varints(np.array(values, dtype=np.uint32))
    assert b"".join([b"\x0a", encode_varint(len(payload)), payload]) == expected or not values


@pytest.mark.parametrize("describe", [True, False])
@pytest.mark.parametrize("leftovers", [True, False])
def test_reply_parses_to_the_same_message(describe: bool, leftovers: bool) -> None:
    rng = np.random.default_rng(7)
    strengths = rng.integers(0, 1 << 18, 500).astype(np.uint32)
    lefts = rng.integers(0, 256, 500).astype(np.uint8) if leftovers else None
    encoder = ResponseEncoder(
        lambda s: f"hand {s} é", lambda s: (s % 12 + 1).astype(np.uint8), 1 << 18
    )
    reply = pb.EvaluateResponse.FromString(encoder.encode(strengths, lefts, describe))
    assert list(reply.strengths) == strengths.tolist()
    assert list(reply.categories) == (strengths % 12 + 1).tolist()
    assert list(reply.descriptions) == ([f"hand {s} é" for s in strengths] if describe else [])
    assert reply.leftovers == (lefts.tobytes() if lefts is not None else b"")


def test_empty_reply_is_empty() -> None:
    encoder = ResponseEncoder(str, lambda s: s.astype(np.uint8), 16)
    assert encoder.encode(np.zeros(0, dtype=np.uint32), None, True) == b""


@pytest.mark.parametrize("describe", [True, False])
def test_a_few_hands_encode_exactly_like_many(describe: bool) -> None:
    encoder = ResponseEncoder(
        lambda s: f"hand {s}", lambda s: (s % 12 + 1).astype(np.uint8), 1 << 18
    )
    for strengths in ([5], [70_000, 3, 3], [1, 2, 3, 4, 5, 6, 7, 8]):
        many = encoder.encode(np.array(strengths, dtype=np.uint32), None, describe)
        assert encoder.encode_few(strengths, None, describe) == many
    lefts = np.array([4, 255], dtype=np.uint8)
    many = encoder.encode(np.array([9, 10], dtype=np.uint32), lefts, describe)
    assert encoder.encode_few([9, 10], lefts.tobytes(), describe) == many
    assert encoder.encode_few([], None, describe) == b""
