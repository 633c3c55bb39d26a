"""`python -m evaluator.loadtest`: load any server speaking the evaluator's contract and
report throughput and HdrHistogram latency percentiles (p50 to p99.99 and the maximum).

    python -m evaluator.loadtest --target 127.0.0.1:50051 --concurrency 8 --duration 10 \\
        --hands 1000 --game guts3 --mode unary --histogram latency.png

The service is found by server reflection (`--service` names it instead). By default
each of `--concurrency` callers sends requests back to back (unary calls, or messages
on its own bidirectional stream with `--mode stream`) until `--duration` seconds have
passed or `--calls` requests are answered in all: a closed loop, whose percentiles
leave out the requests a slow answer kept from being sent. The open loops send on a
schedule whatever the server does, and measure each latency from the moment the
request was due (as wrk2 does):

    --rate 2000                 2,000 requests/s for --duration seconds
    --ramp 500,5000             from 500 to 5,000 requests/s, linearly, over --duration
    --step 1000,1000,5000,10    1,000 requests/s for 10 s, then 2,000, ... up to 5,000
    --sweep 1,2,4,8,16,32       closed loops at each concurrency in turn

Thresholds set the exit code (1 when one fails; without `--max-errors`, any error
fails): `--max-p99 20ms --max-errors 0.1%`. `--json` prints the report as JSON (every
stage's HdrHistogram included, encoded), `--report-json FILE` and `--report-csv FILE`
write it. The calls spread over `--connections` connections (one a caller by default),
so that a server of several processes sees several.

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
import contextlib
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import grpc
import grpc.aio
import numpy as np

from cardroom.evaluator.v1 import evaluator_pb2 as pb
from evaluator.loadreport import (
    Report,
    Threshold,
    as_csv,
    as_json,
    as_text,
    parse_duration_ms,
    parse_fraction,
    summarise,
)
from evaluator.loadrun import CONTRACT, Recorder, Stage, discover_service, open_target, run_stage

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


def parse_stages(arguments: argparse.Namespace) -> list[Stage]:
    """The run's stages from the flags: one closed loop (the default), a concurrency
    sweep, one constant rate, a ramp, or steps of rates."""
    seconds, concurrency = arguments.duration, arguments.concurrency
    if arguments.sweep:
        return [Stage(f"concurrency {c}", seconds, c) for c in arguments.sweep]
    if arguments.step:
        first, increment, last, step_seconds = arguments.step
        stages, rate = [], first
        while rate <= last + 1e-9:
            stages.append(Stage(f"{rate:g}/s", step_seconds, concurrency, rate))
            rate += increment
        return stages
    if arguments.ramp:
        low, high = arguments.ramp
        return [Stage(f"{low:g}->{high:g}/s", seconds, concurrency, low, high)]
    if arguments.rate:
        return [Stage(f"{arguments.rate:g}/s", seconds, concurrency, arguments.rate)]
    return [Stage(f"concurrency {concurrency}", seconds, concurrency)]


def _print_progress(recorder: Recorder, label: str, started: float) -> None:
    elapsed = time.perf_counter() - started
    print(
        f"  {label:>18} {elapsed:6.1f}s  {recorder.requests:9d} requests  "
        f"{recorder.hands / elapsed:13,.0f} hands/s  {recorder.errors} errors",
        file=sys.stderr,
        flush=True,
    )


async def _progress(recorder: Recorder, label: str, started: float) -> None:
    while True:
        await asyncio.sleep(1.0)
        _print_progress(recorder, label, started)


async def run(
    target: str,
    requests: Sequence[pb.EvaluateRequest],
    stages: Sequence[Stage],
    mode: str,
    connections: int,
    calls: int | None = None,
    service: str = CONTRACT.full_name,
    progress: bool = True,
    max_in_flight: int = 1000,
) -> list[Recorder]:
    """Run the stages in turn on `connections` connections (each its own channel);
    a recorder a stage."""
    channels = [
        grpc.aio.insecure_channel(target, options=[("grpc.use_local_subchannel_pool", 1)])
        for _ in range(connections)
    ]
    try:
        targets = [open_target(channel, service) for channel in channels]
        for channel, one in zip(channels, targets, strict=True):
            await asyncio.wait_for(channel.channel_ready(), timeout=30)
            with contextlib.suppress(grpc.aio.AioRpcError):  # not counted: the first call's costs
                await one.evaluate(requests[0], timeout=30)
        recorders = []
        for stage in stages:
            recorder, started = Recorder(), time.perf_counter()
            reporter = asyncio.create_task(_progress(recorder, stage.label, started))
            if not progress:
                reporter.cancel()
            await run_stage(targets, stage, requests, mode, recorder, calls, max_in_flight)
            if progress:
                reporter.cancel()
                _print_progress(recorder, stage.label, started)
            recorders.append(recorder)
        return recorders
    finally:
        for channel in channels:
            await channel.close()


async def load(
    target: str,
    requests: Sequence[pb.EvaluateRequest],
    concurrency: int,
    duration: float,
    calls: int | None,
    mode: str,
    progress: bool = True,
) -> tuple[Report, np.ndarray]:
    """A closed loop of `concurrency` callers on one connection each; the report and
    every request's latency in seconds."""
    stage = Stage(f"concurrency {concurrency}", duration, concurrency)
    recorders = await run(target, requests, [stage], mode, concurrency, calls, progress=progress)
    return summarise(recorders, stage), np.array(recorders[0].latencies)


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


