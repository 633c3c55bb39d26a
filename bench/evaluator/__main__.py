"""`make bench-evaluator`: the evaluator's speed, measured against a baseline in one run.

Starts `python -m evaluator` on a free loopback port and measures from this process
(client and server on the same machine, as a load tester would run them):

- the bulk path, headlined: Guts-3 and Paiute (6-card) hands/s through EvaluateStream
  with 100,000 packed hands a message, a packed reply without descriptions or
  categories, Guts strengths in 2 bytes (the client reads the strengths with numpy), on
  one stream and on two, beside the same hands ranked in process by `rank_guts_batch`
  and `rank_paiute_batch` (1,000,000 hands in one call, 100,000 a call and 10,000 a
  call), beside the transport alone (`bench/evaluator/grpc_echo.py`: replies of the same size,
  nothing ranked), and beside the earlier ways (4-byte strengths with categories,
  10,000 hands a message, descriptions, a readable reply), in the same rounds;
- Guts-3 and Paiute (6-card) hands/s through EvaluateStream and Evaluate, 1,000
  hands per message, full replies (strengths, categories, descriptions);
- single-hand Evaluate calls/s next to empty Ping calls/s on the same server;
- the baseline: PokerKit's RhodeIslandHoldemHand ranking the same 3-card hands in
  process, from card text and from pre-parsed Card objects.

- against the floors (`bench/evaluator/floors.py`): single-hand Evaluate calls at
  concurrency 32 and Guts-3's bulk path on 8 streams, through the evaluator, through the
  gRPC echo server (the same server answering the evaluator's reply bytes, nothing
  ranked) and through an evaluator of two processes, with the servers' CPU a call and a
  hand and each process's share: the ratios of the goals, met or MISSED, and what 16
  cores (`--cores`) would serve on paper.

Every figure is the median of `--rounds` rounds; the bulk measurements take turns
within each round, so that each sees the machine its baseline saw. Ratios are of
medians. Results are also written as JSON to bench/results/evaluator.json.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from collections.abc import Callable
from dataclasses import asdict
from functools import partial

import grpc

from bench.evaluator.floors import measure_floors, report_floors
from bench.evaluator.grpc_echo import TransportServer
from bench.evaluator.rates import (
    call_rate,
    in_process_rate,
    median_rate,
    packed,
    pokerkit_rates,
    stream_rate,
    unary_rate,
)
from bench.measure import RESULTS as RESULTS_FOLDER
from bench.servers import EvaluatorServer
from cardroom.evaluator.v1 import evaluator_pb2 as pb
from cardroom.evaluator.v1 import evaluator_pb2_grpc as pb_grpc
from evaluator.loadtest import build_requests

HANDS_PER_MESSAGE = 1000
BULK_HANDS_PER_MESSAGE = 100_000
SMALL_BULK_HANDS_PER_MESSAGE = 10_000
IN_PROCESS_HANDS = 1_000_000
RESULTS = RESULTS_FOLDER / "evaluator.json"


def bulk_rates(
    port: int, transport_port: int, arguments: argparse.Namespace
) -> dict[str, list[float]]:
    """The bulk path, the transport alone and the in-process baselines, taking turns
    within each round."""
    hands = arguments.bulk_hands
    measurements: dict[str, Callable[[], float]] = {}
    for game, seed in (("guts3", 3), ("paiute", 4)):
        big = build_requests(game, BULK_HANDS_PER_MESSAGE, seed=seed, describe=False)
        small = build_requests(game, SMALL_BULK_HANDS_PER_MESSAGE, seed=seed, describe=False)
        narrow, wide = packed(big, describe=False, narrow=True), packed(big, describe=False)
        described = packed(big, describe=True)
        many, few = hands // BULK_HANDS_PER_MESSAGE, hands // SMALL_BULK_HANDS_PER_MESSAGE
        measurements |= {
            f"{game}_in_process_1m": partial(in_process_rate, big, IN_PROCESS_HANDS),
            f"{game}_in_process_100k": partial(in_process_rate, big, None),
            f"{game}_in_process_10k": partial(in_process_rate, small, None),
            f"{game}_bulk_1_stream": partial(stream_rate, port, narrow, many),
            f"{game}_bulk_2_streams": partial(stream_rate, port, narrow, many, 2),
            f"{game}_transport_1_stream": partial(stream_rate, transport_port, narrow, many),
            f"{game}_transport_2_streams": partial(stream_rate, transport_port, narrow, many, 2),
            f"{game}_bulk_wide_1_stream": partial(stream_rate, port, wide, many),
            f"{game}_bulk_10k_1_stream": partial(
                stream_rate, port, packed(small, describe=False, narrow=True), few
            ),
            f"{game}_bulk_described_1_stream": partial(stream_rate, port, described, many),
            f"{game}_bulk_readable_1_stream": partial(stream_rate, port, small, few),
        }
    for name, measure in measurements.items():
        if "in_process" in name:
            measure()  # the first call pays for the pages of its temporaries: not timed
    rates: dict[str, list[float]] = {name: [] for name in measurements}
    for _ in range(arguments.rounds):
        for name, measure in measurements.items():
            rates[name].append(measure())
    return rates


def main() -> None:
    """Run every measurement and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--messages", type=int, default=2000, help="messages per stream round")
    parser.add_argument("--calls", type=int, default=1000, help="unary calls per round")
    parser.add_argument("--single", type=int, default=2000, help="single-hand calls per round")
    parser.add_argument(
        "--bulk-hands", type=int, default=10_000_000, help="hands per bulk measurement a round"
    )
    parser.add_argument(
        "--parts",
        default="rates,floors",
        help="rates (the bulk path and the rest), floors (against the echo server, and two"
        " processes against one), or both",
    )
    parser.add_argument(
        "--floor-seconds", type=float, default=5.0, help="seconds of each floor measurement"
    )
    parser.add_argument(
        "--cores", type=int, default=16, help="the machine the floors' paper estimate is for"
    )
    arguments = parser.parse_args()
    parts = set(arguments.parts.split(","))
    results: dict[str, object] = {}
    if "rates" in parts:
        server = EvaluatorServer()
        transport = TransportServer()
        try:
            results = measure(server.port, transport.port, arguments)
        finally:
            transport.stop()
            server.stop()
        print(f"medians of {arguments.rounds} rounds, {results['machine']}")
        report(results)
    if "floors" in parts:
        floors = measure_floors(arguments.rounds, arguments.floor_seconds)
        print("\n".join(report_floors(floors, arguments.rounds, arguments.cores)))
        results["floors"] = {name: asdict(value) for name, value in floors.items()}
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2))
    print(f"\nresults written to {RESULTS}")


