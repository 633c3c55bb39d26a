"""Build the evaluator's gRPC server: the service, health checking and reflection."""

from __future__ import annotations

from collections.abc import Callable
from concurrent import futures
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from cardroom.evaluator.v1 import evaluator_pb2 as pb
from evaluator.servicer import MAX_MESSAGE_BYTES, EvaluatorServicer
from evaluator.telemetry import Telemetry

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["Evaluator"].full_name


@dataclass(frozen=True)
class TlsFiles:
    """PEM files for TLS; with `client_ca`, clients must present a certificate it signed."""

    certificate: str
    private_key: str
    client_ca: str | None = None


def _serialize(reply: Any) -> bytes:
    # the Evaluate handlers return bytes already serialised by evaluator.codec
    return reply if isinstance(reply, bytes) else bytes(reply.SerializeToString())


def _handlers(servicer: EvaluatorServicer) -> grpc.GenericRpcHandler:
    def unary(method: Callable[..., Any], request: Any) -> grpc.RpcMethodHandler:
        return grpc.unary_unary_rpc_method_handler(
            method, request_deserializer=request.FromString, response_serializer=_serialize
        )

    methods = {
        "Evaluate": unary(servicer.Evaluate, pb.EvaluateRequest),
        "EvaluateStream": grpc.stream_stream_rpc_method_handler(
            servicer.EvaluateStream,
            request_deserializer=pb.EvaluateRequest.FromString,
            response_serializer=_serialize,
        ),
        "Showdown": unary(servicer.Showdown, pb.ShowdownRequest),
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


@dataclass
class EvaluatorServer:
    """A started-or-not server, the port it bound and its health servicer."""

    server: grpc.Server
    port: int
    health: health.HealthServicer
    telemetry: Telemetry

    def start(self) -> None:
        """Start serving and report SERVING to health checks."""
        self.server.start()
        for name in ("", SERVICE_NAME):
            self.health.set(name, health_pb2.HealthCheckResponse.SERVING)

    def stop(self, grace: float) -> None:
        """Report NOT_SERVING, let calls in flight finish for up to `grace` seconds, stop."""
        self.health.enter_graceful_shutdown()
        self.server.stop(grace).wait()


def create_server(
    address: str = "[::]:0",
    workers: int = 8,
    tls: TlsFiles | None = None,
    telemetry: Telemetry | None = None,
) -> EvaluatorServer:
    """Build the server bound to `address` (port 0 picks a free one); not yet started."""
    telemetry = telemetry or Telemetry()
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=workers, thread_name_prefix="evaluator"),
        options=[
            ("grpc.max_receive_message_length", MAX_MESSAGE_BYTES),
            ("grpc.so_reuseport", 0),
        ],
    )
    server.add_generic_rpc_handlers((_handlers(EvaluatorServicer(telemetry)),))
    health_servicer = health.HealthServicer(experimental_non_blocking=True)
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
    return EvaluatorServer(server, port, health_servicer, telemetry)
