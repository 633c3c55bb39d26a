"""The gateway when the evaluator or Redis is away: what waits, what is refused, recovery."""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Iterator

import pytest

from api.app import create_app
from evaluator.server import EvaluatorServer, create_server
from tests.support.gateway import Gateway, gateway_settings
from tests.support.processes import RedisProcess, free_port


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


def _wait(predicate: Callable[[], bool], seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, "not within the time allowed"
        time.sleep(0.1)


def test_evaluator_down_keeps_the_move_and_the_clock_settles_once_back(
    redis_url: str, evaluators: Evaluators
) -> None:
    """The last declaration, made in time, stands: the showdown waits for the evaluator."""
    app = create_app(
        gateway_settings(redis_url, f"127.0.0.1:{evaluators.port}", evaluator_timeout=0.5)
    )
    gateway = Gateway(app, app.test_client())
    try:
        table_id = gateway.create(deal_pause_seconds=60, turn_seconds=2)
        alice, bob = gateway.sit(table_id, "alice"), gateway.sit(table_id, "bob")
        gateway.act(table_id, alice, action="start")
        gateway.act(table_id, alice, action="declare", choice="in")
        before = gateway.table(table_id)
        evaluators.stop()
        kept = gateway.act(table_id, bob, action="declare", choice="in")
        assert kept.status_code == 200, kept.get_json()
        table = kept.get_json()["table"]
        assert table["version"] == before["version"] + 1
        assert table["phase"] == "showdown"
        assert table["pending"]["action"] == "rank_hands"
        types = [e["type"] for e in kept.get_json()["events"]]
        assert "declarations_revealed" in types
        assert "showdown" not in types
        assert gateway.act(table_id, alice, action="start").get_json()["code"] == (
            "showdown_pending"
        )
        assert gateway.call("GET", "/readyz").status_code == 503
        time.sleep(2.5)  # the turn's deadline passes: nothing turns into a timeout
        assert gateway.table(table_id)["phase"] == "showdown"
        evaluators.start()
        _wait(lambda: gateway.table(table_id)["phase"] == "between_deals")
        events = gateway.call("GET", f"/v1/tables/{table_id}/events").get_json()["events"]
        assert [e["type"] for e in events].count("showdown") == 1
        assert not [e for e in events if e["type"] == "timeout"]
        declared = [e["data"]["seat"] for e in events if e["type"] == "declared"]
        assert declared == [alice.seat, bob.seat]
        stacks = [seat["stack"] for seat in gateway.table(table_id)["seats"].values()]
        assert sum(stacks) + gateway.table(table_id)["pot"] == 200
        assert gateway.call("GET", "/readyz").status_code == 200
    finally:
        app.extensions["cardroom.clock"].stop()


def test_a_paiute_call_without_the_evaluator_holds_the_turn_open(
    redis_url: str, evaluators: Evaluators
) -> None:
    """A call is accepted only once its cards are ranked: 503, but the turn is held open
    (the timer does not play it) so the caller can call again once the evaluator is back."""
    app = create_app(
        gateway_settings(redis_url, f"127.0.0.1:{evaluators.port}", evaluator_timeout=0.5)
    )
    gateway = Gateway(app, app.test_client())
    try:
        table_id = gateway.create(game="paiute", turn_seconds=2)
        alice, bob = gateway.sit(table_id, "alice"), gateway.sit(table_id, "bob")
        gateway.act(table_id, alice, action="start")
        first = alice if gateway.table(table_id)["pending"]["seats"] == [alice.seat] else bob
        drew = gateway.act(table_id, first, action="draw", source="stock")
        assert drew.status_code == 200, drew.get_json()
        held = drew.get_json()["table"]["you"]["cards"]
        before = gateway.table(table_id)
        evaluators.stop()
        # a call the rules refuse is refused as ever, evaluator or not
        other = next(c for c in ("2c", "3c", "4c", "5c", "6c", "7c", "8c") if c not in held)
        wrong = gateway.act(table_id, first, action="call", cards=held[:5], discard=other)
        assert wrong.status_code in (409, 422)
        assert wrong.get_json()["code"] == "cards_not_held"
        etag = {"If-Match": f'"{before["version"]}"'}
        call = {"action": "call", "cards": held[:5], "discard": held[5]}
        refused = gateway.call(
            "POST", f"/v1/tables/{table_id}/actions", first, json=call, headers=etag
        )
        assert refused.status_code == 503
        assert refused.mimetype == "application/problem+json"
        assert refused.get_json()["code"] == "evaluator_unavailable"
        assert "held open" in refused.get_json()["detail"]
        assert int(refused.headers["Retry-After"]) >= 1
        table = gateway.table(table_id, first)
        assert table["version"] == before["version"] + 1
        assert table["you"]["cards"] == held  # nothing but the deadline changed
        assert table["deadline"] >= before["deadline"] + 10
        events = gateway.call("GET", f"/v1/tables/{table_id}/events").get_json()["events"]
        assert events[-1]["type"] == "turn_held"
        assert events[-1]["data"] == {
            "seat": first.seat,
            "deadline": table["deadline"],
            "reason": "evaluator_unavailable",
        }
        time.sleep(2.5)  # the turn's first deadline passes: the turn is still open
        assert gateway.table(table_id)["pending"]["seats"] == [first.seat]
        evaluators.start()
        answers = []

        other_seat = bob if first is alice else alice
        stale = gateway.call(
            "POST", f"/v1/tables/{table_id}/actions", other_seat, json=call, headers=etag
        )
        assert stale.get_json()["code"] == "stale_version"  # the hold is the caller's only

        def call_again() -> bool:  # as a client does after Retry-After, while gRPC reconnects
            # with the If-Match from before the hold: the hold moved only the deadline
            answers.append(
                gateway.call(
                    "POST", f"/v1/tables/{table_id}/actions", first, json=call, headers=etag
                )
            )
            return bool(answers[-1].status_code != 503)

        _wait(call_again)
        again = answers[-1]
        assert again.status_code == 200 or again.get_json()["code"] == "no_combination"
        events = gateway.call("GET", f"/v1/tables/{table_id}/events").get_json()["events"]
        assert not [e for e in events if e["type"] == "timeout"]
    finally:
        app.extensions["cardroom.clock"].stop()
        app.extensions["cardroom.service"].evaluator.close()


def test_an_evaluator_that_does_not_answer_in_time_is_503_and_a_showdown_waits(
    redis_url: str,
) -> None:
    """A listener that never speaks gRPC: every call runs out its EVALUATOR_TIMEOUT."""
    with socket.create_server(("127.0.0.1", 0)) as silent:
        port = silent.getsockname()[1]
        app = create_app(
            gateway_settings(redis_url, f"127.0.0.1:{port}", evaluator_timeout=0.3, clock=False)
        )
        gateway = Gateway(app, app.test_client())
        try:
            late = gateway.call(
                "POST", "/v1/evaluate", json={"game": "guts3", "hands": ["Ah Kd Qc"]}
            )
            assert late.status_code == 503
            assert late.get_json()["code"] == "evaluator_unavailable"
            assert "did not answer within 0.3 s" in late.get_json()["detail"]
            assert int(late.headers["Retry-After"]) >= 1
            assert gateway.call("GET", "/readyz").status_code == 503
            table_id = gateway.create(deal_pause_seconds=60)
            alice, bob = gateway.sit(table_id, "alice"), gateway.sit(table_id, "bob")
            gateway.act(table_id, alice, action="start")
            gateway.act(table_id, alice, action="declare", choice="in")
            kept = gateway.act(table_id, bob, action="declare", choice="in")
            assert kept.status_code == 200, kept.get_json()
            assert kept.get_json()["table"]["phase"] == "showdown"
        finally:
            app.extensions["cardroom.service"].evaluator.close()


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
        # the deadline passes while the evaluator is away: bob's timeout is applied and
        # alice's lone "in" against the ghost waits to be ranked
        _wait(lambda: gateway.table(table_id)["phase"] == "showdown")
        evaluators.start()
        _wait(lambda: gateway.table(table_id)["phase"] == "between_deals")
        events = gateway.call("GET", f"/v1/tables/{table_id}/events").get_json()["events"]
        assert [e["type"] for e in events].count("timeout") == 1
        assert [e["type"] for e in events].count("showdown") == 1
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
