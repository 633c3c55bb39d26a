"""The load tool's engine: closed loops, constant-rate open loops and their schedules,
recorded into HdrHistograms.

A closed loop (`Stage.rate` None) keeps `concurrency` callers each sending its next
request when the last is answered: it measures what a server does at that concurrency,
but a slow answer delays the requests that would have been sent meanwhile, and their
waits are never counted (coordinated omission). An open loop sends at a rate fixed in
advance, whatever the server does, as wrk2 does: the i-th request is due at
`start + offset(i)`, and its latency is measured from that intended time, not from when
the client managed to send it, so that a stall counts for every request it held up.
A ramp raises the rate linearly from `rate` to `rate_end` over the stage.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
import grpc.aio
from hdrh.histogram import HdrHistogram

from cardroom.evaluator.v1 import evaluator_pb2 as pb
from evaluator.bulk import read_packed_reply

CONTRACT = pb.DESCRIPTOR.services_by_name["Evaluator"]
# latencies from 1 us to 10 min, to 3 significant digits
_LOWEST_US, _HIGHEST_US, _DIGITS = 1, 600_000_000, 3
_ERROR_SAMPLES = 5


@dataclass(frozen=True)
class Stage:
    """One part of a run: `seconds` long (or until `calls` requests in all), closed at
    `concurrency` callers, or open at `rate` requests/s (rising to `rate_end`)."""

    label: str
    seconds: float
    concurrency: int
    rate: float | None = None
    rate_end: float | None = None

    def offset(self, index: int) -> float:
        """Seconds from the stage's start at which request `index` is due."""
        assert self.rate is not None
        start, end = self.rate, self.rate if self.rate_end is None else self.rate_end
        slope = (end - start) / self.seconds
        if abs(slope) < 1e-12:
            return index / start
        # the requests due by t: start*t + slope*t*t/2; solved for t
        return (math.sqrt(start * start + 2 * slope * index) - start) / slope


@dataclass
class Recorder:
    """What one stage measured: latencies (HdrHistogram, microseconds), how late the
    client sent each request of an open loop, counts, a sample of the errors."""

    latency: HdrHistogram = field(
        default_factory=lambda: HdrHistogram(_LOWEST_US, _HIGHEST_US, _DIGITS)
    )
    send_lag: HdrHistogram = field(
        default_factory=lambda: HdrHistogram(_LOWEST_US, _HIGHEST_US, _DIGITS)
    )
    latencies: list[float] = field(default_factory=list)
    requests: int = 0
    hands: int = 0
    errors: int = 0
    error_samples: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def record(self, latency: float, hands: int) -> None:
        """One answered request, `latency` seconds after it was due (or sent)."""
        self.latency.record_value(min(_HIGHEST_US, max(_LOWEST_US, round(latency * 1e6))))
        self.latencies.append(latency)
        self.requests += 1
        self.hands += hands

    def fail(self, error: grpc.aio.AioRpcError) -> None:
        """One failed request."""
        self.errors += 1
        if len(self.error_samples) < _ERROR_SAMPLES:
            self.error_samples.append(f"{error.code().name}: {error.details()}")

    def late(self, lag: float) -> None:
        """An open loop's request went out `lag` seconds after it was due."""
        self.send_lag.record_value(min(_HIGHEST_US, max(_LOWEST_US, round(lag * 1e6))))


@dataclass(frozen=True)
class Target:
    """The contract's methods on a server, under the service name it answers to."""

    service: str
    evaluate: Callable[..., Any]
    evaluate_stream: Callable[..., Any]


def discover_service(address: str, timeout: float = 10) -> tuple[str, str]:
    """The name of the service at `address` that speaks the contract (its Evaluate takes
    the contract's EvaluateRequest), found by server reflection, and how it was found."""
    from google.protobuf.descriptor_pool import DescriptorPool
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import (
        ProtoReflectionDescriptorDatabase,
    )

    request_type = CONTRACT.methods_by_name["Evaluate"].input_type.full_name
    with grpc.insecure_channel(address) as channel:
        grpc.channel_ready_future(channel).result(timeout=timeout)
        database = ProtoReflectionDescriptorDatabase(channel)
        try:
            names = database.get_services()
        except grpc.RpcError as error:
            return CONTRACT.full_name, f"the contract's name (no reflection: {error.code().name})"
        pool = DescriptorPool(database)
        for name in names:
            try:
                methods = pool.FindServiceByName(name).methods_by_name
            except KeyError:
                continue
            evaluate = methods.get("Evaluate")
            if evaluate is not None and evaluate.input_type.full_name == request_type:
                return name, "found by reflection"
    raise LookupError(f"{address} offers no service taking {request_type} (by reflection)")


def open_target(channel: grpc.aio.Channel, service: str) -> Target:
    """The contract's calls on `channel`, to `service`."""
    reply = pb.EvaluateResponse.FromString
    return Target(
        service,
        channel.unary_unary(
            f"/{service}/Evaluate",
            request_serializer=pb.EvaluateRequest.SerializeToString,
            response_deserializer=reply,
        ),
        channel.stream_stream(
            f"/{service}/EvaluateStream",
            request_serializer=pb.EvaluateRequest.SerializeToString,
            response_deserializer=reply,
        ),
    )


def hands_in(reply: pb.EvaluateResponse, strength_bytes: int) -> int:
    """Hands answered, read as a bulk caller reads them (a packed reply as arrays, its
    strengths as wide as the request's `strength_bytes` asked)."""
    if reply.packed_strengths:
        return len(read_packed_reply(reply, strength_bytes or 4).strengths)
    return len(reply.strengths)


