"""Fixtures of the integration tests: a gateway in process, a Redis Cluster."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.gateway import Gateway, close_app, make_app
from tests.support.processes import RedisCluster


@pytest.fixture
def gateway(redis_url: str, evaluator_address: str) -> Iterator[Gateway]:
    """A gateway app with its clock running, on the session's Redis and evaluator."""
    app = make_app(redis_url, evaluator_address)
    yield Gateway(app, app.test_client())
    close_app(app)


@pytest.fixture(scope="module")
def redis_cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real Redis Cluster of three masters on loopback; its first node's URL."""
    cluster = RedisCluster(tmp_path_factory.mktemp("cluster"))
    try:
        cluster.start()
        yield cluster.url
    finally:
        cluster.stop()