def _numbers(count: int) -> Callable[[str], tuple[float, ...]]:
    def parse(text: str) -> tuple[float, ...]:
        values = tuple(float(part) for part in text.split(","))
        if len(values) != count or min(values) < 0:
            raise ValueError(text)
        return values

    return parse


def _concurrencies(text: str) -> list[int]:
    values = [int(part) for part in text.split(",")]
    if not values or min(values) < 1:
        raise ValueError(text)
    return values


def _add_schedule_flags(parser: argparse.ArgumentParser) -> None:
    """The open loops' schedules, the sweep and the thresholds."""
    schedule = parser.add_mutually_exclusive_group()
    schedule.add_argument(
        "--rate", type=float, help="open loop: requests/s at a constant rate (wrk2's -R)"
    )
    schedule.add_argument(
        "--ramp",
        type=_numbers(2),
        metavar="FROM,TO",
        help="open loop: the rate rises linearly from FROM to TO requests/s over --duration",
    )
    schedule.add_argument(
        "--step",
        type=_numbers(4),
        metavar="FROM,BY,TO,SECONDS",
        help="open loop: FROM requests/s for SECONDS, then BY more each SECONDS, up to TO",
    )
    schedule.add_argument(
        "--sweep",
        type=_concurrencies,
        metavar="C1,C2,...",
        help="closed loops at each concurrency in turn, --duration each",
    )
    parser.add_argument(
        "--max-in-flight",
        type=int,
        default=1000,
        help="open loop, unary: calls outstanding at most (a full window delays sends;"
        " their latency still counts from when they were due)",
    )
    parser.add_argument("--max-p50", type=parse_duration_ms, help="fail above this p50 (20ms)")
    parser.add_argument("--max-p99", type=parse_duration_ms, help="fail above this p99 (20ms)")
    parser.add_argument("--max-p999", type=parse_duration_ms, help="fail above this p99.9")
    parser.add_argument(
        "--max-errors",
        type=parse_fraction,
        help="fail above this share of failed requests (0.1%%); without it any error fails",
    )


def _add_report_flags(parser: argparse.ArgumentParser) -> None:
    """Where the reports go."""
    parser.add_argument("--histogram", metavar="PNG", help="save a latency histogram here")
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--report-json", metavar="FILE", help="also write the JSON report here")
    parser.add_argument("--report-csv", metavar="FILE", help="write a CSV row a stage here")


