"""The gRPC servicer: proto messages in, the pure ranking core, proto messages out.

Every fault in a request is a `RequestError` (a ValueError naming the field and the
hand) and leaves as INVALID_ARGUMENT. Evaluate and EvaluateStream take and give bytes
(see `evaluator.server`): a request for one packed Guts hand is answered from its bytes,
unparsed, and every reply is serialised by `evaluator.codec` from whole arrays.
"""

from __future__ import annotations

import asyncio
import functools
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc
import grpc.aio
import numpy as np
import numpy.typing as npt
from google.protobuf.message import DecodeError

from cardroom.evaluator.v1 import evaluator_pb2 as pb
from evaluator.batch import (
    category_table,
    guts_strength_list,
    rank_guts_batch,
    rank_paiute_batch,
)
from evaluator.cards import (
    CardError,
    HandError,
    card_text,
    check_hand,
    parse_cards,
    rank_of,
)
from evaluator.codec import ResponseEncoder
from evaluator.guts import describe_guts, rank_guts2, rank_guts3
from evaluator.hands import HandValue
from evaluator.odds import DEFAULT_SAMPLES, MAX_OPPONENTS, MAX_SAMPLES, guts_odds
from evaluator.paiute import (
    LIVE_WILD_CARDS,
    Valuation,
    describe_paiute,
    rank_paiute,
    too_many_wild_cards,
)
from evaluator.telemetry import Telemetry

MAX_HANDS_PER_CALL = 10_000
# packed hands asking for a packed reply: its 8 bytes a hand at most stay under 1 MiB
MAX_PACKED_REPLY_HANDS = 100_000
MAX_SHOWDOWN_HANDS = 10
MAX_BATCH_SHOWDOWNS = 64  # showdowns in one ShowdownBatch call
MAX_MESSAGE_BYTES = 1 << 20
NO_LEFTOVER = 255
# below this many hands the per-hand scalar path beats numpy's fixed cost per call
_SCALAR_LIMIT = 8

T = TypeVar("T")
U8 = npt.NDArray[np.uint8]
# strengths: uint32, or uint16 for Guts (every Guts strength is below 2**15)
U32 = npt.NDArray[np.uint32] | npt.NDArray[np.uint16]


class RequestError(ValueError):
    """A request the service refuses: the message names the field and the fault."""


@dataclass(frozen=True)
class Undecodable:
    """What a method receives for bytes that are not a message of its request type."""

    fault: str


def decoder(message_type: Any) -> Callable[[bytes], Any]:
    """The request deserializer of a method: the message, or `Undecodable`.

    A deserializer that raises makes gRPC answer UNKNOWN and log a traceback for every
    such request; the method refuses an `Undecodable` as INVALID_ARGUMENT instead.
    """
    name = message_type.DESCRIPTOR.full_name
    parse = message_type.FromString

    def decode(data: bytes) -> Any:
        try:
            return parse(data)
        except DecodeError as error:
            return Undecodable(f"request: the bytes are not a {name} message ({error})")

    return decode


def _decoded(request: T) -> T:
    if isinstance(request, Undecodable):
        raise RequestError(request.fault)
    return request


_decode_evaluate = decoder(pb.EvaluateRequest)


@dataclass(frozen=True)
class GameRules:
    """What the servicer needs to know of one game."""

    key: str
    sizes: tuple[int, ...]
    encoder: ResponseEncoder


def _categories(game: str, size: int) -> Callable[[U32], U8]:
    """The categories of strengths the rankers made, by one lookup (a tenth of the cost
    of `strength_categories`, which also checks that every strength is one); `take`
    costs a quarter less than indexing."""
    table = category_table(game, size)
    return table.take


GAMES: dict[int, GameRules] = {
    pb.GUTS_2: GameRules(
        "guts2",
        (2,),
        ResponseEncoder(lambda s: describe_guts(2, s), _categories("guts2", 1 << 15), 1 << 15),
    ),
    pb.GUTS_3: GameRules(
        "guts3",
        (3,),
        ResponseEncoder(lambda s: describe_guts(3, s), _categories("guts3", 1 << 15), 1 << 15),
    ),
    pb.PAIUTE: GameRules(
        "paiute", (5, 6), ResponseEncoder(describe_paiute, _categories("paiute", 7 << 16), 7 << 16)
    ),
}


