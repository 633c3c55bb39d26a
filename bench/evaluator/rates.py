"""The evaluator benchmark's measurements: hands/s through the evaluator's streams and
calls (from the asyncio client the load tool uses, or the threaded one), of the batch
rankers in this process, and of PokerKit, the baseline."""

from __future__ import annotations

import asyncio
import statistics
import time
from collections.abc import AsyncIterator, Callable

import grpc
import grpc.aio
import numpy as np
import numpy.typing as npt

from cardroom.evaluator.v1 import evaluator_pb2 as pb
from cardroom.evaluator.v1 import evaluator_pb2_grpc as pb_grpc
from evaluator.batch import rank_guts_batch, rank_paiute_batch
from evaluator.bulk import read_packed_reply


def median_rate(measure: Callable[[], float], rounds: int) -> tuple[float, list[float]]:
    """The median of `rounds` rates, and all of them."""
    rates = [measure() for _ in range(rounds)]
    return statistics.median(rates), rates


def stream_rate(
    port: int, requests: list[pb.EvaluateRequest], messages: int, streams: int = 1
) -> float:
    """Hands/s through `streams` concurrent EvaluateStreams carrying `messages` in all.

    The channel is connected, and a stream has carried one message of each stream's
    first request, before the clock starts: a run measures the stream, not the connection
    or the first call of a code path."""
    width = requests[0].strength_bytes or 4

    async def run() -> float:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = pb_grpc.EvaluatorStub(channel)
            hands = 0

            async def one(first: int, count: int) -> None:
                nonlocal hands

                async def outgoing() -> AsyncIterator[pb.EvaluateRequest]:
                    for i in range(first, count, streams):
                        yield requests[i % len(requests)]

                async for reply in stub.EvaluateStream(outgoing()):
                    if reply.packed_strengths:
                        hands += len(read_packed_reply(reply, width).strengths)
                    else:
                        hands += len(reply.strengths)

            await channel.channel_ready()
            await asyncio.gather(*(one(first, streams) for first in range(streams)))
            hands = 0
            started = time.perf_counter()
            await asyncio.gather(*(one(first, messages) for first in range(streams)))
            return hands / (time.perf_counter() - started)

    return asyncio.run(run())


def unary_rate(
    stub: pb_grpc.EvaluatorStub, requests: list[pb.EvaluateRequest], calls: int, in_flight: int = 4
) -> float:
    """Hands/s through Evaluate, keeping `in_flight` calls outstanding."""
    pending: list[grpc.Future] = []
    hands = 0
    started = time.perf_counter()
    for i in range(calls):
        pending.append(stub.Evaluate.future(requests[i % len(requests)]))
        if len(pending) >= in_flight:
            hands += len(pending.pop(0).result().strengths)
    hands += sum(len(future.result().strengths) for future in pending)
    return hands / (time.perf_counter() - started)


def call_rate(port: int, method: str, request: object, calls: int) -> float:
    """Sequential calls/s of one method, from the asyncio client the load tool uses."""

    async def run() -> float:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            call = getattr(pb_grpc.EvaluatorStub(channel), method)
            await call(request)
            started = time.perf_counter()
            for _ in range(calls):
                await call(request)
            return calls / (time.perf_counter() - started)

    return asyncio.run(run())


def pool_hands(requests: list[pb.EvaluateRequest]) -> list[npt.NDArray[np.uint8]]:
    """The hands of each request as an (N, cards) array."""
    return [
        np.frombuffer(request.packed_hands, dtype=np.uint8).reshape(-1, request.cards_per_hand)
        for request in requests
    ]


def in_process_rate(requests: list[pb.EvaluateRequest], hands: int | None) -> float:
    """Hands/s of the batch rankers in this process on the requests' hands: all of them
    tiled to `hands` hands in one call, or with None one call per request."""
    arrays = pool_hands(requests)
    wild = requests[0].wild_rank

    def rank(block: npt.NDArray[np.uint8], wild_rank: int) -> None:
        if block.shape[1] == 3:
            rank_guts_batch(block, 3)
        else:
            rank_paiute_batch(block, wild_rank)

    if hands is None:
        started = time.perf_counter()
        for request, block in zip(requests, arrays, strict=True):
            rank(block, request.wild_rank)
        return sum(len(block) for block in arrays) / (time.perf_counter() - started)
    whole = np.concatenate(arrays)
    whole = np.tile(whole, (hands // len(whole) + 1, 1))[:hands]
    started = time.perf_counter()
    rank(whole, wild)  # one wild rank for the lot: the same work as any other
    return hands / (time.perf_counter() - started)


def packed(
    requests: list[pb.EvaluateRequest], describe: bool, narrow: bool = False
) -> list[pb.EvaluateRequest]:
    """The same requests asking for a packed reply; `narrow`: without the categories,
    and Guts strengths in 2 bytes (the bulk path)."""
    copies = []
    for request in requests:
        copy = pb.EvaluateRequest()
        copy.CopyFrom(request)
        copy.packed_reply = True
        copy.omit_descriptions = not describe
        if narrow:
            copy.omit_categories = True
            if request.game != pb.PAIUTE:
                copy.strength_bytes = 2
        copies.append(copy)
    return copies


def pokerkit_rates(requests: list[pb.EvaluateRequest], hands: int) -> tuple[float, float]:
    """PokerKit hands/s in process: from card text, and from pre-parsed Card objects."""
    from pokerkit import Card, RhodeIslandHoldemHand

    ranks, suits = "23456789TJQKA", "cdhs"
    texts = []
    for request in requests:
        data = request.packed_hands
        for i in range(0, len(data), 3):
            texts.append("".join(ranks[c // 4] + suits[c % 4] for c in data[i : i + 3]))
    texts = (texts * (hands // len(texts) + 1))[:hands]
    started = time.perf_counter()
    for text in texts:
        RhodeIslandHoldemHand(text)
    from_text = hands / (time.perf_counter() - started)
    parsed = [tuple(Card.parse(text)) for text in texts]
    started = time.perf_counter()
    for cards in parsed:
        RhodeIslandHoldemHand(cards)
    from_cards = hands / (time.perf_counter() - started)
    return from_text, from_cards
