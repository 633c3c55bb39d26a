"""`make bench-evaluator`'s goals against floors: the evaluator against the gRPC echo
server (the transport alone, `bench.evaluator.grpc_echo`), and two evaluator processes
against one, each pair measured in the same run, taking turns within each round.

The load is `python -m evaluator.loadtest`'s engine (closed loops, one connection a
caller); the servers' CPU is read from /proc (psutil) before and after each measurement,
process by process, so that a ratio of CPU per call or per hand, and each process's
share, come with the rates.
"""

from __future__ import annotations

import asyncio
import functools
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import psutil

from bench.evaluator.grpc_echo import TransportServer
from bench.servers import EvaluatorServer
from cardroom.evaluator.v1 import evaluator_pb2 as pb
from evaluator.loadrun import Stage
from evaluator.loadtest import build_requests, run

SINGLE_CONCURRENCY = 32
BULK_HANDS = 100_000


@dataclass(frozen=True)
class Measured:
    """One measurement: requests and hands a second, and the servers' CPU seconds a
    request and a hand, with each server process's share of that CPU."""

    requests_per_second: float
    hands_per_second: float
    cpu_per_request: float
    cpu_per_hand: float
    shares: tuple[float, ...]


def _processes(pid: int) -> list[psutil.Process]:
    """The server's processes: the one started and its workers (not the resource tracker,
    which serves nothing and costs nothing)."""
    root = psutil.Process(pid)
    return [root, *root.children(recursive=True)]


def _cpu(processes: Sequence[psutil.Process]) -> list[float]:
    seconds = []
    for process in processes:
        try:
            times = process.cpu_times()
        except psutil.NoSuchProcess:
            seconds.append(0.0)
            continue
        seconds.append(times.user + times.system)
    return seconds


def measure(
    port: int,
    pid: int,
    requests: list[pb.EvaluateRequest],
    mode: str,
    concurrency: int,
    seconds: float,
) -> Measured:
    """A closed loop of `concurrency` callers, one connection each, for `seconds`."""
    processes = _processes(pid)
    before = _cpu(processes)
    stage = Stage(f"concurrency {concurrency}", seconds, concurrency)
    recorders = asyncio.run(
        run(f"127.0.0.1:{port}", requests, [stage], mode, concurrency, progress=False)
    )
    used = [after - earlier for after, earlier in zip(_cpu(processes), before, strict=True)]
    recorder = recorders[0]
    total = sum(used) or 1e-9
    return Measured(
        recorder.requests / recorder.seconds,
        recorder.hands / recorder.seconds,
        total / max(1, recorder.requests),
        total / max(1, recorder.hands),
        tuple(sorted((share / total for share in used), reverse=True)),
    )


def _single_hand() -> list[pb.EvaluateRequest]:
    """Single-hand requests as the gateway's callers send them: packed, readable reply."""
    return build_requests("guts3", 1, seed=11, describe=True)


def _bulk() -> list[pb.EvaluateRequest]:
    """Guts-3's bulk path: 100,000 packed hands, 2-byte strengths, nothing else."""
    return build_requests("guts3", BULK_HANDS, 12, False, True, strength_bytes=2, categories=False)


def rounds_of(
    measurements: dict[str, Callable[[], Measured]], rounds: int
) -> dict[str, list[Measured]]:
    """Every measurement once a round, in turn, `rounds` times."""
    results: dict[str, list[Measured]] = {name: [] for name in measurements}
    for _ in range(rounds):
        for name, take in measurements.items():
            results[name].append(take())
    return results


def median_of(values: list[Measured]) -> Measured:
    """Each field's median over the rounds."""
    shares = [statistics.median(v.shares[i] for v in values) for i in range(len(values[0].shares))]
    return Measured(
        statistics.median(v.requests_per_second for v in values),
        statistics.median(v.hands_per_second for v in values),
        statistics.median(v.cpu_per_request for v in values),
        statistics.median(v.cpu_per_hand for v in values),
        tuple(shares),
    )