def _game(request: Any) -> GameRules:
    rules = GAMES.get(request.game)
    if rules is None:
        raise RequestError("game: choose GUTS_2, GUTS_3 or PAIUTE")
    return rules


def _wild_rank(request: Any, rules: GameRules) -> int | None:
    has_wild = request.HasField("wild_rank")
    if rules.key != "paiute":
        if has_wild:
            raise RequestError("wild_rank: only PAIUTE has a wild rank")
        return None
    if not has_wild:
        raise RequestError("wild_rank: required for PAIUTE (2..14)")
    if not 2 <= request.wild_rank <= 14:
        raise RequestError(f"wild_rank: {request.wild_rank} is out of range 2..14")
    return int(request.wild_rank)


# The wire's PaiuteValuation numbers; unset is the rule's valuation.
_VALUATIONS: dict[int, Valuation] = {
    pb.PAIUTE_VALUATION_UNSPECIFIED: Valuation.SIX_CARD_COMBINATIONS,
    pb.SIX_CARD_COMBINATIONS: Valuation.SIX_CARD_COMBINATIONS,
    pb.BEST_OF_ANY: Valuation.BEST_OF_ANY,
}


def _valuation(request: Any, rules: GameRules) -> Valuation:
    """The request's valuation of six-card Paiute hands (the rule's when unset)."""
    number = int(request.paiute_valuation)
    if rules.key != "paiute":
        if number:
            raise RequestError("paiute_valuation: only PAIUTE has six-card hands to value")
        return Valuation.SIX_CARD_COMBINATIONS
    valuation = _VALUATIONS.get(number)
    if valuation is None:
        # proto3 enums are open: an unknown number arrives as it was sent
        raise RequestError(
            f"paiute_valuation: {number} is not a PaiuteValuation"
            " (SIX_CARD_COMBINATIONS or BEST_OF_ANY)"
        )
    return valuation


def _check_cards_per_hand(size: int, given: int, rules: GameRules) -> None:
    """Refuse `size` (what cards_per_hand, sent as `given`, makes it) unless the game has it."""
    if size not in rules.sizes:
        wanted = " or ".join(str(s) for s in rules.sizes)
        raise RequestError(f"cards_per_hand: {given}, expected {wanted}")


def _packed_size(request: pb.EvaluateRequest, rules: GameRules, data: bytes) -> tuple[int, int]:
    """Cards per packed hand and the number of hands in `data` (the request's
    packed_hands), checked against the limits."""
    size = request.cards_per_hand or (rules.sizes[0] if len(rules.sizes) == 1 else 0)
    _check_cards_per_hand(size, request.cards_per_hand, rules)
    length = len(data)
    if length % size:
        raise RequestError(
            f"packed_hands: {length} bytes is not a whole number of {size}-card hands"
        )
    count = length // size
    limit = MAX_PACKED_REPLY_HANDS if request.packed_reply else MAX_HANDS_PER_CALL
    if count > limit:
        reply = "" if request.packed_reply else f" ({MAX_PACKED_REPLY_HANDS} with packed_reply)"
        raise RequestError(f"packed_hands: {count} hands, at most {limit} per call{reply}")
    return size, count


def _packed_hands(request: pb.EvaluateRequest, rules: GameRules, data: bytes) -> U8:
    """The packed hands as an (N, size) array, a view of `data`; the batch rankers
    validate them."""
    size, count = _packed_size(request, rules, data)
    return np.frombuffer(data, dtype=np.uint8).reshape(count, size)


def _few_packed_hands(
    request: pb.EvaluateRequest, rules: GameRules, data: bytes
) -> list[tuple[int, ...]]:
    """A handful of packed hands, decoded without numpy (cheaper for a single hand)."""
    size, count = _packed_size(request, rules, data)
    hands = [tuple(data[i * size : (i + 1) * size]) for i in range(count)]
    for index, cards in enumerate(hands):
        try:
            check_hand(cards, rules.sizes)
        except HandError as fault:
            raise RequestError(f"packed_hands: hand {index}: {fault}") from None
    return hands


