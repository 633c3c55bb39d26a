"""The request pipeline (`api.http.pipeline`): one path for moves and every other route.

A step added to the pipeline sees every request before its endpoint and every answer
after it, whichever endpoint answers: the moves' endpoint below Flask, a Flask view, a
refusal from a step or a route that does not exist.
"""

from __future__ import annotations

from api.http.pipeline import Exchange, Headers, Pipeline
from tests.support.gateway import Gateway


class Recorder:
    """A step that notes each request it saw and marks each answer with a header."""

    def __init__(self) -> None:
        self.seen: list[tuple[str, str, str]] = []

    def before(self, exchange: Exchange) -> None:
        self.seen.append((exchange.method, exchange.path, "before"))

    def after(self, exchange: Exchange, status: int, headers: Headers) -> None:
        self.seen.append((exchange.method, exchange.path, f"after {status}"))
        headers.append(("X-Step", "seen"))


def test_a_step_added_to_the_pipeline_applies_to_moves_and_every_other_route(
    gateway: Gateway,
) -> None:
    pipeline = gateway.app.extensions["cardroom.pipeline"]
    assert isinstance(pipeline, Pipeline)
    table_id = gateway.create(deal_pause_seconds=60)
    ann = gateway.sit(table_id, "ann")
    gateway.sit(table_id, "bo")
    recorder = Recorder()
    pipeline.steps.append(recorder)
    answers = {
        "move": gateway.call(
            "POST", f"/v1/tables/{table_id}/actions", ann, json={"action": "start"}
        ),
        "read": gateway.call("GET", f"/v1/tables/{table_id}"),
        "refused move": gateway.call(
            "POST", f"/v1/tables/{table_id}/actions", None, json={"action": "start"}
        ),
        "no route": gateway.call("GET", "/nowhere"),
        "health": gateway.call("GET", "/healthz"),
    }
    statuses = {name: response.status_code for name, response in answers.items()}
    assert statuses == {
        "move": 200,
        "read": 200,
        "refused move": 401,
        "no route": 404,
        "health": 200,
    }
    for name, response in answers.items():
        assert response.headers.get("X-Step") == "seen", name
    paths = [(method, path) for method, path, when in recorder.seen if when == "before"]
    assert paths.count(("POST", f"/v1/tables/{table_id}/actions")) == 2
    assert ("GET", f"/v1/tables/{table_id}") in paths
    assert ("GET", "/nowhere") in paths
    afters = [when for _, _, when in recorder.seen if when != "before"]
    assert sorted(afters) == sorted(f"after {status}" for status in statuses.values())


def test_a_refusing_step_refuses_moves_and_other_routes_alike(gateway: Gateway) -> None:
    class Closed:
        def before(self, exchange: Exchange) -> None:
            from api.errors import problem

            raise problem("rate_limited", "Closed for the test.")

        def after(self, exchange: Exchange, status: int, headers: Headers) -> None:
            pass

    table_id = gateway.create(deal_pause_seconds=60)
    ann = gateway.sit(table_id, "ann")
    gateway.app.extensions["cardroom.pipeline"].steps.append(Closed())
    move = gateway.call("POST", f"/v1/tables/{table_id}/actions", ann, json={"action": "start"})
    read = gateway.call("GET", f"/v1/tables/{table_id}")
    for response in (move, read):
        assert response.status_code == 429
        assert response.content_type == "application/problem+json"
        assert response.get_json()["code"] == "rate_limited"
