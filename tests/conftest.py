"""Shared fixtures: real servers on free loopback ports, started and stopped by the tests."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import grpc
import pytest

from cardroom.evaluator.v1 import evaluator_pb2_grpc as pb_grpc

if TYPE_CHECKING:
    from evaluator.server import EvaluatorServer


@pytest.fixture(scope="session")
def evaluator_server() -> Iterator[EvaluatorServer]:
    """The real evaluator, serving on a free loopback port for the whole session."""
    from evaluator.server import create_server

    server = create_server("127.0.0.1:0", workers=8)
    server.start()
    yield server
    server.stop(grace=1)


@pytest.fixture(scope="session")
def evaluator_address(evaluator_server: EvaluatorServer) -> str:
    """host:port of the session's evaluator."""
    return f"127.0.0.1:{evaluator_server.port}"


@pytest.fixture
def evaluator_stub(evaluator_address: str) -> Iterator[pb_grpc.EvaluatorStub]:
    """A client stub on a fresh channel to the session's evaluator."""
    with grpc.insecure_channel(evaluator_address) as channel:
        yield pb_grpc.EvaluatorStub(channel)