def measure_floors(rounds: int, seconds: float) -> dict[str, Measured]:
    """The evaluator of one process, of two, and the echo server of one, under the
    single-hand and the bulk loads; the medians."""
    one, two = EvaluatorServer(processes=1), EvaluatorServer(processes=2)
    echo = TransportServer(processes=1)
    single, bulk = _single_hand(), _bulk()
    try:
        assert one.process is not None
        assert two.process is not None
        servers = {
            "evaluator": (one.port, one.process.pid),
            "evaluator_2_processes": (two.port, two.process.pid),
            "echo": (echo.port, echo.process.pid),
        }
        measurements: dict[str, Callable[[], Measured]] = {}
        for name, (port, pid) in servers.items():
            measurements[f"{name}_single"] = functools.partial(
                measure, port, pid, single, "unary", SINGLE_CONCURRENCY, seconds
            )
            # each stream on its own connection, spread over the processes by the kernel
            measurements[f"{name}_bulk"] = functools.partial(
                measure, port, pid, bulk, "stream", 8, seconds
            )
        results = rounds_of(measurements, rounds)
    finally:
        echo.stop()
        two.stop()
        one.stop()
    return {name: median_of(values) for name, values in results.items()}


def _verdict(met: bool) -> str:
    return "met" if met else "MISSED"


def report_floors(medians: dict[str, Measured], rounds: int, cores: int) -> list[str]:
    """The goals' lines: each ratio, its goal, met or missed."""
    lines = [
        f"\nagainst the floors: medians of {rounds} rounds, single-hand Evaluate at"
        f" concurrency {SINGLE_CONCURRENCY} (one connection a caller), Guts-3 bulk on 8"
        " streams (100,000 hands a message, one connection a stream)",
        f"{'server':36} {'calls/s':>9} {'hands/s':>13} {'us CPU/call':>12} {'ns CPU/hand':>12}"
        "  CPU shares",
    ]
    for name, value in medians.items():
        shares = " ".join(f"{share:.0%}" for share in value.shares if share >= 0.005)
        lines.append(
            f"{name:36} {value.requests_per_second:9,.0f} {value.hands_per_second:13,.0f}"
            f" {value.cpu_per_request * 1e6:12.1f} {value.cpu_per_hand * 1e9:12.2f}  {shares}"
        )
    evaluator, echo = medians["evaluator_single"], medians["echo_single"]
    ratio = evaluator.requests_per_second / echo.requests_per_second
    lines.append(
        f"single-hand Evaluate, concurrency {SINGLE_CONCURRENCY}: {ratio:.2f}x the echo server's"
        f" calls/s ({_verdict(ratio >= 0.9)}, >= 0.9x); server CPU a call"
        f" {evaluator.cpu_per_request * 1e6:.0f} us against {echo.cpu_per_request * 1e6:.0f} us"
    )
    bulk = medians["evaluator_bulk"].hands_per_second / medians["echo_bulk"].hands_per_second
    lines.append(
        f"Guts-3 bulk: {bulk:.2f}x the echo server carrying the same bytes"
        f" ({_verdict(bulk >= 0.75)}, >= 0.75x)"
    )
    for load, unit in (("single", "call"), ("bulk", "hand")):
        alone, both = medians[f"evaluator_{load}"], medians[f"evaluator_2_processes_{load}"]
        second = both.shares[1] / max(1e-9, both.shares[0] + both.shares[1])
        cost = (both.cpu_per_request if load == "single" else both.cpu_per_hand) / (
            alone.cpu_per_request if load == "single" else alone.cpu_per_hand
        )
        total = both.requests_per_second / alone.requests_per_second
        lines.append(
            f"two processes against one, {load}: the second does {second:.0%} of the workers'"
            f" CPU ({_verdict(second >= 0.3)}, >= 30%); CPU a {unit} {cost:.2f}x"
            f" ({_verdict(cost <= 1.15)}, <= 1.15x); the total {total:.2f}x"
            f" ({_verdict(total >= 1.0)}, >= 1x)"
        )
    per_call = medians["evaluator_2_processes_single"].cpu_per_request
    per_hand = medians["evaluator_2_processes_bulk"].cpu_per_hand
    lines.append(
        f"on paper, from the CPU a call and a hand with two processes: {cores} cores serve"
        f" about {cores / per_call:,.0f} single-hand calls/s or {cores / per_hand:,.0f}"
        " bulk hands/s, the clients on other machines"
    )
    return lines
