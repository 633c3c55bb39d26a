"""Build the evaluator's gRPC server: the service, health checking and reflection."""

from __future__ import annotations

import asyncio
import itertools
import threading
from collections.abc import Callable, Coroutine
from concurrent import futures
from dataclasses import dataclass
from typing import Any, TypeVar

import grpc
import grpc.aio
import numpy as np
from grpc_health.v1 import _async as health_aio
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from cardroom.evaluator.v1 import evaluator_pb2 as pb
from evaluator.batch import rank_guts_batch, rank_paiute_batch
from evaluator.paiute import Valuation
from evaluator.servicer import MAX_MESSAGE_BYTES, EvaluatorServicer, decoder
from evaluator.telemetry import Telemetry

T = TypeVar("T")
# what a server answers: the evaluator's service by default (a benchmark swaps in its own)
Handlers = Callable[[Telemetry], grpc.GenericRpcHandler]
SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Evaluator"].full_name


@dataclass(frozen=True)
class TlsFiles:
    """PEM files for TLS; with `client_ca`, clients must present a certificate it signed."""

    certificate: str
    private_key: str
    client_ca: str | None = None


def warm_up() -> None:
    """Build the lookup tables before reporting SERVING, so no caller waits for them."""
    rank_guts_batch(np.array([[0, 4]], dtype=np.uint8), 2)
    rank_guts_batch(np.array([[0, 4, 8]], dtype=np.uint8), 3)
    for size, valuation in itertools.product((5, 6), Valuation):
        rank_paiute_batch(np.arange(size, dtype=np.uint8).reshape(1, size), 2, valuation)


def _serialize(reply: Any) -> bytes:
    return bytes(reply.SerializeToString())


def evaluator_handlers(telemetry: Telemetry) -> grpc.GenericRpcHandler:
    """The evaluator's service, counting into `telemetry`."""
    return _handlers(EvaluatorServicer(telemetry))


def _handlers(servicer: EvaluatorServicer) -> grpc.GenericRpcHandler:
    def unary(method: Callable[..., Any], request: Any) -> grpc.RpcMethodHandler:
        return grpc.unary_unary_rpc_method_handler(
            method, request_deserializer=decoder(request), response_serializer=_serialize
        )

    methods = {
        # bytes in and out: the servicer parses what it must and serialises its replies
        "Evaluate": grpc.unary_unary_rpc_method_handler(servicer.Evaluate),
        "EvaluateStream": grpc.stream_stream_rpc_method_handler(servicer.EvaluateStream),
        "Showdown": unary(servicer.Showdown, pb.ShowdownRequest),
        "ShowdownBatch": unary(servicer.ShowdownBatch, pb.ShowdownBatchRequest),
        "Odds": unary(servicer.Odds, pb.OddsRequest),
        "Ping": unary(servicer.Ping, pb.PingRequest),
    }
    return grpc.method_handlers_generic_handler(SERVICE_NAME, methods)


def _read(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read()


def server_credentials(tls: TlsFiles) -> grpc.ServerCredentials:
    """TLS credentials, requiring client certificates when a client CA is given."""
    key_pair = [(_read(tls.private_key), _read(tls.certificate))]
    if tls.client_ca is None:
        return grpc.ssl_server_credentials(key_pair)
    return grpc.ssl_server_credentials(
        key_pair, root_certificates=_read(tls.client_ca), require_client_auth=True
    )


class EvaluatorServer:
    """A grpc.aio server running on its own event loop thread, driven synchronously.

    `start()` begins serving and reports SERVING; `stop(grace)` reports NOT_SERVING,
    lets calls in flight finish for up to `grace` seconds, and stops.

    With `health_address`, a second server answers the standard health service alone,
    in plaintext, from the same status: the kubelet's `grpc:` probes speak no TLS, so
    with TLS on they are pointed there. It serves nothing else, so the evaluator itself
    stays behind TLS (and client certificates, when required).
    """

    def __init__(
        self,
        address: str,
        workers: int,
        tls: TlsFiles | None,
        telemetry: Telemetry,
        health_address: str | None = None,
        reuse_port: bool = False,
        handlers: Handlers = evaluator_handlers,
    ) -> None:
        """Bind `address` (port 0 picks a free one); not yet serving. With `reuse_port`,
        other processes may serve the same port (`evaluator.processes`)."""
        self.telemetry = telemetry
        self._handlers = handlers
        self._options = [("grpc.so_reuseport", int(reuse_port))]
        self._loop = asyncio.new_event_loop()
        # Odds' Monte Carlo runs in these threads, off the event loop
        self._loop.set_default_executor(
            futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="evaluator")
        )
        self._thread = threading.Thread(
            target=self._loop.run_forever, name="evaluator-loop", daemon=True
        )
        self._thread.start()
        self.server, self.port, self.health = self._run(self._build(address, tls))
        self.health_server: grpc.aio.Server | None = None
        self.health_port: int | None = None
        if health_address is not None:
            self.health_server, self.health_port = self._run(self._build_health(health_address))

    def _run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop).result()

    async def _build(
        self, address: str, tls: TlsFiles | None
    ) -> tuple[grpc.aio.Server, int, health_aio.HealthServicer]:
        server = grpc.aio.server(
            options=[
                ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
                *self._options,
            ],
        )
        server.add_generic_rpc_handlers((self._handlers(self.telemetry),))
        health_servicer = health_aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
        reflection.enable_server_reflection(
            (SERVICE_NAME, reflection.SERVICE_NAME, health.SERVICE_NAME), server
        )
        if tls is None:
            port = server.add_insecure_port(address)
        else:
            port = server.add_secure_port(address, server_credentials(tls))
        if port == 0:
            raise OSError(f"cannot listen on {address}")
        return server, port, health_servicer

    async def _build_health(self, address: str) -> tuple[grpc.aio.Server, int]:
        server = grpc.aio.server(options=self._options)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        port = server.add_insecure_port(address)
        if port == 0:
            raise OSError(f"cannot listen on {address}")
        return server, port

    async def _start(self) -> None:
        await self.server.start()
        if self.health_server is not None:
            await self.health_server.start()
        for name in ("", SERVICE_NAME):
            await self.health.set(name, health_pb2.HealthCheckResponse.SERVING)

    async def _stop(self, grace: float) -> None:
        await self.health.enter_graceful_shutdown()
        await self.server.stop(grace)
        if self.health_server is not None:
            await self.health_server.stop(0)

    def start(self) -> None:
        """Start serving and report SERVING to health checks."""
        self._run(self._start())

    def stop(self, grace: float) -> None:
        """Report NOT_SERVING, let calls in flight finish for up to `grace` seconds, stop."""
        self._run(self._stop(grace))
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)


def create_server(
    address: str = "[::]:0",
    workers: int = 8,
    tls: TlsFiles | None = None,
    telemetry: Telemetry | None = None,
    health_address: str | None = None,
    reuse_port: bool = False,
    handlers: Handlers = evaluator_handlers,
) -> EvaluatorServer:
    """Build the server bound to `address` (port 0 picks a free one); not yet started.

    `health_address`: also answer health checks alone, in plaintext, there;
    `reuse_port`: share the ports with the other processes of `evaluator.processes`;
    `handlers`: the service it answers (the evaluator's unless a benchmark says otherwise).
    """
    return EvaluatorServer(
        address, workers, tls, telemetry or Telemetry(), health_address, reuse_port, handlers
    )
