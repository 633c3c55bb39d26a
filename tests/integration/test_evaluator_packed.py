"""The bulk path over gRPC on loopback: packed replies say exactly what readable ones say."""

from __future__ import annotations

import asyncio
import itertools
import json

import grpc
import numpy as np
import numpy.typing as npt
import pytest

from cardroom.evaluator.v1 import evaluator_pb2 as pb
from cardroom.evaluator.v1 import evaluator_pb2_grpc as pb_grpc
from evaluator.bulk import PackedReply, packed_request, read_packed_reply
from evaluator.cards import card_text
from evaluator.loadtest import build_requests, load, main, random_hands

Stub = pb_grpc.EvaluatorStub
CHUNK = 10_000


def every_hand(size: int) -> npt.NDArray[np.uint8]:
    return np.array(list(itertools.combinations(range(52), size)), dtype=np.uint8)


def readable_texts(hands: npt.NDArray[np.uint8]) -> list[str]:
    return [" ".join(card_text(card) for card in row) for row in hands.tolist()]


def assert_same(packed: PackedReply, readable: pb.EvaluateResponse, described: bool) -> None:
    assert packed.strengths.tolist() == list(readable.strengths)
    assert packed.categories is not None
    assert packed.categories.tolist() == list(readable.categories)
    assert packed.descriptions == (list(readable.descriptions) if described else None)
    if readable.leftovers:
        assert packed.leftovers is not None
        assert packed.leftovers.tobytes() == readable.leftovers
    else:
        assert packed.leftovers is None


@pytest.mark.parametrize(("game", "size"), [(pb.GUTS_2, 2), (pb.GUTS_3, 3)])
def test_every_guts_hand_packed_as_readable(
    evaluator_stub: Stub, game: pb.Game.ValueType, size: int
) -> None:
    hands = every_hand(size)
    for start in range(0, len(hands), CHUNK):
        block = hands[start : start + CHUNK]
        readable = evaluator_stub.Evaluate(
            pb.EvaluateRequest(game=game, hands=readable_texts(block))
        )
        packed = evaluator_stub.Evaluate(packed_request(game, block, describe=True))
        assert list(packed.strengths) == list(packed.categories) == []
        assert list(packed.descriptions) == []
        assert_same(read_packed_reply(packed), readable, described=True)
        bare = evaluator_stub.Evaluate(packed_request(game, block))
        assert list(bare.description_table) == []
        assert bare.description_indexes == b""
        assert_same(read_packed_reply(bare), readable, described=False)


