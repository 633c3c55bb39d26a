"""The gateway when the evaluator or Redis is away: 503, nothing changed, and recovery."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from api import create_app
from evaluator.server import EvaluatorServer, create_server
from tests.conftest import RedisProcess, free_port
from tests.integration.conftest import Gateway, gateway_settings


class Evaluators:
    """An evaluator on a fixed port that a test can stop and start again."""

    def __init__(self) -> None:
        self.port = free_port()
        self.server: EvaluatorServer | None = None

    def start(self) -> None:
        self.server = create_server(f"127.0.0.1:{self.port}")
        self.server.start()

    def stop(self) -> None:
        if self.server is not None:
            self.server.stop(grace=0)
            self.server = None


@pytest.fixture
def evaluators() -> Iterator[Evaluators]:
    controlled = Evaluators()
    controlled.start()
    yield controlled
    controlled.stop()


def test_evaluator_down_refuses_the_showdown_and_it_completes_once_back(
    redis_url: str, evaluators: Evaluators
) -> None:
    app = create_app(
        gateway_settings(redis_url, f"127.0.0.1:{evaluators.port}", evaluator_timeout=0.5)
    )
    gateway = Gateway(app, app.test_client())
    try:
        table_id = gateway.create(deal_pause_seconds=60)
        alice, bob = gateway.sit(table_id, "alice"), gateway.sit(table_id, "bob")
        gateway.act(table_id, alice, action="start")
        gateway.act(table_id, alice, action="declare", choice="in")
        before = gateway.table(table_id)
        evaluators.stop()
        refused = gateway.act(table_id, bob, action="declare", choice="in")
        assert refused.status_code == 503
        assert refused.mimetype == "application/problem+json"
        assert refused.get_json()["code"] == "evaluator_unavailable"
        assert int(refused.headers["Retry-After"]) >= 1
        assert gateway.table(table_id)["version"] == before["version"]
        ready = gateway.call("GET", "/readyz")
        assert ready.status_code == 503
        evaluators.start()
        deadline = time.monotonic() + 10
        while True:
            retried = gateway.act(table_id, bob, action="declare", choice="in")
            if retried.status_code == 200 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert retried.status_code == 200, retried.get_json()
        assert gateway.table(table_id)["phase"] == "between_deals"
        assert gateway.call("GET", "/readyz").status_code == 200
    finally:
        app.extensions["cardroom.clock"].stop()


def test_a_deadline_showdown_waits_for_the_evaluator(
    redis_url: str, evaluators: Evaluators
) -> None:
    app = create_app(
        gateway_settings(redis_url, f"127.0.0.1:{evaluators.port}", evaluator_timeout=0.3)
    )
    gateway = Gateway(app, app.test_client())
    try:
        table_id = gateway.create(deal_pause_seconds=60, turn_seconds=1, ghost=True)
        alice, _ = gateway.sit(table_id, "alice"), gateway.sit(table_id, "bob")
        gateway.act(table_id, alice, action="start")
        gateway.act(table_id, alice, action="declare", choice="in")
        evaluators.stop()
        time.sleep(1.6)  # the deadline passes while the evaluator is away
        assert gateway.table(table_id)["phase"] == "declaring"
        evaluators.start()
        deadline = time.monotonic() + 10
        while gateway.table(table_id)["phase"] == "declaring":
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert gateway.table(table_id)["phase"] == "between_deals"
    finally:
        app.extensions["cardroom.clock"].stop()


def test_redis_down_is_a_503_and_nothing_is_lost(tmp_path: object, evaluator_address: str) -> None:
    server = RedisProcess(str(tmp_path))
    server.start()
    app = create_app(gateway_settings(server.url, evaluator_address, clock=False))
    gateway = Gateway(app, app.test_client())
    table_id = gateway.create()
    gateway.sit(table_id, "alice")
    server.stop()
    try:
        response = gateway.call("GET", f"/v1/tables/{table_id}")
        assert response.status_code == 503
        assert response.get_json()["code"] == "store_unavailable"
        assert gateway.call("GET", "/readyz").status_code == 503
        assert gateway.call("GET", "/healthz").status_code == 200
    finally:
        server.start()
    # a fresh server holds nothing (it keeps no data); the gateway serves again at once
    assert gateway.call("GET", f"/v1/tables/{table_id}").status_code == 404
    assert gateway.call("GET", "/readyz").status_code == 200
    server.stop()
