"""The gRPC transport alone, for `make bench-evaluator`: what moving a bulk call's bytes costs.

`python -m bench.grpc_echo` serves `EvaluateStream` on a free loopback port (printed on
its first line) with grpc.aio, as the evaluator does, and answers each message with a
reply of the very size the evaluator's would have, made once and kept: the strengths
(`strength_bytes` each), the categories unless omitted and Paiute's leftovers, all
zeros. It ranks nothing, so the rate a client reaches through it is the most any
server could reach over this transport from that client, on this machine, at that
moment: the ceiling against which the bulk path's rate is read.
"""

from __future__ import annotations

import argparse
import asyncio
from collections.abc import AsyncIterator

import grpc
import grpc.aio

from cardroom.evaluator.v1 import evaluator_pb2 as pb
from evaluator.server import SERVICE_NAME
from evaluator.servicer import MAX_MESSAGE_BYTES

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


async def serve(port: int) -> None:
    """Serve until killed; print the port first."""
    server = grpc.aio.server(options=[("grpc.max_receive_message_length", MAX_MESSAGE_BYTES)])
    handler = grpc.stream_stream_rpc_method_handler(
        evaluate_stream,
        request_deserializer=pb.EvaluateRequest.FromString,
        response_serializer=None,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(SERVICE_NAME, {"EvaluateStream": handler}),)
    )
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print(bound, flush=True)
    await server.wait_for_termination()


def main() -> None:
    """Parse the port and serve."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=0)
    asyncio.run(serve(parser.parse_args().port))


if __name__ == "__main__":
    main()