@pytest.mark.parametrize("valuation", [pb.PAIUTE_VALUATION_UNSPECIFIED, pb.BEST_OF_ANY])
@pytest.mark.parametrize("size", [5, 6])
def test_random_paiute_hands_packed_as_readable(
    evaluator_stub: Stub, size: int, valuation: pb.PaiuteValuation.ValueType
) -> None:
    rng = np.random.default_rng(size * 10 + valuation)
    combinations = 0
    for wild in range(2, 15):
        turned_up = 4 * (wild - 2) + int(rng.integers(0, 4))
        hands = np.frombuffer(random_hands(3000, size, rng, turned_up), dtype=np.uint8)
        hands = hands.reshape(-1, size)
        # a thousand more folded onto four ranks, the wild one among them, so that
        # combinations and wild cards are common
        folded = (hands[:1000] % 16 + min(4 * (wild - 2), 36)).astype(np.uint8)
        folded = folded[[len(set(row)) == size for row in folded.tolist()]]
        folded = folded[((folded // 4 + 2) == wild).sum(axis=1) <= 3]
        hands = np.concatenate([hands, folded])
        request = packed_request(pb.PAIUTE, hands, wild, describe=True, valuation=valuation)
        packed = evaluator_stub.Evaluate(request)
        request.packed_reply = False  # the same request as it was sent before packed replies
        readable = evaluator_stub.Evaluate(request)
        assert_same(read_packed_reply(packed), readable, described=True)
        combinations += int((read_packed_reply(packed).strengths > 0).sum())
    assert combinations > 300


def test_a_few_hands_and_readable_hands_get_packed_replies_too(evaluator_stub: Stub) -> None:
    texts = ["Ah Kh Qh", "5c 3d 2h", "10d Th 9s"]
    readable = evaluator_stub.Evaluate(pb.EvaluateRequest(game=pb.GUTS_3, hands=texts))
    from_text = evaluator_stub.Evaluate(
        pb.EvaluateRequest(game=pb.GUTS_3, hands=texts, packed_reply=True)
    )
    assert_same(read_packed_reply(from_text), readable, described=True)
    one = evaluator_stub.Evaluate(packed_request(pb.GUTS_3, np.array([[50, 46, 42]], np.uint8)))
    reply = read_packed_reply(one)
    assert reply.strengths.tolist() == [readable.strengths[0]]
    assert reply.categories is not None
    assert reply.categories.tolist() == [pb.STRAIGHT_FLUSH]
    paiute = evaluator_stub.Evaluate(
        pb.EvaluateRequest(
            game=pb.PAIUTE, wild_rank=7, hands=["Ks Kh Kd Kc 7h 2c"], packed_reply=True
        )
    )
    categories = read_packed_reply(paiute).categories
    assert categories is not None
    assert categories.tolist() == [pb.FOUR_TWO]
    assert paiute.leftovers == b"\xff"
    empty = evaluator_stub.Evaluate(pb.EvaluateRequest(game=pb.GUTS_2, packed_reply=True))
    assert empty == pb.EvaluateResponse()


def test_the_readable_reply_is_what_it_always_was(evaluator_address: str) -> None:
    hands = np.frombuffer(random_hands(2000, 3, np.random.default_rng(5)), np.uint8)
    request = pb.EvaluateRequest(game=pb.GUTS_3, packed_hands=hands.tobytes())
    with grpc.insecure_channel(evaluator_address) as channel:
        raw = channel.unary_unary(
            "/cardroom.evaluator.v1.Evaluator/Evaluate",
            request_serializer=pb.EvaluateRequest.SerializeToString,
            response_deserializer=None,
        )
        reply_bytes = raw(request)
    reply = pb.EvaluateResponse.FromString(reply_bytes)
    # nothing of the packed fields, and the very bytes the generated code would write
    assert reply.packed_strengths == reply.packed_categories == b""
    assert list(reply.description_table) == []
    assert reply.description_indexes == b""
    assert (
        reply_bytes
        == pb.EvaluateResponse(
            strengths=reply.strengths, categories=reply.categories, descriptions=reply.descriptions
        ).SerializeToString()
    )
    assert len(reply.strengths) == len(reply.descriptions) == 2000


@pytest.mark.parametrize(
    ("request_", "fragments"),
    [
        (
            pb.EvaluateRequest(game=pb.GUTS_3, packed_hands=bytes([1, 2, 60]), packed_reply=True),
            ["packed_hands", "60"],
        ),
        (
            pb.EvaluateRequest(
                game=pb.GUTS_3, packed_hands=bytes(30) + bytes([0, 1, 1]), packed_reply=True
            ),
            ["packed_hands: hand 0", "duplicate"],
        ),
        (
            pb.EvaluateRequest(game=pb.GUTS_3, packed_hands=bytes(range(4)), packed_reply=True),
            ["packed_hands", "4 bytes"],
        ),
        (
            pb.EvaluateRequest(
                game=pb.PAIUTE, packed_hands=bytes(range(60)), cards_per_hand=6, packed_reply=True
            ),
            ["wild_rank: required for PAIUTE"],
        ),
        (
            pb.EvaluateRequest(
                game=pb.PAIUTE, wild_rank=5, packed_hands=bytes(range(60)), packed_reply=True
            ),
            ["cards_per_hand"],
        ),
        (
            pb.EvaluateRequest(
                game=pb.GUTS_2, packed_hands=bytes(range(2)) * 100_001, packed_reply=True
            ),
            ["packed_hands: 100001 hands, at most 100000 per call"],
        ),
        (
            pb.EvaluateRequest(game=pb.GUTS_2, packed_hands=bytes(range(2)) * 10_001),
            ["packed_hands: 10001 hands, at most 10000 per call (100000 with packed_reply)"],
        ),
        (
            pb.EvaluateRequest(game=pb.GUTS_3, hands=["Ah Kh Zz"], packed_reply=True),
            ["hands[0]", "Zz"],
        ),
        (pb.EvaluateRequest(hands=["Ah Kh Qh"], packed_reply=True), ["game"]),
        (
            pb.EvaluateRequest(game=pb.GUTS_3, hands=["Ah Kh Qh"], strength_bytes=2),
            ["strength_bytes: only a packed_reply has fixed-width strengths"],
        ),
        (
            pb.EvaluateRequest(game=pb.GUTS_3, hands=["Ah Kh Qh"], omit_categories=True),
            ["omit_categories: only a packed_reply leaves the categories out"],
        ),
        (
            pb.EvaluateRequest(
                game=pb.GUTS_3, packed_hands=bytes(range(30)), packed_reply=True, strength_bytes=3
            ),
            ["strength_bytes: 3, expected 2 or 4"],
        ),
        (
            pb.EvaluateRequest(
                game=pb.PAIUTE,
                wild_rank=5,
                cards_per_hand=6,
                packed_hands=bytes(range(60)),
                packed_reply=True,
                strength_bytes=2,
            ),
            ["strength_bytes: 2 holds Guts strengths only; Paiute's need 4"],
        ),
    ],
)
def test_bad_bulk_requests_name_the_field(
    evaluator_stub: Stub, request_: pb.EvaluateRequest, fragments: list[str]
) -> None:
    with pytest.raises(grpc.RpcError) as caught:
        evaluator_stub.Evaluate(request_)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    for fragment in fragments:
        assert fragment in caught.value.details()


def test_a_packed_batch_with_all_four_wild_cards_names_the_hand(evaluator_stub: Stub) -> None:
    fine = bytes([20, 21, 22, 44, 45, 0])  # 7c 7d 7h Kc Kd 2c
    four = bytes([20, 21, 22, 23, 45, 0])
    request = pb.EvaluateRequest(
        game=pb.PAIUTE,
        wild_rank=7,
        cards_per_hand=6,
        packed_hands=fine * 40 + four + fine,
        packed_reply=True,
    )
    with pytest.raises(grpc.RpcError) as caught:
        evaluator_stub.Evaluate(request)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert caught.value.details().startswith("packed_hands: hand 40: holds all four sevens")


def test_a_stream_mixes_packed_and_readable_replies(evaluator_stub: Stub) -> None:
    hands = np.frombuffer(random_hands(10_000, 3, np.random.default_rng(9)), np.uint8)
    hands = hands.reshape(-1, 3)
    readable = pb.EvaluateRequest(game=pb.GUTS_3, packed_hands=hands.tobytes())
    bulk = packed_request(pb.GUTS_3, hands)
    replies = list(evaluator_stub.EvaluateStream(iter([bulk, readable, bulk])))
    assert_same(read_packed_reply(replies[0]), replies[1], described=False)
    assert replies[0] == replies[2]
    bad = pb.EvaluateRequest(game=pb.GUTS_3, packed_hands=bytes([1, 1, 2]), packed_reply=True)
    with pytest.raises(grpc.RpcError) as caught:
        list(evaluator_stub.EvaluateStream(iter([bulk, bad])))
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert caught.value.details().startswith("message 1: packed_hands")


def test_the_load_tool_drives_the_bulk_path(evaluator_address: str) -> None:
    requests = build_requests("guts3", 10_000, seed=1, describe=False, packed_reply=True)
    assert all(request.packed_reply for request in requests)
    report, _ = asyncio.run(load(evaluator_address, requests, 2, 60.0, 6, "stream", progress=False))
    assert report.errors == 0
    assert report.requests == 6
    assert report.hands == 60_000


def test_a_message_of_100000_packed_hands_is_ranked_as_ten_of_10000(evaluator_stub: Stub) -> None:
    hands = np.frombuffer(random_hands(100_000, 6, np.random.default_rng(5), 20), np.uint8)
    hands = hands.reshape(-1, 6)
    whole = read_packed_reply(
        evaluator_stub.Evaluate(packed_request(pb.PAIUTE, hands, wild_rank=7, describe=True))
    )
    parts = [
        read_packed_reply(
            evaluator_stub.Evaluate(
                packed_request(pb.PAIUTE, hands[i : i + CHUNK], wild_rank=7, describe=True)
            )
        )
        for i in range(0, len(hands), CHUNK)
    ]
    assert whole.strengths.tolist() == [s for part in parts for s in part.strengths.tolist()]
    assert whole.categories is not None
    assert whole.categories.tolist() == [
        c for part in parts if part.categories is not None for c in part.categories.tolist()
    ]
    assert whole.descriptions == [d for part in parts for d in part.descriptions or []]
    assert whole.leftovers is not None
    assert whole.leftovers.tolist() == [
        left
        for part in parts
        for left in (part.leftovers.tolist() if part.leftovers is not None else [])
    ]


def test_a_stream_of_big_and_small_messages_answers_in_order(evaluator_stub: Stub) -> None:
    """The replies keep the order of the requests, big and small, and a fault ends the
    stream after the replies before it."""
    rng = np.random.default_rng(11)
    big = [
        packed_request(pb.GUTS_3, np.frombuffer(random_hands(n, 3, rng), np.uint8).reshape(-1, 3))
        for n in (100_000, 60_000, 100_000)
    ]
    small = packed_request(
        pb.GUTS_3, np.frombuffer(random_hands(5, 3, rng), np.uint8).reshape(-1, 3)
    )
    order = [big[0], small, big[1], big[2], small, big[0]]
    expected = [evaluator_stub.Evaluate(request) for request in order]
    assert list(evaluator_stub.EvaluateStream(iter(order))) == expected
    bad = pb.EvaluateRequest(game=pb.GUTS_3, packed_hands=bytes([1, 1, 2]), packed_reply=True)
    replies: list[pb.EvaluateResponse] = []
    stream = evaluator_stub.EvaluateStream(iter([big[0], big[1], bad, big[2]]))
    with pytest.raises(grpc.RpcError) as caught:
        replies.extend(stream)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert caught.value.details().startswith("message 2: packed_hands")
    assert replies == [expected[0], evaluator_stub.Evaluate(big[1])]


def test_the_load_tools_bulk_switch_sends_100000_hands_on_one_stream(
    evaluator_address: str, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["--target", evaluator_address, "--bulk", "--game", "paiute", "--calls", "3", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert (report["requests"], report["errors"], report["hands"]) == (3, 0, 300_000)


@pytest.mark.parametrize(("game", "size"), [(pb.GUTS_2, 2), (pb.GUTS_3, 3)])
def test_the_narrow_packed_reply_of_every_guts_hand(
    evaluator_stub: Stub, game: pb.Game.ValueType, size: int
) -> None:
    """Two-byte strengths and no categories: the strengths the readable reply gives."""
    hands = every_hand(size)
    for start in range(0, len(hands), 50_000):
        block = hands[start : start + 50_000]
        wide = read_packed_reply(evaluator_stub.Evaluate(packed_request(game, block)))
        reply = evaluator_stub.Evaluate(
            packed_request(game, block, strength_bytes=2, categories=False)
        )
        assert reply.packed_categories == b""
        assert len(reply.packed_strengths) == 2 * len(block)
        narrow = read_packed_reply(reply, strength_bytes=2)
        assert narrow.categories is None
        assert narrow.strengths.tolist() == wide.strengths.tolist()


def test_paiute_without_categories_keeps_its_four_byte_strengths_and_leftovers(
    evaluator_stub: Stub,
) -> None:
    hands = np.frombuffer(random_hands(20_000, 6, np.random.default_rng(3), 20), np.uint8)
    hands = hands.reshape(-1, 6)
    full = packed_request(pb.PAIUTE, hands, 7, valuation=pb.BEST_OF_ANY)
    bare = packed_request(pb.PAIUTE, hands, 7, valuation=pb.BEST_OF_ANY, categories=False)
    wide, narrow = evaluator_stub.Evaluate(full), evaluator_stub.Evaluate(bare)
    assert narrow.packed_categories == b""
    assert narrow.packed_strengths == wide.packed_strengths
    assert narrow.leftovers == wide.leftovers != b""


def test_the_load_tools_bulk_switch_asks_for_the_narrow_reply(
    evaluator_address: str, capsys: pytest.CaptureFixture[str]
) -> None:
    main(["--target", evaluator_address, "--bulk", "--calls", "3", "--json"])
    report = json.loads(capsys.readouterr().out)
    assert (report["requests"], report["errors"], report["hands"]) == (3, 0, 300_000)
    requests = build_requests("guts3", 10, 1, False, True, strength_bytes=2, categories=False)
    assert all(r.strength_bytes == 2 and r.omit_categories for r in requests)
    with pytest.raises(SystemExit):
        main(["--target", evaluator_address, "--strength-bytes", "2", "--calls", "1"])
    with pytest.raises(SystemExit):
        main(["--bulk", "--game", "paiute", "--strength-bytes", "2", "--calls", "1"])
