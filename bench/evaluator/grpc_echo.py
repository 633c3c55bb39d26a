"""The gRPC transport alone, for `make bench-evaluator`: the floor under the evaluator.

`python -m bench.evaluator.grpc_echo` serves the evaluator's contract on a free loopback
port (printed on its first line) from the very server the evaluator runs
(`evaluator.server.create_server`: grpc.aio, the same options, health and reflection,
`--processes` serving one port with SO_REUSEPORT as `python -m evaluator` does), with
other handlers: `Evaluate` answers each request with the bytes the evaluator answers to
it, ranked once and kept, the request looked up by its bytes and never parsed again;
`EvaluateStream` answers each message with a reply of the very size the evaluator's
would have, made once and kept (the strengths, `strength_bytes` each, the categories
unless omitted and Paiute's leftovers, all zeros). It ranks nothing and counts nothing,
so the rate a client reaches through it is the most any server could reach over this
transport from that client, on this machine, at that moment: the floor of the cost of
a call, against which the evaluator's is read. `TransportServer` starts it.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import AsyncIterator

import grpc
import grpc.aio

from cardroom.evaluator.v1 import evaluator_pb2 as pb
from evaluator.processes import Supervisor, WorkerSettings, stop_on_signals
from evaluator.server import SERVICE_NAME, create_server
from evaluator.servicer import evaluate as evaluator_reply
from evaluator.telemetry import Telemetry
from tests.support.processes import ROOT

_replies: dict[tuple[int, int, bool, bool], bytes] = {}


def reply_to(request: pb.EvaluateRequest) -> bytes:
    """A serialised packed reply as long as the evaluator's to this request."""
    size = request.cards_per_hand or (2 if request.game == pb.GUTS_2 else 3)
    count = len(request.packed_hands) // size
    width = request.strength_bytes or 4
    key = (count, width, request.omit_categories, request.game == pb.PAIUTE)
    if key not in _replies:
        reply = pb.EvaluateResponse(packed_strengths=bytes(count * width))
        if not request.omit_categories:
            reply.packed_categories = bytes(count)
        if request.game == pb.PAIUTE:
            reply.leftovers = bytes(count)
        _replies[key] = reply.SerializeToString()
    return _replies[key]


async def evaluate_stream(
    requests: AsyncIterator[pb.EvaluateRequest], context: grpc.aio.ServicerContext[object, object]
) -> AsyncIterator[bytes]:
    """One reply of the right size per message, in order."""
    async for request in requests:
        yield reply_to(request)


_answers: dict[bytes, bytes] = {}
_ANSWERS_KEPT = 4096


async def evaluate(request: bytes, context: grpc.aio.ServicerContext[object, object]) -> bytes:
    """The very bytes the evaluator answers to this request, ranked once and kept: the
    request is looked up by its bytes, unparsed."""
    answer = _answers.get(request)
    if answer is None:
        if len(_answers) >= _ANSWERS_KEPT:
            _answers.clear()
        answer = _answers[request] = evaluator_reply(pb.EvaluateRequest.FromString(request))
    return answer


def echo_handlers(telemetry: Telemetry) -> grpc.GenericRpcHandler:
    """Evaluate and EvaluateStream answered without ranking (nothing counted)."""
    methods = {
        "Evaluate": grpc.unary_unary_rpc_method_handler(evaluate),
        "EvaluateStream": grpc.stream_stream_rpc_method_handler(
            evaluate_stream, request_deserializer=pb.EvaluateRequest.FromString
        ),
    }
    return grpc.method_handlers_generic_handler(SERVICE_NAME, methods)


def serve(port: int, processes: int) -> None:
    """Serve from `processes` processes, as the evaluator does, until SIGTERM; print the
    port first."""
    stopping = stop_on_signals()
    settings = WorkerSettings(f"127.0.0.1:{port}", 1, 0.0, "warning", None, None, echo_handlers)
    if processes == 1:
        server = create_server(settings.listen, 1, handlers=echo_handlers)
        server.start()
        print(server.port, flush=True)
        stopping.wait()
        server.stop(0)
        return
    supervisor = Supervisor(settings, processes)
    supervisor.start()
    print(supervisor.port, flush=True)
    supervisor.watch(stopping)
    supervisor.stop(0)


class TransportServer:
    """`python -m bench.evaluator.grpc_echo`: the evaluator's replies, nothing ranked."""

    def __init__(self, processes: int = 1) -> None:
        """Start it and read the port it listens on."""
        self.process = subprocess.Popen(
            [sys.executable, "-m", "bench.evaluator.grpc_echo", "--processes", str(processes)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=ROOT,
        )
        assert self.process.stdout is not None
        self.port = int(self.process.stdout.readline())

    def stop(self) -> None:
        """Stop it."""
        self.process.terminate()
        self.process.wait(timeout=30)


def main() -> None:
    """Parse the port and serve."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--processes", type=int, default=1)
    arguments = parser.parse_args()
    serve(arguments.port, arguments.processes)


if __name__ == "__main__":
    main()