def _parser() -> argparse.ArgumentParser:
    """The tool's flags, as `--help` lists them."""
    parser = argparse.ArgumentParser(
        prog="python -m evaluator.loadtest",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--target", default="127.0.0.1:50051", help="host:port of an evaluator")
    parser.add_argument(
        "--service",
        default=None,
        help="the service's full name (default: found by reflection, else the contract's)",
    )
    parser.add_argument(
        "--concurrency",
        type=int,
        default=None,
        help="closed loop: callers at once (4; 1 with --bulk); with a rate: streams",
    )
    parser.add_argument(
        "--connections",
        type=int,
        default=None,
        help="connections (channels) the calls spread over (default: --concurrency)",
    )
    parser.add_argument("--duration", type=float, default=10.0, help="seconds to run (a stage)")
    parser.add_argument("--calls", type=int, default=None, help="stop after this many requests")
    _add_schedule_flags(parser)
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
    _add_report_flags(parser)
    return parser


def _settle_flags(parser: argparse.ArgumentParser, arguments: argparse.Namespace) -> None:
    """Fill in what `--bulk` stands for and the defaults that depend on it; refuse
    flags that contradict each other (through `parser`, which exits)."""
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
    if arguments.connections is None:
        arguments.connections = max(arguments.sweep or [arguments.concurrency])
    if min(arguments.concurrency, arguments.hands, arguments.connections) < 1:
        parser.error("--concurrency, --connections and --hands must be positive")
    if arguments.duration <= 0 or arguments.max_in_flight < 1:
        parser.error("--duration and --max-in-flight must be positive")
    if arguments.rate is not None and arguments.rate <= 0:
        parser.error("--rate must be positive")
    if arguments.step and (arguments.step[0] <= 0 or arguments.step[3] <= 0):
        parser.error("--step starts above 0 requests/s and lasts more than 0 seconds")
    if arguments.ramp and max(arguments.ramp) <= 0:
        parser.error("--ramp needs a rate above 0")


def thresholds(arguments: argparse.Namespace) -> list[Threshold]:
    """The limits the flags set; without --max-errors, any error fails the run."""
    limits = [
        Threshold(name, value)
        for name, value in (
            ("p50", arguments.max_p50),
            ("p99", arguments.max_p99),
            ("p999", arguments.max_p999),
        )
        if value is not None
    ]
    errors = 0.0 if arguments.max_errors is None else arguments.max_errors
    return [*limits, Threshold("errors", errors)]


def _find_service(arguments: argparse.Namespace) -> str:
    if arguments.service:
        return str(arguments.service)
    try:
        service, how = discover_service(arguments.target)
    except LookupError as error:
        raise SystemExit(f"loadtest: {error}") from None
    except grpc.FutureTimeoutError:
        raise SystemExit(f"loadtest: nothing answers at {arguments.target}") from None
    print(f"service {service} ({how})", file=sys.stderr)
    return service


def _write_reports(
    arguments: argparse.Namespace,
    overall: Report,
    stages: list[Report],
    service: str,
    limits: list[Threshold],
) -> None:
    """The report on standard output (text or JSON) and in the files asked for."""
    document = as_json(overall, stages, service, limits)
    if arguments.json:
        print(json.dumps(document))
    else:
        print(as_text(overall, stages))
    if arguments.report_json:
        Path(arguments.report_json).write_text(json.dumps(document, indent=2))
    if arguments.report_csv:
        Path(arguments.report_csv).write_text(as_csv(overall, stages))


def main(argv: Sequence[str] | None = None) -> None:
    """Parse flags, run the load, print the report; exit 1 when a threshold failed."""
    parser = _parser()
    arguments = parser.parse_args(argv)
    _settle_flags(parser, arguments)
    requests = build_requests(
        arguments.game,
        arguments.hands,
        arguments.seed,
        not arguments.omit_descriptions,
        arguments.packed_reply,
        arguments.strength_bytes or 4,
        not arguments.omit_categories,
    )
    service = _find_service(arguments)
    stages = parse_stages(arguments)
    print(
        f"loading {arguments.target}: {arguments.game}, {arguments.hands} hands per request, "
        f"{arguments.mode}, {len(stages)} stage(s), {arguments.connections} connection(s)",
        file=sys.stderr,
    )
    recorders = asyncio.run(
        run(
            arguments.target,
            requests,
            stages,
            arguments.mode,
            arguments.connections,
            arguments.calls,
            service,
            max_in_flight=arguments.max_in_flight,
        )
    )
    reports = [summarise([r], stage) for r, stage in zip(recorders, stages, strict=True)]
    overall = reports[0] if len(reports) == 1 else summarise(recorders)
    for sample in overall.error_samples:
        print(f"  error: {sample}", file=sys.stderr)
    limits = thresholds(arguments)
    _write_reports(arguments, overall, reports, service, limits)
    latencies = np.array([value for r in recorders for value in r.latencies])
    if arguments.histogram and len(latencies):
        save_histogram(
            latencies,
            arguments.histogram,
            f"{arguments.game}, {arguments.hands} hands/request, {arguments.mode}, "
            + ", ".join(stage.label for stage in stages),
        )
        print(f"histogram saved to {arguments.histogram}", file=sys.stderr)
    failed = [limit for limit in limits if not limit.met(overall)]
    for limit in limits:
        if limit.name != "errors" or arguments.max_errors is not None or failed:
            print(limit.describe(overall), file=sys.stderr)
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