def _readable_hands(
    texts: Sequence[str], rules: GameRules, field: str, size: int = 0
) -> list[tuple[int, ...]]:
    """Parse and check readable hands; with `size` (the request's cards_per_hand), each
    must hold that many cards."""
    if len(texts) > MAX_HANDS_PER_CALL:
        raise RequestError(f"{field}: {len(texts)} hands, at most {MAX_HANDS_PER_CALL} per call")
    hands = []
    for index, text in enumerate(texts):
        try:
            cards = parse_cards(text)
            check_hand(cards, rules.sizes)
        except (CardError, HandError) as fault:
            raise RequestError(f"{field}[{index}]: {fault}") from None
        if size and len(cards) != size:
            raise RequestError(f"{field}[{index}]: {len(cards)} cards, cards_per_hand says {size}")
        hands.append(cards)
    return hands


def _check_live_wilds(
    hands: Sequence[Sequence[int]], wild: int | None, name: Callable[[int], str]
) -> None:
    """Refuse a Paiute hand holding every card of the wild rank; `name(i)` names hand i."""
    if wild is None:
        return
    for index, cards in enumerate(hands):
        if sum(1 for card in cards if rank_of(card) == wild) > LIVE_WILD_CARDS:
            raise RequestError(f"{name(index)}: {too_many_wild_cards(wild)}")


def _rank_one(
    rules: GameRules, cards: Sequence[int], wild: int | None, valuation: Valuation
) -> tuple[HandValue, int]:
    """Scalar ranking: the value and the leftover card (NO_LEFTOVER when none)."""
    if rules.key == "guts2":
        return rank_guts2(cards), NO_LEFTOVER
    if rules.key == "guts3":
        return rank_guts3(cards), NO_LEFTOVER
    assert wild is not None
    value = rank_paiute(cards, wild, valuation)
    leftover = NO_LEFTOVER if value.leftover is None else value.leftover
    return HandValue(value.strength, value.category, value.description), leftover


def _rank_array(
    rules: GameRules, hands: U8, wild: int | None, valuation: Valuation
) -> tuple[U32, U8 | None]:
    if rules.key == "paiute":
        assert wild is not None
        strengths, leftovers = rank_paiute_batch(hands, wild, valuation, LIVE_WILD_CARDS)
        return strengths, leftovers
    # in uint16, which a 2-byte packed reply sends as it is (the encoders widen as needed)
    return rank_guts_batch(hands, hands.shape[1], np.uint16), None


def _rank_uniform(
    rules: GameRules, hands: Sequence[tuple[int, ...]], wild: int | None, valuation: Valuation
) -> tuple[U32, U8 | None]:
    """Rank hands that may differ in size (Paiute's 5 and 6), keeping their order."""
    strengths = np.zeros(len(hands), dtype=np.uint32)
    leftovers = np.full(len(hands), NO_LEFTOVER, dtype=np.uint8)
    for size in rules.sizes:
        rows = [i for i, hand in enumerate(hands) if len(hand) == size]
        if not rows:
            continue
        block = np.array([hands[i] for i in rows], dtype=np.uint8)
        ranked, lefts = _rank_array(rules, block, wild, valuation)
        strengths[rows] = ranked
        if lefts is not None:
            leftovers[rows] = lefts
    return strengths, (leftovers if rules.key == "paiute" else None)


def _reply_layout(request: pb.EvaluateRequest, rules: GameRules) -> Callable[..., bytes]:
    """The encoder of the reply the request asks for: readable, or packed with the
    strengths' width and the categories it says."""
    if not request.packed_reply:
        if request.strength_bytes:
            raise RequestError("strength_bytes: only a packed_reply has fixed-width strengths")
        if request.omit_categories:
            raise RequestError("omit_categories: only a packed_reply leaves the categories out")
        return rules.encoder.encode
    width = request.strength_bytes or 4
    if width not in (2, 4):
        raise RequestError(f"strength_bytes: {request.strength_bytes}, expected 2 or 4")
    if width == 2 and rules.key == "paiute":
        raise RequestError("strength_bytes: 2 holds Guts strengths only; Paiute's need 4")
    return functools.partial(
        rules.encoder.encode_packed,
        strength_bytes=width,
        categories=not request.omit_categories,
    )


