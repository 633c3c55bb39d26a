"""The evaluator over gRPC on loopback: every RPC, every refusal, health and reflection."""

from __future__ import annotations

import itertools
from typing import Any

import grpc
import numpy as np
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from cardroom.evaluator.v1 import evaluator_pb2 as pb
from cardroom.evaluator.v1 import evaluator_pb2_grpc as pb_grpc
from evaluator.cards import card_text, parse_cards
from evaluator.guts import rank_guts2, rank_guts3
from evaluator.paiute import Valuation, rank_paiute
from evaluator.server import EvaluatorServer

Stub = pb_grpc.EvaluatorStub


def refused(call: object, *args: object) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        call(*args)  # type: ignore[operator]
    return caught.value


def assert_invalid(error: grpc.RpcError, *fragments: str) -> None:
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT, error.details()
    for fragment in fragments:
        assert fragment in error.details(), error.details()


def random_packed(count: int, size: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.argpartition(rng.random((count, 52)), size, axis=1)[:, :size].astype(np.uint8)


def test_readable_and_packed_guts3_agree_with_the_core(evaluator_stub: Stub) -> None:
    texts = ["Ah Kh Qh", "5c 3d 2h", "10d Th 9s", "as ad ac"]
    hands = [parse_cards(text) for text in texts]
    readable = evaluator_stub.Evaluate(pb.EvaluateRequest(game=pb.GUTS_3, hands=texts))
    packed = evaluator_stub.Evaluate(
        pb.EvaluateRequest(game=pb.GUTS_3, packed_hands=bytes(itertools.chain(*hands)))
    )
    assert readable == packed
    for index, cards in enumerate(hands):
        value = rank_guts3(cards)
        assert readable.strengths[index] == value.strength
        assert readable.categories[index] == int(value.category)
        assert readable.descriptions[index] == value.description
    assert readable.categories[0] == pb.STRAIGHT_FLUSH
    assert readable.leftovers == b""


@pytest.mark.parametrize(("game", "size"), [(pb.GUTS_2, 2), (pb.GUTS_3, 3)])
def test_big_guts_batch_matches_the_scalar_path(
    evaluator_stub: Stub, game: pb.Game.ValueType, size: int
) -> None:
    hands = random_packed(10_000, size, seed=size)
    reply = evaluator_stub.Evaluate(pb.EvaluateRequest(game=game, packed_hands=hands.tobytes()))
    rank = rank_guts2 if size == 2 else rank_guts3
    expected = [rank(row) for row in hands.tolist()]
    assert list(reply.strengths) == [value.strength for value in expected]
    assert list(reply.categories) == [int(value.category) for value in expected]
    assert list(reply.descriptions) == [value.description for value in expected]


@pytest.mark.parametrize("valuation", [None, *Valuation])
@pytest.mark.parametrize("size", [5, 6])
def test_paiute_batch_matches_the_scalar_path(
    evaluator_stub: Stub, size: int, valuation: Valuation | None
) -> None:
    hands = random_packed(3000, size, seed=10 + size)
    # few ranks make combinations common: fold every card onto ranks 8..10
    hands = (hands % 12 + 24).astype(np.uint8)
    hands = np.array([row for row in hands if len(set(row)) == size], dtype=np.uint8)
    combinations_seen = 0
    for wild in (2, 9, 14):
        # the turned-up card of the wild rank is out of play: no hand holds all four
        live = hands[(hands // 4 + 2 == wild).sum(axis=1) <= 3]
        reply = evaluator_stub.Evaluate(
            pb.EvaluateRequest(
                game=pb.PAIUTE,
                wild_rank=wild,
                cards_per_hand=size,
                packed_hands=live.tobytes(),
                paiute_valuation=int(valuation or 0),  # type: ignore[arg-type]
            )
        )
        # unset, six cards are valued as the rules value them
        rule = valuation or Valuation.SIX_CARD_COMBINATIONS
        expected = [rank_paiute(row, wild, rule) for row in live.tolist()]
        assert list(reply.strengths) == [value.strength for value in expected]
        assert list(reply.descriptions) == [value.description for value in expected]
        assert list(reply.leftovers) == [
            255 if value.leftover is None else value.leftover for value in expected
        ]
        combinations_seen += sum(1 for value in expected if value.strength)
    assert combinations_seen


def test_a_paiute_hand_with_all_four_wild_cards_is_refused(evaluator_stub: Stub) -> None:
    def refused(**request: Any) -> str:
        with pytest.raises(grpc.RpcError) as caught:
            evaluator_stub.Evaluate(pb.EvaluateRequest(game=pb.PAIUTE, wild_rank=7, **request))
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        return str(caught.value.details())

    four = "7c 7d 7h 7s Ah 2c"
    assert refused(hands=["Ah Kh Qh Jh Th", four]) == (
        "hands[1]: holds all four sevens, the wild rank; the turned-up card is out of play,"
        " so at most 3 are live"
    )
    packed = bytes(parse_cards(four))
    assert refused(packed_hands=packed, cards_per_hand=6).startswith("packed_hands: hand 0: ")
    fine = bytes(parse_cards("7c 7d 7h Ks Kh 2c"))
    batch = fine * 40 + packed + fine  # large enough for the batch path
    assert refused(packed_hands=batch, cards_per_hand=6).startswith("packed_hands: hand 40: ")
    three = evaluator_stub.Evaluate(
        pb.EvaluateRequest(game=pb.PAIUTE, wild_rank=7, packed_hands=fine, cards_per_hand=6)
    )
    assert three.categories[0] == pb.FOUR_TWO
    # across a showdown's hands too: one of the four is the turned-up card
    with pytest.raises(grpc.RpcError) as caught:
        evaluator_stub.Showdown(
            pb.ShowdownRequest(
                game=pb.PAIUTE,
                wild_rank=7,
                hands=[
                    pb.SeatHand(seat=1, cards="7c 7d 7h Ks Ah"),
                    pb.SeatHand(seat=2, cards="7s 2c 3c 4c 5c"),
                ],
            )
        )
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert caught.value.details().startswith("hands[1]: the hands together hold all four sevens")


def test_paiute_readable_hands_of_five_and_six(evaluator_stub: Stub) -> None:
    texts = ["Ks Kh Kd Kc 7h", "Ah Kh Qh Jh 10h 2c", "2c 3d 4h 5s 9c"]
    request = pb.EvaluateRequest(
        game=pb.PAIUTE, wild_rank=7, hands=texts, paiute_valuation=pb.BEST_OF_ANY
    )
    reply = evaluator_stub.Evaluate(request)
    expected = [rank_paiute(parse_cards(text), 7, Valuation.BEST_OF_ANY) for text in texts]
    assert list(reply.strengths) == [value.strength for value in expected]
    assert reply.categories[0] == pb.FIVE_OF_A_KIND
    assert reply.categories[1] == pb.ROYAL_FLUSH
    assert reply.categories[2] == pb.NO_COMBINATION
    assert reply.strengths[2] == 0
    assert reply.leftovers[1] == parse_cards("2c")[0]
    # shown as six, the royal flush's six cards make no six-card combination
    for valuation in (pb.PAIUTE_VALUATION_UNSPECIFIED, pb.SIX_CARD_COMBINATIONS):
        request.paiute_valuation = valuation
        reply = evaluator_stub.Evaluate(request)
        assert list(reply.categories) == [pb.FIVE_OF_A_KIND, pb.NO_COMBINATION, pb.NO_COMBINATION]
        assert reply.leftovers == bytes([255, 255, 255])


# A seat took the last card (7s, 9h, 9d) from the discard pile and shows all six cards:
# valued as a six-card combination, never as the five-card one that leaves that card out.
PILE_CALLS = [
    ("2c 6d 6h 6s 2s 7s", 2, pb.FOUR_TWO, "Four sixes and two sevens", pb.FIVE_OF_A_KIND, "7s"),
    (
        "3s 2s Qh Qd Qs 9h",
        12,
        pb.TWO_TWO_TWO,
        "Three pairs, nines, threes and twos",
        pb.STRAIGHT_FLUSH,
        "9h",
    ),
    (
        "9h 9d Th Jh 2c 2s",
        2,
        pb.TWO_TWO_TWO,
        "Three pairs, jacks, tens and nines",
        pb.STRAIGHT_FLUSH,
        "9d",
    ),
]


@pytest.mark.parametrize(("text", "wild", "category", "description", "best", "left"), PILE_CALLS)
def test_six_cards_are_valued_as_a_six_card_combination(
    evaluator_stub: Stub,
    text: str,
    wild: int,
    category: pb.Category.ValueType,
    description: str,
    best: pb.Category.ValueType,
    left: str,
) -> None:
    packed = bytes(parse_cards(text))
    for valuation in (pb.PAIUTE_VALUATION_UNSPECIFIED, pb.SIX_CARD_COMBINATIONS):
        # readable, a few packed (scalar path) and many packed (numpy path): one answer
        for hands in ({"hands": [text]}, {"packed_hands": packed}, {"packed_hands": packed * 20}):
            reply = evaluator_stub.Evaluate(
                pb.EvaluateRequest(
                    game=pb.PAIUTE,
                    wild_rank=wild,
                    cards_per_hand=6,
                    paiute_valuation=valuation,
                    **hands,
                )
            )
            assert set(reply.categories) == {category}
            assert set(reply.descriptions) == {description}
            assert set(reply.leftovers) == {255}
        showdown = evaluator_stub.Showdown(
            pb.ShowdownRequest(
                game=pb.PAIUTE,
                wild_rank=wild,
                paiute_valuation=valuation,
                hands=[seat(1, text), seat(2, "Ks Kh Kd 4c 4d 4h")],
            )
        )
        assert showdown.hands[0].category == category
        assert showdown.hands[0].description == description
        assert not showdown.hands[0].HasField("leftover")
    anything = evaluator_stub.Evaluate(
        pb.EvaluateRequest(
            game=pb.PAIUTE, wild_rank=wild, hands=[text], paiute_valuation=pb.BEST_OF_ANY
        )
    )
    assert list(anything.categories) == [best]
    assert list(anything.leftovers) == list(parse_cards(left))


def test_omit_descriptions(evaluator_stub: Stub) -> None:
    reply = evaluator_stub.Evaluate(
        pb.EvaluateRequest(game=pb.GUTS_3, hands=["Ah Kh Qh"], omit_descriptions=True)
    )
    assert list(reply.descriptions) == []
    assert len(reply.strengths) == 1


@pytest.mark.parametrize(
    ("request_", "fragments"),
    [
        (pb.EvaluateRequest(hands=["Ah Kh Qh"]), ["game"]),
        (pb.EvaluateRequest(game=pb.GUTS_3, hands=["Ah Kh Zz"]), ["hands[0]", "Zz"]),
        (pb.EvaluateRequest(game=pb.GUTS_3, hands=["Ah Kh Qh", "Ah Ah 2c"]), ["hands[1]", "Ah"]),
        (pb.EvaluateRequest(game=pb.GUTS_3, hands=["Ah Kh"]), ["hands[0]", "2 cards"]),
        (
            pb.EvaluateRequest(game=pb.GUTS_3, packed_hands=bytes([1, 2, 60])),
            ["packed_hands", "60"],
        ),
        (
            pb.EvaluateRequest(game=pb.GUTS_3, packed_hands=bytes(range(4))),
            ["packed_hands", "4 bytes"],
        ),
        (
            pb.EvaluateRequest(game=pb.GUTS_3, packed_hands=bytes(30) + bytes([0, 1, 1])),
            ["packed_hands", "hand"],
        ),
        (pb.EvaluateRequest(game=pb.PAIUTE, hands=["2c 3c 4c 5c 6c"]), ["wild_rank", "required"]),
        (
            pb.EvaluateRequest(game=pb.PAIUTE, wild_rank=15, hands=["2c 3c 4c 5c 6c"]),
            ["wild_rank", "15"],
        ),
        (
            pb.EvaluateRequest(game=pb.PAIUTE, wild_rank=1, hands=["2c 3c 4c 5c 6c"]),
            ["wild_rank", "1"],
        ),
        (pb.EvaluateRequest(game=pb.GUTS_3, wild_rank=5, hands=["Ah Kh Qh"]), ["wild_rank"]),
        (
            pb.EvaluateRequest(
                game=pb.PAIUTE,
                wild_rank=5,
                hands=["2c 3c 4c 5c 6c"],
                paiute_valuation=7,  # type: ignore[arg-type]
            ),
            ["paiute_valuation: 7 is not a PaiuteValuation (SIX_CARD_COMBINATIONS or BEST_OF_ANY)"],
        ),
        (
            pb.EvaluateRequest(
                game=pb.GUTS_2, hands=["Ah Kh"], paiute_valuation=pb.SIX_CARD_COMBINATIONS
            ),
            ["paiute_valuation: only PAIUTE has six-card hands to value"],
        ),
        (
            pb.EvaluateRequest(game=pb.PAIUTE, wild_rank=5, hands=["2c 3c 4c 5c"]),
            ["hands[0]", "4 cards"],
        ),
        (
            pb.EvaluateRequest(game=pb.PAIUTE, wild_rank=5, packed_hands=bytes(range(5))),
            ["cards_per_hand"],
        ),
        (
            pb.EvaluateRequest(game=pb.GUTS_3, hands=["Ah Kh Qh"], packed_hands=bytes([1, 2, 3])),
            ["either"],
        ),
        (
            pb.EvaluateRequest(
                game=pb.PAIUTE, wild_rank=5, cards_per_hand=9, hands=["5c 5d 5h Kc Kd 2s"]
            ),
            ["cards_per_hand: 9, expected 5 or 6"],
        ),
        (
            pb.EvaluateRequest(
                game=pb.PAIUTE, wild_rank=5, cards_per_hand=5, hands=["5c 5d 5h Kc Kd 2s"]
            ),
            ["hands[0]: 6 cards, cards_per_hand says 5"],
        ),
        (pb.EvaluateRequest(game=pb.GUTS_2, cards_per_hand=3), ["cards_per_hand: 3, expected 2"]),
        (pb.EvaluateRequest(game=pb.GUTS_2, hands=["Ah Kh"] * 10_001), ["hands", "10000"]),
        (
            pb.EvaluateRequest(game=pb.GUTS_2, packed_hands=bytes(range(2)) * 10_001),
            ["packed_hands", "10000"],
        ),
    ],
)
def test_bad_requests_name_the_field_and_the_fault(
    evaluator_stub: Stub, request_: pb.EvaluateRequest, fragments: list[str]
) -> None:
    assert_invalid(refused(evaluator_stub.Evaluate, request_), *fragments)


def test_a_packed_duplicate_names_the_hand(evaluator_stub: Stub) -> None:
    hands = bytes([0, 4, 8] * 5 + [9, 9, 10])
    error = refused(evaluator_stub.Evaluate, pb.EvaluateRequest(game=pb.GUTS_3, packed_hands=hands))
    assert_invalid(error, "packed_hands", "hand 5", "duplicate", card_text(9))


def test_oversized_message_is_refused(evaluator_stub: Stub) -> None:
    request = pb.EvaluateRequest(game=pb.GUTS_3, packed_hands=bytes(2 * 1024 * 1024))
    error = refused(evaluator_stub.Evaluate, request)
    assert error.code() == grpc.StatusCode.RESOURCE_EXHAUSTED


def test_stream_answers_each_message_in_order(evaluator_stub: Stub) -> None:
    requests = [
        pb.EvaluateRequest(game=pb.GUTS_3, packed_hands=random_packed(n, 3, n).tobytes())
        for n in (1, 500, 2000, 3)
    ]
    replies = list(evaluator_stub.EvaluateStream(iter(requests)))
    assert [len(reply.strengths) for reply in replies] == [1, 500, 2000, 3]
    for request, reply in zip(requests, replies, strict=True):
        assert reply == evaluator_stub.Evaluate(request)


def test_stream_fault_names_the_message(evaluator_stub: Stub) -> None:
    requests = [pb.EvaluateRequest(game=pb.GUTS_3, hands=["Ah Kh Qh"])] * 2 + [
        pb.EvaluateRequest(game=pb.GUTS_3, hands=["Ah Kh Kh"])
    ]
    with pytest.raises(grpc.RpcError) as caught:
        list(evaluator_stub.EvaluateStream(iter(requests)))
    assert_invalid(caught.value, "message 2", "hands[0]", "duplicate")


def seat(number: int, cards: str) -> pb.SeatHand:
    return pb.SeatHand(seat=number, cards=cards)


def test_showdown_ranks_each_seat_and_describes_it(evaluator_stub: Stub) -> None:
    reply = evaluator_stub.Showdown(
        pb.ShowdownRequest(
            game=pb.GUTS_3,
            hands=[
                seat(3, "Ah Kh Qh"),
                seat(5, "2c 3d 5h"),
                seat(7, "As Ks Qs"),
                seat(9, "2d 3c 5s"),
            ],
        )
    )
    assert [hand.seat for hand in reply.hands] == [3, 5, 7, 9]
    strengths = [hand.strength for hand in reply.hands]
    # the two straight flushes tie at the top, the two 5-high hands at the bottom
    assert strengths[0] == strengths[2] > strengths[1] == strengths[3]
    assert [hand.category for hand in reply.hands] == [pb.STRAIGHT_FLUSH, pb.HIGH_CARD] * 2
    assert reply.hands[0].description == rank_guts3(parse_cards("Ah Kh Qh")).description
    assert not reply.HasField("ghost")


def test_showdown_ranks_the_ghost_beside_the_seats(evaluator_stub: Stub) -> None:
    reply = evaluator_stub.Showdown(
        pb.ShowdownRequest(
            game=pb.GUTS_2,
            hands=[seat(1, "Ah Kd"), seat(2, "Qc Qd"), seat(4, "3c 2d")],
            ghost=pb.SeatHand(cards="Qh Qs"),
        )
    )
    ace, queens, three = (hand.strength for hand in reply.hands)
    assert ace < queens == reply.ghost.strength
    assert three < ace
    assert reply.ghost.category == pb.PAIR
    assert reply.ghost.description == reply.hands[1].description
    # ranks alone: who wins and who pays is the gateway's rules' to decide
    assert [field.name for field, _ in reply.ListFields()] == ["hands", "ghost"]


def test_paiute_showdown_reports_leftovers(evaluator_stub: Stub) -> None:
    request = pb.ShowdownRequest(
        game=pb.PAIUTE,
        wild_rank=2,
        hands=[seat(1, "9h 9d 9s 9c 2d 3c"), seat(2, "Ah Kh Qh Jh 10h")],
        paiute_valuation=pb.BEST_OF_ANY,
    )
    reply = evaluator_stub.Showdown(request)
    assert reply.hands[0].strength > reply.hands[1].strength
    assert reply.hands[0].category == pb.FIVE_OF_A_KIND
    assert reply.hands[0].leftover == parse_cards("3c")[0]
    assert not reply.hands[1].HasField("leftover")
    # laid down as six, the nines are four + two, below the five-card royal flush
    request.ClearField("paiute_valuation")
    reply = evaluator_stub.Showdown(request)
    assert reply.hands[0].strength < reply.hands[1].strength
    assert reply.hands[0].category == pb.FOUR_TWO
    assert not reply.hands[0].HasField("leftover")


@pytest.mark.parametrize(
    ("request_", "fragments"),
    [
        (pb.ShowdownRequest(game=pb.GUTS_3), ["hands"]),
        (
            pb.ShowdownRequest(game=pb.GUTS_3, hands=[seat(1, "Ah Kh Qh"), seat(1, "2c 3c 4c")]),
            ["hands[1]", "seat 1"],
        ),
        (
            pb.ShowdownRequest(game=pb.GUTS_3, hands=[seat(1, "Ah Kh Qh"), seat(2, "Ah 3c 4c")]),
            ["hands[1]", "Ah"],
        ),
        (
            pb.ShowdownRequest(
                game=pb.GUTS_3, hands=[seat(1, "Ah Kh Qh")], ghost=pb.SeatHand(cards="Qh 2c 3c")
            ),
            ["ghost", "Qh"],
        ),
        (
            pb.ShowdownRequest(game=pb.GUTS_3, hands=[seat(i, "") for i in range(11)]),
            ["hands", "10"],
        ),
        (pb.ShowdownRequest(game=pb.PAIUTE, hands=[seat(1, "2c 3c 4c 5c 6c")]), ["wild_rank"]),
        (
            pb.ShowdownRequest(
                game=pb.PAIUTE,
                wild_rank=2,
                hands=[seat(1, "2c 3c 4c 5c 6c")],
                paiute_valuation=3,  # type: ignore[arg-type]
            ),
            ["paiute_valuation: 3 is not a PaiuteValuation"],
        ),
        (
            pb.ShowdownRequest(
                game=pb.GUTS_3, hands=[seat(1, "Ah Kh Qh")], paiute_valuation=pb.BEST_OF_ANY
            ),
            ["paiute_valuation: only PAIUTE"],
        ),
    ],
)
def test_bad_showdowns(
    evaluator_stub: Stub, request_: pb.ShowdownRequest, fragments: list[str]
) -> None:
    assert_invalid(refused(evaluator_stub.Showdown, request_), *fragments)


def test_exact_odds_against_one_opponent(evaluator_stub: Stub) -> None:
    reply = evaluator_stub.Odds(pb.OddsRequest(game=pb.GUTS_3, cards="Ac Kd Qh", opponents=1))
    assert reply.exact
    assert (reply.wins, reply.ties, reply.losses, reply.samples) == (18_314, 26, 84, 18_424)
    assert reply.win == pytest.approx(18_314 / 18_424)
    two = evaluator_stub.Odds(pb.OddsRequest(game=pb.GUTS_2, cards="As Kd", opponents=1))
    assert (two.wins, two.ties, two.samples) == (1_144, 9, 1_225)


def test_monte_carlo_odds_state_the_sample_and_repeat_with_a_seed(evaluator_stub: Stub) -> None:
    request = pb.OddsRequest(game=pb.GUTS_3, cards="Ac Kd Qh", opponents=4, samples=20_000, seed=42)
    first = evaluator_stub.Odds(request)
    assert not first.exact
    assert first.samples == 20_000
    assert first.wins + first.ties + first.losses == 20_000
    assert first == evaluator_stub.Odds(request)
    # against four opponents the hand wins less often than against one
    assert first.win < 18_314 / 18_424
    assert first.win == pytest.approx((18_314 / 18_424) ** 4, abs=0.05)


@pytest.mark.parametrize(
    ("request_", "fragments"),
    [
        (pb.OddsRequest(game=pb.GUTS_3, cards="Ac Kd Qh", opponents=0), ["opponents"]),
        (pb.OddsRequest(game=pb.GUTS_3, cards="Ac Kd Qh", opponents=10), ["opponents"]),
        (pb.OddsRequest(game=pb.GUTS_3, cards="Ac Kd", opponents=1), ["cards"]),
        (
            pb.OddsRequest(game=pb.GUTS_3, packed_cards=bytes([5, 5, 6]), opponents=2),
            ["packed_cards: duplicate card"],
        ),
        (
            pb.OddsRequest(game=pb.GUTS_3, packed_cards=bytes([0, 1, 99]), opponents=2),
            ["packed_cards: unknown card index 99"],
        ),
        (pb.OddsRequest(game=pb.PAIUTE, cards="Ac Kd Qh", opponents=1), ["game"]),
        (
            pb.OddsRequest(game=pb.GUTS_3, cards="Ac Kd Qh", opponents=2, samples=2_000_000),
            ["samples"],
        ),
    ],
)
def test_bad_odds(evaluator_stub: Stub, request_: pb.OddsRequest, fragments: list[str]) -> None:
    assert_invalid(refused(evaluator_stub.Odds, request_), *fragments)


def test_health_and_reflection(evaluator_address: str) -> None:
    with grpc.insecure_channel(evaluator_address) as channel:
        health = health_pb2_grpc.HealthStub(channel)
        for service in ("", "cardroom.evaluator.v1.Evaluator"):
            status = health.Check(health_pb2.HealthCheckRequest(service=service)).status
            assert status == health_pb2.HealthCheckResponse.SERVING
        reflection = reflection_pb2_grpc.ServerReflectionStub(channel)
        replies = reflection.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")])
        )
        names = {
            service.name for reply in replies for service in reply.list_services_response.service
        }
        assert "cardroom.evaluator.v1.Evaluator" in names
        assert "grpc.health.v1.Health" in names


def test_metrics_count_calls_hands_and_faults(
    evaluator_server: EvaluatorServer, evaluator_stub: Stub
) -> None:
    registry = evaluator_server.telemetry.registry

    def sample(name: str, labels: dict[str, str]) -> float:
        return registry.get_sample_value(name, labels) or 0.0

    hands_before = sample("cardroom_evaluator_hands_total", {"game": "guts2"})
    calls_before = sample("cardroom_evaluator_calls_total", {"method": "Evaluate", "outcome": "ok"})
    faults_before = sample(
        "cardroom_evaluator_calls_total", {"method": "Evaluate", "outcome": "invalid_argument"}
    )
    evaluator_stub.Evaluate(pb.EvaluateRequest(game=pb.GUTS_2, hands=["Ah Kd", "2c 2d"]))
    refused(evaluator_stub.Evaluate, pb.EvaluateRequest(game=pb.GUTS_2, hands=["Ah"]))
    assert sample("cardroom_evaluator_hands_total", {"game": "guts2"}) == hands_before + 2
    assert (
        sample("cardroom_evaluator_calls_total", {"method": "Evaluate", "outcome": "ok"})
        == calls_before + 1
    )
    assert (
        sample(
            "cardroom_evaluator_calls_total", {"method": "Evaluate", "outcome": "invalid_argument"}
        )
        == faults_before + 1
    )
    assert sample("cardroom_evaluator_latency_seconds_count", {"method": "Evaluate"}) > 0


def test_ping(evaluator_stub: Stub) -> None:
    assert evaluator_stub.Ping(pb.PingRequest()) == pb.PingResponse()


@pytest.mark.parametrize(
    ("method", "payload"),
    [
        *((method, b"\xff\xff\xff\xff") for method in ("Evaluate", "Showdown", "Odds", "Ping")),
        ("EvaluateStream", b"\xff\xff\xff\xff"),
        ("Evaluate", bytes.fromhex("08022a0341ff68")),  # hands ["A\xffh"]: not UTF-8
        ("EvaluateStream", bytes.fromhex("08022a0341ff68")),
    ],
)
def test_bytes_that_are_no_message_are_an_invalid_argument(
    evaluator_server: EvaluatorServer, evaluator_address: str, method: str, payload: bytes
) -> None:
    """Bytes a client library would never send (a hand-made or a broken client)."""
    registry = evaluator_server.telemetry.registry
    labels = {"method": method, "outcome": "invalid_argument"}
    before = registry.get_sample_value("cardroom_evaluator_calls_total", labels) or 0.0
    path = f"/cardroom.evaluator.v1.Evaluator/{method}"
    with grpc.insecure_channel(evaluator_address) as channel:
        if method == "EvaluateStream":
            call = channel.stream_stream(path)
            error = refused(lambda: list(call(iter([payload]), timeout=10)))
        else:
            error = refused(channel.unary_unary(path), payload, 10)
    assert_invalid(error, "request: the bytes are not a cardroom.evaluator.v1.")
    after = registry.get_sample_value("cardroom_evaluator_calls_total", labels) or 0.0
    assert after == (before if method == "Ping" else before + 1)


@pytest.mark.parametrize(
    "request_",
    [
        pb.EvaluateRequest(game=pb.GUTS_2),
        pb.EvaluateRequest(game=pb.GUTS_3),
        pb.EvaluateRequest(game=pb.PAIUTE, wild_rank=5),
        pb.EvaluateRequest(game=pb.PAIUTE, wild_rank=5, cards_per_hand=6),
    ],
)
def test_a_request_without_hands_gets_an_empty_reply(
    evaluator_stub: Stub, request_: pb.EvaluateRequest
) -> None:
    reply = evaluator_stub.Evaluate(request_)
    assert list(reply.strengths) == []
    assert list(reply.descriptions) == []