def measure(port: int, transport_port: int, arguments: argparse.Namespace) -> dict[str, object]:
    """All measurements against the evaluator on `port` (and the transport alone, a
    `bench.evaluator.grpc_echo` on `transport_port`)."""
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    stub = pb_grpc.EvaluatorStub(channel)
    rounds = arguments.rounds
    guts = build_requests("guts3", HANDS_PER_MESSAGE, seed=1, describe=True)
    paiute = build_requests("paiute", HANDS_PER_MESSAGE, seed=2, describe=True)
    guts_bare = build_requests("guts3", HANDS_PER_MESSAGE, seed=1, describe=False)
    single = pb.EvaluateRequest(game=pb.GUTS_3, packed_hands=guts[0].packed_hands[:3])
    ping = pb.PingRequest()
    for request in (guts[0], paiute[0], single):  # warm the connection and the caches
        stub.Evaluate(request)
    rates: dict[str, tuple[float, list[float]]] = {}
    for name, values in bulk_rates(port, transport_port, arguments).items():
        rates[name] = (statistics.median(values), values)
    rates["guts3_stream"] = median_rate(lambda: stream_rate(port, guts, arguments.messages), rounds)
    rates["guts3_4_streams"] = median_rate(
        lambda: stream_rate(port, guts, arguments.messages, streams=4), rounds
    )
    rates["guts3_unary"] = median_rate(lambda: unary_rate(stub, guts, arguments.calls), rounds)
    rates["guts3_stream_no_descriptions"] = median_rate(
        lambda: stream_rate(port, guts_bare, arguments.messages), rounds
    )
    rates["paiute_stream"] = median_rate(
        lambda: stream_rate(port, paiute, arguments.messages), rounds
    )
    rates["paiute_unary"] = median_rate(lambda: unary_rate(stub, paiute, arguments.calls), rounds)
    pings, singles = [], []
    for _ in range(rounds):  # interleaved so that both see the same machine
        pings.append(call_rate(port, "Ping", ping, arguments.single))
        singles.append(call_rate(port, "Evaluate", single, arguments.single))
    rates["ping_calls"] = (statistics.median(pings), pings)
    rates["single_hand_calls"] = (statistics.median(singles), singles)
    texts, cards = [], []
    for _ in range(rounds):
        from_text, from_cards = pokerkit_rates(guts, 200_000)
        texts.append(from_text)
        cards.append(from_cards)
    rates["pokerkit_from_text"] = (statistics.median(texts), texts)
    rates["pokerkit_from_cards"] = (statistics.median(cards), cards)
    channel.close()
    return {
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
        "rounds": rounds,
        "hands_per_message": HANDS_PER_MESSAGE,
        "bulk_hands_per_message": BULK_HANDS_PER_MESSAGE,
        "medians": {name: median for name, (median, _) in rates.items()},
        "all_rounds": {name: values for name, (_, values) in rates.items()},
    }