def evaluate(request: pb.EvaluateRequest, data: bytes | None = None) -> bytes:
    """Rank the hands of one EvaluateRequest; the serialised EvaluateResponse.

    `data` is the request's packed_hands when the caller read them already (protobuf
    copies a bytes field at each read)."""
    rules = _game(request)
    wild = _wild_rank(request, rules)
    valuation = _valuation(request, rules)
    if data is None:
        data = request.packed_hands
    if data and request.hands:
        raise RequestError("packed_hands: send either packed_hands or hands, not both")
    describe = not request.omit_descriptions
    encode = _reply_layout(request, rules)
    if request.cards_per_hand:
        _check_cards_per_hand(request.cards_per_hand, request.cards_per_hand, rules)
    if request.hands:
        cards = _readable_hands(request.hands, rules, "hands", request.cards_per_hand)
        _check_live_wilds(cards, wild, lambda index: f"hands[{index}]")
    elif not data:
        cards = []  # nothing to rank, in either encoding: an empty reply for every game
    elif len(data) <= _SCALAR_LIMIT * rules.sizes[0]:
        cards = _few_packed_hands(request, rules, data)
        _check_live_wilds(cards, wild, lambda index: f"packed_hands: hand {index}")
    else:
        packed = _packed_hands(request, rules, data)
        try:
            strengths, leftovers = _rank_array(rules, packed, wild, valuation)
        except HandError as fault:
            raise RequestError(f"packed_hands: {fault}") from None
        return encode(strengths, leftovers, describe)
    if len(cards) > _SCALAR_LIMIT or request.packed_reply:
        strengths, leftovers = _rank_uniform(rules, cards, wild, valuation)
        return encode(strengths, leftovers, describe)
    return _encode_small(rules, cards, wild, valuation, describe)


_GUTS_SIZES: dict[int, int] = {pb.GUTS_2: 2, pb.GUTS_3: 3}
# A request for one packed Guts hand as protobuf writes it, field by field: `game`
# (tag 0x08, one byte), `packed_hands` (0x1a, its length, the cards), then what may
# follow the cards: `cards_per_hand` (0x20) if set, `omit_descriptions` (0x30) if true.
# Whether the reply describes the hand, by what follows the cards, for each size.
_ONE_HAND_ENDINGS = {
    size: {b"": True, bytes([0x20, size]): True, b"\x30\x01": False,
           bytes([0x20, size, 0x30, 0x01]): False}
    for size in _GUTS_SIZES.values()
}  # fmt: skip


def _one_guts_hand(data: bytes) -> tuple[int, bytes] | None:
    """The game of, and the reply to, a request for one packed Guts hand (the commonest
    small call), read from the request's bytes without parsing them: the hand's strength
    from the lookup table and the reply cached for it. None for any other request (other
    fields, another order, a hand to refuse), which the general path parses and answers.
    """
    if len(data) < 6 or data[0] != 0x08 or data[2] != 0x1A:
        return None
    game, size = data[1], data[3]
    if _GUTS_SIZES.get(game) != size or len(data) < 4 + size:
        return None
    describe = _ONE_HAND_ENDINGS[size].get(data[4 + size :])
    cards = data[4 : 4 + size]
    if describe is None or max(cards) > 51:
        return None
    table = guts_strength_list(size)
    first = cards[0] * 52 + cards[1]
    strength = table[first if size == 2 else first * 52 + cards[2]]
    if not strength:  # a card twice
        return None
    return game, GAMES[game].encoder.encode_one(strength, describe)


def _encode_small(
    rules: GameRules,
    hands: Sequence[Sequence[int]],
    wild: int | None,
    valuation: Valuation,
    describe: bool,
) -> bytes:
    """A handful of hands: table lookups and cached reply fragments, no numpy."""
    if rules.key == "paiute":
        assert wild is not None
        values = [rank_paiute(cards, wild, valuation) for cards in hands]
        strengths = [value.strength for value in values]
        leftovers = bytes(NO_LEFTOVER if v.leftover is None else v.leftover for v in values)
        return rules.encoder.encode_few(strengths, leftovers, describe)
    table = guts_strength_list(rules.sizes[0])
    if rules.sizes[0] == 2:
        strengths = [table[cards[0] * 52 + cards[1]] for cards in hands]
    else:
        strengths = [table[(cards[0] * 52 + cards[1]) * 52 + cards[2]] for cards in hands]
    return rules.encoder.encode_few(strengths, None, describe)