class Budget:
    """The requests a run may still send (`calls`, or no limit) before its deadline."""

    def __init__(self, calls: int | None, seconds: float) -> None:
        """Stop after `calls` requests, or `seconds` from now."""
        self.calls = calls
        self.deadline = time.perf_counter() + seconds
        self.issued = 0

    def more(self) -> bool:
        """True, and one more request counted as issued, while the stage should go on."""
        if self.calls is not None and self.issued >= self.calls:
            return False
        if time.perf_counter() >= self.deadline:
            return False
        self.issued += 1
        return True


@dataclass(frozen=True)
class Work:
    """What an open loop sends, where, and where it records."""

    targets: Sequence[Target]
    requests: Sequence[pb.EvaluateRequest]
    into: Recorder


async def _closed_unary(work: Work, target: Target, budget: Budget, first: int) -> None:
    requests, into = work.requests, work.into
    index = first
    while budget.more():
        request = requests[index % len(requests)]
        index += 1
        started = time.perf_counter()
        try:
            reply = await target.evaluate(request)
        except grpc.aio.AioRpcError as error:
            into.fail(error)
            continue
        into.record(time.perf_counter() - started, hands_in(reply, request.strength_bytes))


async def _closed_stream(work: Work, target: Target, budget: Budget, first: int) -> None:
    requests, into = work.requests, work.into
    sent: list[tuple[float, int]] = []
    # two messages in flight keep the stream busy without building a queue
    window = asyncio.Semaphore(2)

    async def outgoing() -> AsyncIterator[pb.EvaluateRequest]:
        index = first
        while budget.more():
            await window.acquire()
            request = requests[index % len(requests)]
            sent.append((time.perf_counter(), request.strength_bytes))
            yield request
            index += 1

    answered = 0
    try:
        async for reply in target.evaluate_stream(outgoing()):
            started, width = sent[answered]
            into.record(time.perf_counter() - started, hands_in(reply, width))
            answered += 1
            window.release()
    except grpc.aio.AioRpcError as error:
        into.fail(error)


async def _due(stage: Stage, started: float, index: int, into: Recorder) -> float | None:
    """Wait until request `index` is due; its intended time, or None past the stage."""
    offset = stage.offset(index)
    if offset >= stage.seconds:
        return None
    intended = started + offset
    delay = intended - time.perf_counter()
    if delay > 0:
        await asyncio.sleep(delay)
    into.late(max(0.0, time.perf_counter() - intended))
    return intended


async def _open_unary(work: Work, stage: Stage, max_in_flight: int) -> None:
    targets, requests, into = work.targets, work.requests, work.into
    in_flight = asyncio.Semaphore(max_in_flight)
    pending: set[asyncio.Task[None]] = set()

    async def one(target: Target, request: pb.EvaluateRequest, intended: float) -> None:
        try:
            reply = await target.evaluate(request)
        except grpc.aio.AioRpcError as error:
            into.fail(error)
        else:
            into.record(time.perf_counter() - intended, hands_in(reply, request.strength_bytes))
        finally:
            in_flight.release()

    started, index = time.perf_counter(), 0
    while (intended := await _due(stage, started, index, into)) is not None:
        await in_flight.acquire()  # a full window delays the send, not the clock
        task = asyncio.create_task(
            one(targets[index % len(targets)], requests[index % len(requests)], intended)
        )
        pending.add(task)
        task.add_done_callback(pending.discard)
        index += 1
    await asyncio.gather(*pending)


async def _open_stream(work: Work, stage: Stage, streams: int) -> None:
    targets, requests, into = work.targets, work.requests, work.into
    queues: list[asyncio.Queue[tuple[float, pb.EvaluateRequest] | None]] = [
        asyncio.Queue() for _ in range(streams)
    ]

    async def stream(queue: asyncio.Queue[tuple[float, pb.EvaluateRequest] | None], k: int) -> None:
        due: list[tuple[float, int]] = []

        async def outgoing() -> AsyncIterator[pb.EvaluateRequest]:
            while (item := await queue.get()) is not None:
                due.append((item[0], item[1].strength_bytes))
                yield item[1]

        answered = 0
        try:
            async for reply in targets[k % len(targets)].evaluate_stream(outgoing()):
                intended, width = due[answered]
                into.record(time.perf_counter() - intended, hands_in(reply, width))
                answered += 1
        except grpc.aio.AioRpcError as error:
            into.fail(error)

    readers = [asyncio.create_task(stream(queue, k)) for k, queue in enumerate(queues)]
    started, index = time.perf_counter(), 0
    while (intended := await _due(stage, started, index, into)) is not None:
        queues[index % streams].put_nowait((intended, requests[index % len(requests)]))
        index += 1
    for queue in queues:
        queue.put_nowait(None)
    await asyncio.gather(*readers)


async def run_stage(
    targets: Sequence[Target],
    stage: Stage,
    requests: Sequence[pb.EvaluateRequest],
    mode: str,
    into: Recorder,
    calls: int | None = None,
    max_in_flight: int = 1000,
) -> None:
    """Run one stage against `targets` (one per connection, taken in turn), recording
    into `into`."""
    started = time.perf_counter()
    if stage.rate is None:
        budget = Budget(calls, stage.seconds)
        caller = _closed_stream if mode == "stream" else _closed_unary
        work = Work(targets, requests, into)
        await asyncio.gather(
            *(
                caller(work, targets[i % len(targets)], budget, i * 7)
                for i in range(stage.concurrency)
            )
        )
    elif mode == "stream":
        await _open_stream(Work(targets, requests, into), stage, stage.concurrency)
    else:
        await _open_unary(Work(targets, requests, into), stage, max_in_flight)
    into.seconds = time.perf_counter() - started
