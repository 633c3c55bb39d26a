"""`python -m evaluator.loadtest`: load an evaluator and report throughput and latency.

    python -m evaluator.loadtest --target 127.0.0.1:50051 --concurrency 8 --duration 10 \\
        --hands 1000 --game guts3 --mode unary --histogram latency.png

Each of `--concurrency` callers sends requests back to back (unary calls, or messages
on its own bidirectional stream with `--mode stream`) until `--duration` seconds
have passed or `--calls` requests are answered in all. Progress is printed every
second; at the end, the throughput and the p50/p90/p99/max latency of a request.

The bulk path (100,000 packed hands a message on one stream, packed replies read as
numpy arrays, no descriptions and no categories, Guts strengths in 2 bytes); `--bulk` is
short for it:

    python -m evaluator.loadtest --mode stream --concurrency 1 --hands 100000 \\
        --packed-reply --omit-descriptions --omit-categories --strength-bytes 2
    python -m evaluator.loadtest --bulk --game paiute --concurrency 2
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator, Sequence
from dataclasses import asdict, dataclass

import grpc
import grpc.aio
import numpy as np

from cardroom.evaluator.v1 import evaluator_pb2 as pb
from cardroom.evaluator.v1 import evaluator_pb2_grpc as pb_grpc
from evaluator.bulk import read_packed_reply

GAMES = {"guts2": (pb.GUTS_2, 2), "guts3": (pb.GUTS_3, 3), "paiute": (pb.PAIUTE, 6)}
_DISTINCT_REQUESTS = 64


def random_hands(
    count: int, size: int, rng: np.random.Generator, out_of_play: int | None = None
) -> bytes:
    """`count` random hands of `size` distinct cards, packed one byte per card; none
    holds the card `out_of_play` (Paiute's turned-up card of the wild rank)."""
    keys = rng.random((count, 52))
    if out_of_play is not None:
        keys[:, out_of_play] = 2.0  # above every other key: never among the smallest
    return bytes(np.argpartition(keys, size, axis=1)[:, :size].astype(np.uint8).tobytes())


def build_requests(
    game: str,
    hands: int,
    seed: int,
    describe: bool,
    packed_reply: bool = False,
    strength_bytes: int = 4,
    categories: bool = True,
) -> list[pb.EvaluateRequest]:
    """A pool of distinct random requests, cycled through by the callers; with
    `packed_reply` they ask for the packed reply (the bulk path), its strengths
    `strength_bytes` wide, with or without the categories."""
    enum, size = GAMES[game]
    rng = np.random.default_rng(seed)
    requests = []
    for _ in range(_DISTINCT_REQUESTS):
        wild_rank, turned_up = None, None
        if game == "paiute":  # as dealt: the wild rank's turned-up card is out of play
            turned_up = int(rng.integers(0, 52))
            wild_rank = turned_up // 4 + 2
        request = pb.EvaluateRequest(
            game=enum,
            packed_hands=random_hands(hands, size, rng, turned_up),
            cards_per_hand=size,
            omit_descriptions=not describe,
            wild_rank=wild_rank,
            packed_reply=packed_reply,
            strength_bytes=0 if strength_bytes == 4 else strength_bytes,
            omit_categories=packed_reply and not categories,
        )
        requests.append(request)
    return requests


@dataclass
class Report:
    """What a run measured."""

    requests: int
    hands: int
    errors: int
    seconds: float
    requests_per_second: float
    hands_per_second: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    max_ms: float


class LoadRun:
    """Shared counters of one run."""

    def __init__(self, calls: int | None, duration: float) -> None:
        """Stop after `calls` requests, or after `duration` seconds."""
        self.calls = calls
        self.deadline = time.perf_counter() + duration
        self.latencies: list[float] = []
        self.issued = 0
        self.hands = 0
        self.errors = 0
        self.error_samples: list[str] = []

    def more(self) -> bool:
        """True, and one more request counted as issued, while the run should go on."""
        if self.calls is not None and self.issued >= self.calls:
            return False
        if time.perf_counter() >= self.deadline:
            return False
        self.issued += 1
        return True

    def record(self, latency: float, hands: int) -> None:
        """One answered request."""
        self.latencies.append(latency)
        self.hands += hands

    def fail(self, error: grpc.aio.AioRpcError) -> None:
        """One failed request."""
        self.errors += 1
        if len(self.error_samples) < 5:
            self.error_samples.append(f"{error.code().name}: {error.details()}")


async def _unary_caller(
    stub: pb_grpc.EvaluatorStub, run: LoadRun, requests: Sequence[pb.EvaluateRequest], first: int
) -> None:
    index = first
    while run.more():
        request = requests[index % len(requests)]
        index += 1
        started = time.perf_counter()
        try:
            reply = await stub.Evaluate(request)
        except grpc.aio.AioRpcError as error:
            run.fail(error)
            continue
        run.record(time.perf_counter() - started, _hands_in(reply, request.strength_bytes))


async def _stream_caller(
    stub: pb_grpc.EvaluatorStub, run: LoadRun, requests: Sequence[pb.EvaluateRequest], first: int
) -> None:
    sent: list[float] = []
    widths: list[int] = []
    # two messages in flight keep the stream busy without building a queue
    window = asyncio.Semaphore(2)

    async def outgoing() -> AsyncIterator[pb.EvaluateRequest]:
        index = first
        while run.more():
            await window.acquire()
            request = requests[index % len(requests)]
            sent.append(time.perf_counter())
            widths.append(request.strength_bytes)
            yield request
            index += 1

    call = stub.EvaluateStream(outgoing())
    answered = 0
    try:
        async for reply in call:
            run.record(time.perf_counter() - sent[answered], _hands_in(reply, widths[answered]))
            answered += 1
            window.release()
    except grpc.aio.AioRpcError as error:
        run.fail(error)


def _hands_in(reply: pb.EvaluateResponse, strength_bytes: int) -> int:
    """Hands answered, read as a bulk caller reads them (a packed reply as arrays, its
    strengths as wide as the request's `strength_bytes` asked)."""
    if reply.packed_strengths:
        return len(read_packed_reply(reply, strength_bytes or 4).strengths)
    return len(reply.strengths)


def _percentile(values: np.ndarray, q: float) -> float:
    return float(np.percentile(values, q) * 1000) if len(values) else 0.0


async def load(
    target: str,
    requests: Sequence[pb.EvaluateRequest],
    concurrency: int,
    duration: float,
    calls: int | None,
    mode: str,
    progress: bool = True,
) -> tuple[Report, np.ndarray]:
    """Run the load; the report and every request's latency in seconds."""
    async with grpc.aio.insecure_channel(target) as channel:
        stub = pb_grpc.EvaluatorStub(channel)
        await stub.Ping(pb.PingRequest(), wait_for_ready=True, timeout=10)
        run = LoadRun(calls, duration)
        caller = _stream_caller if mode == "stream" else _unary_caller
        started = time.perf_counter()
        tasks = [
            asyncio.create_task(caller(stub, run, requests, i * 7)) for i in range(concurrency)
        ]
        while not all(task.done() for task in tasks):
            await asyncio.wait(tasks, timeout=1.0)
            if progress:
                elapsed = time.perf_counter() - started
                print(
                    f"  {elapsed:6.1f}s  {len(run.latencies):9d} requests  "
                    f"{run.hands / elapsed:13,.0f} hands/s  {run.errors} errors",
                    file=sys.stderr,
                    flush=True,
                )
        await asyncio.gather(*tasks)
        seconds = time.perf_counter() - started
    latencies = np.array(run.latencies)
    report = Report(
        requests=len(latencies),
        hands=run.hands,
        errors=run.errors,
        seconds=seconds,
        requests_per_second=len(latencies) / seconds,
        hands_per_second=run.hands / seconds,
        p50_ms=_percentile(latencies, 50),
        p90_ms=_percentile(latencies, 90),
        p99_ms=_percentile(latencies, 99),
        max_ms=float(latencies.max() * 1000) if len(latencies) else 0.0,
    )
    for sample in run.error_samples:
        print(f"  error: {sample}", file=sys.stderr)
    return report, latencies


def save_histogram(latencies: np.ndarray, path: str, title: str) -> None:
    """A latency histogram as a PNG (needs matplotlib)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(8, 4.5))
    axes.hist(latencies * 1000, bins=60, color="#2f6f9f")
    for q, style in ((50, "-"), (99, "--")):
        axes.axvline(
            np.percentile(latencies, q) * 1000, color="black", linestyle=style, label=f"p{q}"
        )
    axes.set_xlabel("latency per request (ms)")
    axes.set_ylabel("requests")
    axes.set_title(title)
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)


def main(argv: Sequence[str] | None = None) -> None:
    """Parse flags, run the load, print the report."""
    parser = argparse.ArgumentParser(prog="python -m evaluator.loadtest", description=__doc__)
    parser.add_argument("--target", default="127.0.0.1:50051", help="host:port of an evaluator")
    parser.add_argument(
        "--concurrency", type=int, default=None, help="callers at once (4; 1 with --bulk)"
    )
    parser.add_argument("--duration", type=float, default=10.0, help="seconds to run")
    parser.add_argument("--calls", type=int, default=None, help="stop after this many requests")
    parser.add_argument(
        "--hands", type=int, default=None, help="hands per request (1000; 100000 with --bulk)"
    )
    parser.add_argument("--game", choices=sorted(GAMES), default="guts3")
    parser.add_argument("--mode", choices=("unary", "stream"), default="unary")
    parser.add_argument("--omit-descriptions", action="store_true")
    parser.add_argument(
        "--packed-reply",
        action="store_true",
        help="ask for packed replies (the bulk path: with --omit-descriptions --hands 100000)",
    )
    parser.add_argument(
        "--omit-categories", action="store_true", help="with --packed-reply: no categories"
    )
    parser.add_argument(
        "--strength-bytes",
        type=int,
        choices=(2, 4),
        default=None,
        help="with --packed-reply: each strength's bytes (2 for Guts only; 4 by default)",
    )
    parser.add_argument(
        "--bulk",
        action="store_true",
        help="the bulk path: --mode stream --hands 100000 --packed-reply --omit-descriptions"
        " --omit-categories and, for Guts, --strength-bytes 2; one stream unless"
        " --concurrency says otherwise",
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--histogram", metavar="PNG", help="save a latency histogram here")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    arguments = parser.parse_args(argv)
    if arguments.bulk:
        arguments.mode, arguments.packed_reply, arguments.omit_descriptions = "stream", True, True
        arguments.omit_categories = True
        if arguments.strength_bytes is None and arguments.game != "paiute":
            arguments.strength_bytes = 2
    if (arguments.omit_categories or arguments.strength_bytes) and not arguments.packed_reply:
        parser.error("--omit-categories and --strength-bytes need --packed-reply")
    if arguments.strength_bytes == 2 and arguments.game == "paiute":
        parser.error("--strength-bytes 2 holds Guts strengths only")
    if arguments.hands is None:
        arguments.hands = 100_000 if arguments.bulk else 1000
    if arguments.concurrency is None:
        arguments.concurrency = 1 if arguments.bulk else 4
    if arguments.concurrency < 1 or arguments.hands < 1 or arguments.duration <= 0:
        parser.error("--concurrency, --hands and --duration must be positive")
    requests = build_requests(
        arguments.game,
        arguments.hands,
        arguments.seed,
        not arguments.omit_descriptions,
        arguments.packed_reply,
        arguments.strength_bytes or 4,
        not arguments.omit_categories,
    )
    print(
        f"loading {arguments.target}: {arguments.game}, {arguments.hands} hands per request, "
        f"{arguments.concurrency} {arguments.mode} callers",
        file=sys.stderr,
    )
    report, latencies = asyncio.run(
        load(
            arguments.target,
            requests,
            arguments.concurrency,
            arguments.duration,
            arguments.calls,
            arguments.mode,
        )
    )
    if arguments.json:
        print(json.dumps(asdict(report)))
    else:
        print(
            f"requests {report.requests:,}  errors {report.errors:,}  in {report.seconds:.2f} s\n"
            f"throughput {report.requests_per_second:,.0f} requests/s, "
            f"{report.hands_per_second:,.0f} hands/s\n"
            f"latency ms  p50 {report.p50_ms:.3f}  p90 {report.p90_ms:.3f}  "
            f"p99 {report.p99_ms:.3f}  max {report.max_ms:.3f}"
        )
    if arguments.histogram and len(latencies):
        save_histogram(
            latencies,
            arguments.histogram,
            f"{arguments.game}, {arguments.hands} hands/request, {arguments.mode} x"
            f"{arguments.concurrency}",
        )
        print(f"histogram saved to {arguments.histogram}", file=sys.stderr)
    if report.errors:
        sys.exit(1)


if __name__ == "__main__":
    main()
