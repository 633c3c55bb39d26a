"""`python -m bench.evaluator.showdown_clients`: what a showdown call costs a gevent worker,
asked in different ways, against one evaluator started for it.

Runs in a process patched as a gateway worker is (gevent's monkey.patch_all, then
grpc's gevent integration) and measures, for each way, the process's CPU a call (user
and system, from getrusage) and the calls/s, calls made back to back from one greenlet
and from 8 at once:

- `unary`: the gateway's way, `stub.Showdown(request, timeout=...)`;
- `future`: `stub.Showdown.future(...)`, then `.result()`;
- `stream`: one `EvaluateStream` call kept open, a message each way a call;
- the gateway's client (`api.adapters.evaluator`): the showdowns that queue while one
  call is on the wire leave together, as one `ShowdownBatch` call;

beside `Ping` the unary way (the bare cost of a call) and a plain `/healthz`-like
floor: nothing but the greenlet switch. Medians of `--rounds` rounds, taking turns.
"""

from __future__ import annotations

from gevent import monkey

monkey.patch_all()

import grpc.experimental.gevent  # noqa: E402

grpc.experimental.gevent.init_gevent()

import argparse  # noqa: E402
import resource  # noqa: E402
import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402

import gevent  # noqa: E402
import gevent.lock  # noqa: E402
import gevent.queue  # noqa: E402
import grpc  # noqa: E402

from api.adapters.evaluator import EvaluatorClient  # noqa: E402
from bench.servers import EvaluatorServer  # noqa: E402
from cardroom.evaluator.v1 import evaluator_pb2 as pb  # noqa: E402
from cardroom.evaluator.v1 import evaluator_pb2_grpc as pb_grpc  # noqa: E402

SHOWDOWN = pb.ShowdownRequest(
    game=pb.GUTS_3,
    hands=[
        pb.SeatHand(seat=1, cards="Ah Kh Qh"),
        pb.SeatHand(seat=2, cards="2c 2d 9s"),
        pb.SeatHand(seat=3, cards="Tc Jd 4s"),
        pb.SeatHand(seat=4, cards="7h 7s 3c"),
        pb.SeatHand(seat=5, cards="5d 6d 8c"),
    ],
)


def cost(call: Callable[[], object], calls: int, greenlets: int) -> tuple[float, float]:
    """Calls/s and CPU seconds a call of `calls` calls from `greenlets` greenlets."""

    def some(count: int) -> None:
        for _ in range(count):
            call()

    before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()
    gevent.joinall([gevent.spawn(some, calls // greenlets) for _ in range(greenlets)])
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return calls / elapsed, cpu / calls


class _Stream:
    """One EvaluateStream call kept open: a call is a message out and its reply back,
    one greenlet at a time (a lock; a stream's replies come in order)."""

    def __init__(self, stub: pb_grpc.EvaluatorStub) -> None:
        self._requests: gevent.queue.Queue[pb.EvaluateRequest | None] = gevent.queue.Queue()
        self._replies = stub.EvaluateStream(iter(self._requests.get, None))
        self._lock = gevent.lock.BoundedSemaphore()
        self._request = pb.EvaluateRequest(
            game=pb.GUTS_3, hands=[hand.cards for hand in SHOWDOWN.hands]
        )

    def call(self) -> object:
        with self._lock:
            self._requests.put(self._request)
            return next(self._replies)

    def close(self) -> None:
        self._requests.put(None)


def main() -> None:
    """Start an evaluator, measure every way, print the medians."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=2000)
    arguments = parser.parse_args()
    server = EvaluatorServer(processes=1)
    channel = grpc.insecure_channel(server.address)
    stub = pb_grpc.EvaluatorStub(channel)
    client = EvaluatorClient(server.address, timeout=5)
    stream = _Stream(stub)
    hands = {str(hand.seat): hand.cards.split() for hand in SHOWDOWN.hands}
    ways: dict[str, Callable[[], object]] = {
        "greenlet switch alone": gevent.sleep,
        "Ping, unary": lambda: stub.Ping(pb.PingRequest(), timeout=5),
        "Showdown, unary (the old way)": lambda: stub.Showdown(SHOWDOWN, timeout=5),
        "Showdown, future": lambda: stub.Showdown.future(SHOWDOWN, timeout=5).result(),
        "Evaluate, a stream's message": stream.call,
        "the gateway's client, batched": lambda: client.showdown("guts3", hands),
    }
    try:
        for call in ways.values():
            call()
        results: dict[tuple[str, int], list[tuple[float, float]]] = {}
        for _ in range(arguments.rounds):
            for name, call in ways.items():
                for greenlets in (1, 8):
                    results.setdefault((name, greenlets), []).append(
                        cost(call, arguments.calls, greenlets)
                    )
    finally:
        stream.close()
        client.close()
        channel.close()
        server.stop()
    print(f"medians of {arguments.rounds} rounds, {arguments.calls} calls each")
    print(f"{'way':36} {'greenlets':>9} {'calls/s':>9} {'client CPU a call':>18}")
    for (name, greenlets), values in results.items():
        rate = statistics.median(v[0] for v in values)
        per_call = statistics.median(v[1] for v in values)
        print(f"{name:36} {greenlets:9} {rate:9,.0f} {per_call * 1e6:15.0f} µs")


if __name__ == "__main__":
    main()