def _seat_cards(hand: pb.SeatHand, rules: GameRules, field: str) -> tuple[int, ...]:
    if hand.packed_cards and hand.cards:
        raise RequestError(f"{field}: send either packed_cards or cards, not both")
    try:
        cards = tuple(hand.packed_cards) if hand.packed_cards else parse_cards(hand.cards)
        check_hand(cards, rules.sizes)
    except (CardError, HandError) as fault:
        raise RequestError(f"{field}: {fault}") from None
    return cards


def _ranked_hand(seat: int, value: HandValue, leftover: int) -> pb.RankedHand:
    ranked = pb.RankedHand(
        seat=seat,
        strength=value.strength,
        category=int(value.category),  # type: ignore[arg-type]
        description=value.description,
    )
    if leftover != NO_LEFTOVER:
        ranked.leftover = leftover
    return ranked


def showdown(request: pb.ShowdownRequest) -> pb.ShowdownResponse:
    """Rank the seats' hands and the ghost's; who wins and who pays is the caller's to decide."""
    rules = _game(request)
    wild = _wild_rank(request, rules)
    valuation = _valuation(request, rules)
    if not request.hands:
        raise RequestError("hands: at least one seat's hand is required")
    if len(request.hands) > MAX_SHOWDOWN_HANDS:
        raise RequestError(
            f"hands: {len(request.hands)} hands, at most {MAX_SHOWDOWN_HANDS} per showdown"
        )
    seen_seats: set[int] = set()
    seen_cards: dict[int, str] = {}
    ranked: list[pb.RankedHand] = []
    entries = [(f"hands[{i}]", hand) for i, hand in enumerate(request.hands)]
    if request.HasField("ghost"):
        entries.append(("ghost", request.ghost))
    for field, hand in entries:
        if field != "ghost":
            if hand.seat in seen_seats:
                raise RequestError(f"{field}: seat {hand.seat} appears twice")
            seen_seats.add(hand.seat)
        cards = _seat_cards(hand, rules, field)
        for card in cards:
            if card in seen_cards:
                raise RequestError(f"{field}: card {card_text(card)} is also in {seen_cards[card]}")
            seen_cards[card] = field
        if wild is not None and sum(1 for c in seen_cards if rank_of(c) == wild) > LIVE_WILD_CARDS:
            raise RequestError(f"{field}: {too_many_wild_cards(wild, 'the hands together hold')}")
        value, leftover = _rank_one(rules, cards, wild, valuation)
        ranked.append(_ranked_hand(0 if field == "ghost" else hand.seat, value, leftover))
    ghost = ranked.pop() if request.HasField("ghost") else None
    reply = pb.ShowdownResponse(hands=ranked)
    if ghost is not None:
        reply.ghost.CopyFrom(ghost)
    return reply


def odds(request: pb.OddsRequest) -> pb.OddsResponse:
    """Win, tie and lose chances of a Guts hand against random opponents."""
    rules = _game(request)
    if rules.key == "paiute":
        raise RequestError("game: odds are for GUTS_2 and GUTS_3")
    hand = pb.SeatHand(packed_cards=request.packed_cards, cards=request.cards)
    cards = _seat_cards(hand, rules, "packed_cards" if request.packed_cards else "cards")
    if not 1 <= request.opponents <= MAX_OPPONENTS:
        raise RequestError(f"opponents: {request.opponents} is out of range 1..{MAX_OPPONENTS}")
    samples = request.samples or DEFAULT_SAMPLES
    if samples > MAX_SAMPLES:
        raise RequestError(f"samples: {samples} is more than {MAX_SAMPLES}")
    result = guts_odds(cards, request.opponents, samples, request.seed or None)
    total = result.samples
    return pb.OddsResponse(
        win=result.wins / total,
        tie=result.ties / total,
        lose=result.losses / total,
        exact=result.exact,
        samples=total,
        wins=result.wins,
        ties=result.ties,
        losses=result.losses,
    )


