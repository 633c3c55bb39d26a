"""The moves' endpoint (`api.http.moves`): answered below Flask, as Flask would answer.

The table tests play every move through it; these check the seams: which requests it
takes and which go on to Flask, failures, metrics and bodies sent in chunks.
"""

from __future__ import annotations

import io
import logging
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from werkzeug.exceptions import HTTPException
from werkzeug.routing import RequestRedirect
from werkzeug.test import EnvironBuilder, run_wsgi_app

from api.http.moves import ROUTE, move_path
from api.http.steps import MAX_BODY_BYTES
from api.telemetry import REGISTRY
from tests.support.gateway import Gateway
from tests.support.play import seated
from tests.support.problems import PROBLEM, assert_problem

PIECES = ["/", "//", "v1", "tables", "actions", "seats", "t1", "é", "%41", " ", ".", "1"]


def _wsgi(path: str) -> str:
    """A request path as a WSGI server puts it in PATH_INFO (UTF-8 bytes as latin-1)."""
    return path.encode().decode("latin-1")


# the gateway's routing is only read, never changed, so one app serves every example
@settings(max_examples=400, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.sampled_from(PIECES), max_size=9).map("".join)
    | st.builds(lambda t: f"/v1/tables/{t}/actions", st.text(min_size=1, max_size=8))
)
def test_the_endpoint_takes_exactly_the_posts_flasks_rule_would_route_to_it(
    gateway: Gateway, path: str
) -> None:
    """Flask keeps the rule with no view: no POST it would route there may reach it."""
    adapter = gateway.app.url_map.bind("localhost")
    try:
        endpoint, args = adapter.match(path, method="POST")
    except RequestRedirect:
        endpoint, args = "redirect", {}
    except HTTPException:
        endpoint, args = "refused", {}
    taken = move_path(_wsgi(path))
    if endpoint == "tables.act":
        assert taken is not None, path
        assert taken[1] == args["table_id"]
    else:
        assert taken is None, (path, endpoint)


def _raw(gateway: Gateway, environ: dict[str, Any]) -> tuple[int, dict[str, str], bytes]:
    body, status, headers = run_wsgi_app(gateway.app, environ)
    data = b"".join(body)
    return int(status.split()[0]), dict(headers), data


def _environ(
    path: str, token: str, body: bytes, extra: dict[str, str] | None = None
) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    headers.update(extra or {})
    environ: dict[str, Any] = EnvironBuilder(
        path=path,
        method="POST",
        headers=list(headers.items()),
        input_stream=io.BytesIO(body),
    ).get_environ()
    return environ


def test_paths_and_methods_are_routed_as_before(gateway: Gateway) -> None:
    table_id, ann, _ = seated(gateway)
    path = f"/v1/tables/{table_id}/actions"
    # leading slashes are one, as in werkzeug's routing; a lower-case method is POST
    environ = _environ(path, ann.token, b'{"action": "start"}')
    environ["PATH_INFO"] = "//" + path.lstrip("/")
    environ["REQUEST_METHOD"] = "post"
    status, headers, _ = _raw(gateway, environ)
    assert status == 200
    assert headers["ETag"] == '"4"'
    # the other methods are Flask's: 405 with Allow, and OPTIONS
    for method in ("GET", "PUT", "DELETE", "PATCH"):
        response = gateway.call(method, path, ann)
        assert_problem(response, 405, "method_not_allowed")
        assert response.headers["Allow"] == "OPTIONS, POST"
    response = gateway.call("OPTIONS", path)
    assert response.status_code == 200
    assert sorted(response.headers["Allow"].split(", ")) == ["OPTIONS", "POST"]
    # a trailing slash is no route; slashes inside are merged by a redirect
    assert_problem(gateway.call("POST", path + "/", ann, json={}), 404, "route_not_found")
    response = gateway.call("POST", path.replace("/actions", "//actions"), ann, json={})
    assert response.status_code == 308
    assert response.headers["Location"].endswith(path)
    # a table id is read as UTF-8, in the answer too
    response = gateway.call("POST", "/v1/tables/t%C3%A9/actions", ann, json={"action": "start"})
    assert_problem(response, 404, "table_not_found")
    assert response.get_json()["instance"] == "/v1/tables/té/actions"


def test_an_unexpected_failure_is_a_logged_500_problem(
    gateway: Gateway, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    table_id, ann, _ = seated(gateway)
    service = gateway.app.extensions["cardroom.service"]

    def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("a bug")

    monkeypatch.setattr(service, "act", broken)
    with caplog.at_level(logging.ERROR, logger="api.errors"):
        response = gateway.act(table_id, ann, action="start")
    assert_problem(response, 500, "internal_error")
    assert "a bug" not in response.get_data(as_text=True)
    assert any(record.exc_info and "a bug" in str(record.exc_info[1]) for record in caplog.records)


def _count(status: str) -> float:
    labels = {"method": "POST", "route": ROUTE, "status": status}
    return REGISTRY.get_sample_value("cardroom_http_requests_total", labels) or 0.0


def _timed() -> float:
    labels = {"method": "POST", "route": ROUTE}
    return REGISTRY.get_sample_value("cardroom_http_request_seconds_count", labels) or 0.0


def test_moves_are_counted_and_timed_under_their_route(gateway: Gateway) -> None:
    table_id, ann, _ = seated(gateway)
    ok, conflict, timed = _count("200"), _count("409"), _timed()
    assert gateway.act(table_id, ann, action="start").status_code == 200
    assert gateway.act(table_id, ann, action="start").status_code == 409
    assert (_count("200"), _count("409"), _timed()) == (ok + 1, conflict + 1, timed + 2)
    metrics = gateway.call("GET", "/metrics").get_data(as_text=True)
    assert f'route="{ROUTE}",status="200"' in metrics


def _chunked(path: str, token: str, body: bytes) -> dict[str, Any]:
    environ = _environ(path, token, body, {"Transfer-Encoding": "chunked"})
    environ.pop("CONTENT_LENGTH", None)
    environ["wsgi.input_terminated"] = True  # as gunicorn says of a chunked body
    return environ


def test_a_chunked_body_is_read_whole_and_refused_past_the_limit(gateway: Gateway) -> None:
    table_id, ann, _ = seated(gateway)
    path = f"/v1/tables/{table_id}/actions"
    padded = b'{"action": "start"' + b" " * MAX_BODY_BYTES + b"}"
    status, headers, data = _raw(gateway, _chunked(path, ann.token, padded))
    assert status == 413
    assert headers["Content-Type"] == PROBLEM
    assert b"body_too_large" in data
    status, _, _ = _raw(gateway, _chunked(path, ann.token, b'{"action": "start"}'))
    assert status == 200