def report_bulk(medians: dict[str, float]) -> None:
    """The bulk path first: each way over gRPC against the in-process rates, the
    transport alone and PokerKit."""
    pokerkit = medians["pokerkit_from_cards"]
    print(
        f"\nthe bulk path: EvaluateStream, {BULK_HANDS_PER_MESSAGE:,} packed hands a message,"
        " packed_reply, omit_descriptions, omit_categories, Guts strengths in 2 bytes"
        " (strength_bytes), one client process"
    )
    print(
        f"{'measurement':58} {'median':>12}  {'x 1m call':>9} {'x 100k':>6} {'x 10k':>6}"
        f" {'x transport':>11} {'x PokerKit':>10}"
    )
    big, small = f"{BULK_HANDS_PER_MESSAGE:,}", f"{SMALL_BULK_HANDS_PER_MESSAGE:,}"
    for game, label in (("guts3", "Guts-3"), ("paiute", "Paiute-6")):
        whole = medians[f"{game}_in_process_1m"]
        per_message = medians[f"{game}_in_process_100k"]
        chunked = medians[f"{game}_in_process_10k"]
        rows = [
            (f"{label} in process, {IN_PROCESS_HANDS:,} hands a call", f"{game}_in_process_1m"),
            (f"{label} in process, {big} hands a call", f"{game}_in_process_100k"),
            (f"{label} in process, {small} hands a call", f"{game}_in_process_10k"),
            (f"{label} bulk path, 1 stream", f"{game}_bulk_1_stream"),
            (f"{label} bulk path, 2 streams", f"{game}_bulk_2_streams"),
            (
                f"{label} the transport alone (nothing ranked), 1 stream",
                f"{game}_transport_1_stream",
            ),
            (f"{label} the transport alone, 2 streams", f"{game}_transport_2_streams"),
            (f"{label} same, strengths in 4 bytes and categories", f"{game}_bulk_wide_1_stream"),
            (f"{label} same, {small} hands a message, 1 stream", f"{game}_bulk_10k_1_stream"),
            (f"{label} packed reply with the description table", f"{game}_bulk_described_1_stream"),
            (
                f"{label} readable reply, {small} a message, no descr.",
                f"{game}_bulk_readable_1_stream",
            ),
        ]
        transport = max(
            medians[f"{game}_transport_1_stream"], medians[f"{game}_transport_2_streams"]
        )
        for text, key in rows:
            value = medians[key]
            versus_pokerkit = f"{value / pokerkit:10.1f}" if game == "guts3" else ""
            print(
                f"{text:58} {value:12,.0f}  {value / whole:9.2f} {value / per_message:6.2f}"
                f" {value / chunked:6.2f} {value / transport:11.2f} {versus_pokerkit:>10}"
            )
        streams = 1 if medians[f"{game}_bulk_1_stream"] >= medians[f"{game}_bulk_2_streams"] else 2
        best = medians[f"{game}_bulk_{streams}_stream" + ("s" if streams == 2 else "")]
        goals = (
            f"{label}: the bulk path ({streams} stream{'s' if streams == 2 else ''}) is"
            f" {best / whole:.2f}x the in-process batch rate of {IN_PROCESS_HANDS:,} hands a call"
            f" ({'met' if best >= 0.75 * whole else 'MISSED'}, >= 0.75x),"
            f" {best / per_message:.2f}x that of one message's {big} hands,"
            f" {best / transport:.2f}x the transport alone; the transport alone is"
            f" {transport / whole:.2f}x the in-process rate"
        )
        if game == "guts3":
            goals += (
                f"; {best / pokerkit:.0f}x PokerKit from Card objects"
                f" ({'met' if best >= 100 * pokerkit else 'MISSED'}, >= 100x)"
            )
        print(goals)