class EvaluatorServicer:
    """The four RPCs plus Ping on grpc.aio, with metrics; faults become INVALID_ARGUMENT.

    Hands are ranked on the event loop, a message at a time: 100,000 packed hands take
    about a millisecond, and handing them to a worker thread cost more than it freed
    (the threads' turns at the GIL between numpy's calls, and the caches of another
    core; docs/performance.md). An evaluator process ranks on one core; the evaluator
    runs one a core (`evaluator.processes`). Odds' Monte Carlo, up to a second, goes to a
    worker thread.
    """

    def __init__(self, telemetry: Telemetry) -> None:
        """Count calls, hands and latency into `telemetry`."""
        self._telemetry = telemetry

    async def _abort(
        self, context: grpc.aio.ServicerContext[Any, Any], method: str, fault: ValueError
    ) -> None:
        self._telemetry.fault(method)
        await context.abort(grpc.StatusCode.INVALID_ARGUMENT, str(fault))

    def _evaluate(self, message: bytes, method: str) -> bytes:
        """The serialised reply to one serialised request."""
        started = time.perf_counter()
        one = _one_guts_hand(message)
        if one is not None:
            self._telemetry.done(method, started, one[0], 1)
            return one[1]
        request = _decoded(_decode_evaluate(message))
        data = request.packed_hands
        reply = evaluate(request, data)
        self._telemetry.done(method, started, request.game, _hand_count(request, len(data)))
        return reply

    async def Evaluate(  # noqa: N802
        self, request: bytes, context: grpc.aio.ServicerContext[Any, Any]
    ) -> bytes:
        """Rank many hands at once."""
        try:
            return self._evaluate(request, "Evaluate")
        except RequestError as fault:
            await self._abort(context, "Evaluate", fault)
            raise

    async def EvaluateStream(  # noqa: N802
        self,
        requests: AsyncIterator[bytes],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[bytes]:
        """One reply per request message, in order; a fault ends the stream after the
        replies to the messages before it."""
        number = 0
        try:
            async for request in requests:
                yield self._evaluate(request, "EvaluateStream")
                number += 1
        except RequestError as fault:
            await self._abort(context, "EvaluateStream", RequestError(f"message {number}: {fault}"))
            raise

    async def Showdown(  # noqa: N802
        self, request: pb.ShowdownRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.ShowdownResponse:
        """Rank the hands still in and the ghost's."""
        started = time.perf_counter()
        try:
            reply = showdown(_decoded(request))
        except RequestError as fault:
            await self._abort(context, "Showdown", fault)
            raise
        count = len(request.hands) + request.HasField("ghost")
        self._telemetry.done("Showdown", started, request.game, count)
        return reply

    async def ShowdownBatch(  # noqa: N802
        self, request: pb.ShowdownBatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.ShowdownBatchResponse:
        """Several showdowns, each ranked and counted as a Showdown call; a showdown's
        fault is its outcome, not the call's."""
        started = time.perf_counter()
        try:
            showdowns = _decoded(request).showdowns
            if not 0 < len(showdowns) <= MAX_BATCH_SHOWDOWNS:
                raise RequestError(
                    f"showdowns: {len(showdowns)} showdowns, 1 to {MAX_BATCH_SHOWDOWNS} a call"
                )
        except RequestError as fault:
            await self._abort(context, "ShowdownBatch", fault)
            raise
        reply = pb.ShowdownBatchResponse()
        for one in showdowns:
            outcome = reply.outcomes.add()
            try:
                outcome.ranked.CopyFrom(showdown(one))
            except RequestError as fault:
                self._telemetry.fault("Showdown")
                outcome.fault = str(fault)
                continue
            hands = len(one.hands) + one.HasField("ghost")
            self._telemetry.done("Showdown", started, one.game, hands)
        self._telemetry.done("ShowdownBatch", started, showdowns[0].game, 0)
        return reply

    async def Odds(  # noqa: N802
        self, request: pb.OddsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.OddsResponse:
        """Chances of a Guts hand against random opponents."""
        started = time.perf_counter()
        try:
            reply = await asyncio.to_thread(odds, _decoded(request))
        except RequestError as fault:
            await self._abort(context, "Odds", fault)
            raise
        self._telemetry.done("Odds", started, request.game, 1)
        return reply

    async def Ping(  # noqa: N802
        self, request: pb.PingRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> pb.PingResponse:
        """Nothing: the bare cost of a call."""
        if isinstance(request, Undecodable):  # Ping is not counted in the metrics
            await context.abort(grpc.StatusCode.INVALID_ARGUMENT, request.fault)
        return pb.PingResponse()


def _hand_count(request: pb.EvaluateRequest, packed_bytes: int) -> int:
    if request.hands:
        return len(request.hands)
    size = request.cards_per_hand or (2 if request.game == pb.GUTS_2 else 3)
    return packed_bytes // size
