"""evaluator.codec writes exactly what the generated protobuf code would."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cardroom.evaluator.v1 import evaluator_pb2 as pb
from evaluator.bulk import packed_request, read_packed_reply
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


@pytest.mark.parametrize("describe", [True, False])
@pytest.mark.parametrize("leftovers", [True, False])
def test_a_packed_reply_says_what_the_readable_one_says(describe: bool, leftovers: bool) -> None:
    rng = np.random.default_rng(8)
    strengths = rng.integers(0, 1 << 18, 3000).astype(np.uint32)
    strengths[:50] = strengths[50]  # repeated strengths share one table entry
    lefts = rng.integers(0, 256, 3000).astype(np.uint8) if leftovers else None
    encoder = ResponseEncoder(
        lambda s: f"hand {s} é", lambda s: (s % 12 + 1).astype(np.uint8), 1 << 18
    )
    readable = pb.EvaluateResponse.FromString(encoder.encode(strengths, lefts, describe))
    packed = pb.EvaluateResponse.FromString(encoder.encode_packed(strengths, lefts, describe))
    reply = read_packed_reply(packed)
    assert len(packed.strengths) == len(packed.categories) == len(packed.descriptions) == 0
    assert reply.strengths.tolist() == list(readable.strengths)
    assert reply.categories is not None
    assert reply.categories.tolist() == list(readable.categories)
    assert packed.leftovers == readable.leftovers
    if describe:
        assert reply.descriptions == list(readable.descriptions)
        assert len(packed.description_table) == len(set(strengths.tolist()))
        assert sorted(set(packed.description_table)) == sorted(packed.description_table)
    else:
        assert reply.descriptions is None
        assert packed.description_indexes == b""


def test_an_empty_packed_reply_is_empty() -> None:
    encoder = ResponseEncoder(str, lambda s: s.astype(np.uint8), 16)
    assert encoder.encode_packed(np.zeros(0, dtype=np.uint32), None, True) == b""


def test_packed_fields_are_little_endian_and_fixed_width() -> None:
    encoder = ResponseEncoder(str, lambda s: (s % 5 + 1).astype(np.uint8), 1 << 18)
    reply = pb.EvaluateResponse.FromString(
        encoder.encode_packed(np.array([1, 0x30201], dtype=np.uint32), None, False)
    )
    assert reply.packed_strengths == b"\x01\x00\x00\x00\x01\x02\x03\x00"
    assert reply.packed_categories == bytes([2, 0x30201 % 5 + 1])


def test_a_packed_request_carries_the_hands_and_asks_for_a_packed_reply() -> None:
    hands = np.array([[0, 1, 2], [51, 50, 49]], dtype=np.int64)
    request = packed_request(pb.GUTS_3, hands)
    assert request.packed_hands == bytes([0, 1, 2, 51, 50, 49])
    assert request.cards_per_hand == 3
    assert request.packed_reply
    assert request.omit_descriptions
    assert not request.HasField("wild_rank")
    described = packed_request(pb.PAIUTE, hands[:, :2].repeat(3, axis=1), 9, describe=True)
    assert described.wild_rank == 9
    assert not described.omit_descriptions
    with pytest.raises(ValueError, match="2-D"):
        packed_request(pb.GUTS_3, np.zeros(3, dtype=np.uint8))


def test_a_narrow_packed_reply_has_two_byte_strengths_and_no_categories() -> None:
    encoder = ResponseEncoder(str, lambda s: (s % 5 + 1).astype(np.uint8), 1 << 15)
    strengths = np.array([1, 0x7F02, 0x0304], dtype=np.uint16)
    lefts = np.array([4, 255, 7], dtype=np.uint8)
    raw = encoder.encode_packed(strengths, lefts, False, strength_bytes=2, categories=False)
    reply = pb.EvaluateResponse.FromString(raw)
    assert reply.packed_strengths == b"\x01\x00\x02\x7f\x04\x03"
    assert reply.packed_categories == b""
    assert reply.leftovers == lefts.tobytes()
    read = read_packed_reply(reply, strength_bytes=2)
    assert read.strengths.dtype == np.dtype("<u2")
    assert read.strengths.tolist() == strengths.tolist()
    assert read.categories is None
    # the same strengths as uint32 make the same narrow reply, and a wide one as before
    assert encoder.encode_packed(strengths.astype(np.uint32), lefts, False, 2, False) == raw
    wide = pb.EvaluateResponse.FromString(encoder.encode_packed(strengths, None, True))
    assert read_packed_reply(wide).strengths.tolist() == strengths.tolist()
    with pytest.raises(ValueError, match="strength_bytes"):
        read_packed_reply(wide, strength_bytes=2)


def test_a_narrow_packed_request_asks_for_it() -> None:
    hands = np.array([[0, 1, 2]], dtype=np.uint8)
    narrow = packed_request(pb.GUTS_3, hands, strength_bytes=2, categories=False)
    assert (narrow.strength_bytes, narrow.omit_categories) == (2, True)
    wide = packed_request(pb.GUTS_3, hands)
    assert (wide.strength_bytes, wide.omit_categories) == (0, False)


@given(
    st.sampled_from([(pb.GUTS_2, 2), (pb.GUTS_3, 3)]),
    st.lists(st.integers(0, 55), min_size=1, max_size=4),
    st.booleans(),
    st.sampled_from([0, 2, 3]),
)
def test_one_guts_hand_answers_as_the_general_path(
    game: tuple[int, int], cards: list[int], omit: bool, per_hand: int
) -> None:
    from evaluator.servicer import RequestError, _one_guts_hand, evaluate

    request = pb.EvaluateRequest(
        game=game[0],  # type: ignore[arg-type]
        packed_hands=bytes(cards),
        omit_descriptions=omit,
        cards_per_hand=per_hand,
    )
    short = _one_guts_hand(request.SerializeToString())
    try:
        general = evaluate(request, request.packed_hands)
    except RequestError:
        assert short is None  # a refusal is worded by the general path
        return
    assert short is None or short == (game[0], general)
    if len(set(cards)) == len(cards) == game[1] and max(cards) < 52 and per_hand in (0, game[1]):
        assert short == (game[0], general)  # every valid single hand takes the short way


# cards, the tags that may follow them and their values, and a few other bytes
_PIECES = st.lists(st.sampled_from([0, 1, 2, 3, 5, 9, 0x20, 0x30, 51, 52, 0x80]), max_size=8)


@given(
    st.binary(max_size=12)
    | st.builds(
        bytes.__add__,
        st.sampled_from([b"\x08\x01\x1a\x02", b"\x08\x02\x1a\x03"]),
        _PIECES.map(bytes),
    )
)
def test_one_guts_hand_reads_no_bytes_the_parser_reads_otherwise(data: bytes) -> None:
    """Whatever the bytes, the short way answers what the general path answers to the
    message protobuf parses from them, or leaves them to it."""
    from google.protobuf.message import DecodeError

    from evaluator.servicer import RequestError, _one_guts_hand, evaluate

    short = _one_guts_hand(data)
    if short is None:
        return
    try:
        request = pb.EvaluateRequest.FromString(data)
        general = evaluate(request, request.packed_hands)
    except (DecodeError, RequestError) as fault:
        raise AssertionError(f"the short way answered {data!r}, which is refused") from fault
    assert short == (request.game, general)


def test_one_guts_hand_leaves_other_requests_to_the_general_path() -> None:
    from evaluator.servicer import _one_guts_hand

    hand = bytes([0, 5, 9])
    for request in (
        pb.EvaluateRequest(game=pb.GUTS_3, packed_hands=hand, packed_reply=True),
        pb.EvaluateRequest(game=pb.GUTS_3, packed_hands=hand, wild_rank=5),
        pb.EvaluateRequest(game=pb.GUTS_3, packed_hands=hand, paiute_valuation=pb.BEST_OF_ANY),
        pb.EvaluateRequest(game=pb.PAIUTE, packed_hands=bytes([0, 5, 9, 13, 17]), wild_rank=2),
        pb.EvaluateRequest(game=pb.GUTS_3, packed_hands=hand * 2),
    ):
        assert _one_guts_hand(request.SerializeToString()) is None
    # the same fields in another order, or with a default written out, take the long way
    assert _one_guts_hand(b"\x1a\x03\x00\x05\x09\x08\x02") is None
    assert _one_guts_hand(b"\x08\x02\x1a\x03\x00\x05\x09\x30\x00") is None