def report(results: dict[str, object]) -> None:
    """Print the medians and the ratios."""
    medians = results["medians"]
    assert isinstance(medians, dict)
    report_bulk(medians)
    baseline = medians["pokerkit_from_cards"]
    text_baseline = medians["pokerkit_from_text"]
    rows = [
        ("Guts-3 EvaluateStream, 1,000 hands/msg", "guts3_stream", "hands/s", 3_000_000),
        ("Guts-3, 4 EvaluateStreams at once", "guts3_4_streams", "hands/s", 3_000_000),
        ("Guts-3 Evaluate, 1,000 hands/call", "guts3_unary", "hands/s", 1_500_000),
        ("Guts-3 EvaluateStream, no descriptions", "guts3_stream_no_descriptions", "hands/s", None),
        ("Paiute-6 EvaluateStream, 1,000 hands/msg", "paiute_stream", "hands/s", 1_000_000),
        ("Paiute-6 Evaluate, 1,000 hands/call", "paiute_unary", "hands/s", 1_000_000),
        ("Empty Ping, sequential", "ping_calls", "calls/s", None),
        ("Single-hand Evaluate, sequential", "single_hand_calls", "calls/s", None),
        ("Baseline: PokerKit from Card objects", "pokerkit_from_cards", "hands/s", None),
        ("Baseline: PokerKit from card text", "pokerkit_from_text", "hands/s", None),
    ]
    print(f"\nthe rest, 1,000 hands a message: medians of {results['rounds']} rounds")
    print(f"{'measurement':44} {'median':>14}        {'x PokerKit':>10} {'x text':>8}  target")
    for label, key, unit, target in rows:
        value = medians[key]
        ratio = (
            f"{value / baseline:10.1f} {value / text_baseline:8.1f}" if unit == "hands/s" else ""
        )
        goal = ""
        if target is not None:
            goal = f"{'met' if value >= target else 'MISSED'} (>= {target:,})"
        print(f"{label:44} {value:14,.0f} {unit:8} {ratio:>19}  {goal}")
    ratio = medians["single_hand_calls"] / medians["ping_calls"]
    print(
        f"\nsingle-hand calls / empty calls: {ratio:.3f} (target >= 0.9: "
        f"{'met' if ratio >= 0.9 else 'MISSED'})"
    )
    for key, label in (("guts3_stream", "one stream"), ("guts3_4_streams", "four streams")):
        print(
            f"Guts-3 EvaluateStream, {label}: {medians[key] / baseline:.1f}x PokerKit from Card "
            f"objects, {medians[key] / text_baseline:.1f}x PokerKit from text (target >= 25x)"
        )


if __name__ == "__main__":
    main()
