"""CORS (`api.http.cors`): preflights, and the headers of every answer to an allowed page.

The step runs before authentication, so a preflight needs no credential and a refusal
(problem+json) is readable by an allowed page, for the moves below Flask and Flask's
routes alike.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from api.http.cors import ALLOW_HEADERS, EXPOSE_HEADERS
from tests.support.gateway import Gateway, close_app, make_app

APP = "https://app.example"
OTHER = "https://other.example"
PREFLIGHT = {
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "authorization, content-type, idempotency-key",
}


@pytest.fixture
def cors_gateway(redis_url: str, evaluator_address: str) -> Iterator[Gateway]:
    """A gateway whose CORS_ORIGINS is APP alone."""
    app = make_app(redis_url, evaluator_address, cors_origins=(APP,))
    yield Gateway(app, app.test_client())
    close_app(app)


def vary(response: Any) -> set[str]:
    """The header names an answer's Vary lists, across every Vary header it has."""
    return {
        name.strip()
        for value in response.headers.get_all("Vary")
        for name in value.split(",")
        if name.strip()
    }


def allow_headers(response: object) -> dict[str, str]:
    """The Access-Control-Allow-* headers of an answer."""
    headers = response.headers  # type: ignore[attr-defined]
    return {name: value for name, value in headers.items() if name.startswith("Access-Control")}


def test_a_preflight_from_an_allowed_origin_is_answered_without_a_credential(
    cors_gateway: Gateway,
) -> None:
    table_id = cors_gateway.create(deal_pause_seconds=60)
    for path in (f"/v1/tables/{table_id}/actions", "/v1/tables", f"/v1/tables/{table_id}/seats"):
        response = cors_gateway.call("OPTIONS", path, headers={"Origin": APP, **PREFLIGHT})
        assert response.status_code == 204, path
        assert response.get_data() == b""
        assert allow_headers(response) == {
            "Access-Control-Allow-Origin": APP,
            "Access-Control-Allow-Methods": "GET, HEAD, POST, DELETE",
            "Access-Control-Allow-Headers": ALLOW_HEADERS,
            "Access-Control-Max-Age": "600",
        }, path
        assert "Origin" in vary(response)
        assert "Access-Control-Allow-Credentials" not in response.headers
    for name in ("Authorization", "Idempotency-Key", "If-Match", "Prefer", "Last-Event-ID"):
        assert name in ALLOW_HEADERS


def test_a_preflight_from_another_origin_gets_no_allow_header(cors_gateway: Gateway) -> None:
    table_id = cors_gateway.create(deal_pause_seconds=60)
    response = cors_gateway.call(
        "OPTIONS", f"/v1/tables/{table_id}/actions", headers={"Origin": OTHER, **PREFLIGHT}
    )
    assert response.status_code == 204
    assert allow_headers(response) == {}
    assert "Origin" in vary(response)


def test_answers_to_an_allowed_page_name_its_origin_and_expose_the_headers_it_reads(
    cors_gateway: Gateway,
) -> None:
    table_id = cors_gateway.create(deal_pause_seconds=60)
    ann = cors_gateway.sit(table_id, "ann")
    cors_gateway.sit(table_id, "bo")
    origin = {"Origin": APP}
    answers = {
        "move": cors_gateway.call(
            "POST", f"/v1/tables/{table_id}/actions", ann, json={"action": "start"}, headers=origin
        ),
        "read": cors_gateway.call("GET", f"/v1/tables/{table_id}", headers=origin),
        "refused move": cors_gateway.call(
            "POST", f"/v1/tables/{table_id}/actions", json={"action": "start"}, headers=origin
        ),
        "refused write": cors_gateway.call(
            "POST",
            "/v1/tables",
            json={"game": "guts"},
            headers={**origin, "Authorization": "Bearer not-a-key"},
        ),
        "no route": cors_gateway.call("GET", "/nowhere", headers=origin),
        "stream": cors_gateway.call(
            "GET", f"/v1/tables/{table_id}/events/stream", headers=origin, buffered=False
        ),
    }
    statuses = {name: response.status_code for name, response in answers.items()}
    assert statuses == {
        "move": 200,
        "read": 200,
        "refused move": 401,
        "refused write": 401,
        "no route": 404,
        "stream": 200,
    }
    assert answers["refused move"].mimetype == "application/problem+json"
    assert "WWW-Authenticate" in answers["refused write"].headers
    assert answers["stream"].mimetype == "text/event-stream"
    for name, response in answers.items():
        assert response.headers.get("Access-Control-Allow-Origin") == APP, name
        assert response.headers.get("Access-Control-Expose-Headers") == EXPOSE_HEADERS, name
        assert "Origin" in vary(response), name
        assert "Access-Control-Allow-Credentials" not in response.headers, name
    answers["stream"].close()
    exposed = EXPOSE_HEADERS.split(", ")
    for name in ("ETag", "Location", "Retry-After", "Idempotent-Replayed", "WWW-Authenticate"):
        assert name in exposed
    assert "Preference-Applied" in exposed
    assert [name for name in exposed if name.startswith("RateLimit-")]


def test_answers_to_another_origin_carry_no_allow_header(cors_gateway: Gateway) -> None:
    table_id = cors_gateway.create(deal_pause_seconds=60)
    for response in (
        cors_gateway.call("GET", f"/v1/tables/{table_id}", headers={"Origin": OTHER}),
        cors_gateway.call(
            "POST",
            f"/v1/tables/{table_id}/actions",
            json={"action": "start"},
            headers={"Origin": OTHER},
        ),
    ):
        assert allow_headers(response) == {}
        assert "Origin" in vary(response)


def test_the_gateways_own_origin_is_always_allowed(gateway: Gateway) -> None:
    own = "http://localhost"  # the test client's Host
    response = gateway.call("OPTIONS", "/v1/tables", headers={"Origin": own, **PREFLIGHT})
    assert response.status_code == 204
    assert response.headers.get("Access-Control-Allow-Origin") == own
    refused = gateway.call("OPTIONS", "/v1/tables", headers={"Origin": APP, **PREFLIGHT})
    assert allow_headers(refused) == {}


def test_an_options_request_that_is_no_preflight_goes_on_to_its_route(
    cors_gateway: Gateway,
) -> None:
    response = cors_gateway.call("OPTIONS", "/v1/tables", headers={"Origin": APP})
    assert response.status_code == 200
    assert "POST" in response.headers["Allow"]
    assert response.headers.get("Access-Control-Allow-Origin") == APP


def test_any_origin_when_the_operator_says_so(redis_url: str, evaluator_address: str) -> None:
    app = make_app(redis_url, evaluator_address, cors_origins=("*",))
    try:
        gateway = Gateway(app, app.test_client())
        preflight = gateway.call("OPTIONS", "/v1/tables", headers={"Origin": OTHER, **PREFLIGHT})
        assert preflight.headers.get("Access-Control-Allow-Origin") == "*"
        read = gateway.call("GET", "/v1/tables", headers={"Origin": OTHER})
        assert read.headers.get("Access-Control-Allow-Origin") == "*"
        assert "Access-Control-Allow-Credentials" not in read.headers
    finally:
        close_app(app)


def test_a_rate_limited_page_reads_its_refusal_and_when_to_retry(
    redis_url: str, evaluator_address: str
) -> None:
    app = make_app(
        redis_url,
        evaluator_address,
        cors_origins=(APP,),
        rate_limit_per_address=2,
        rate_limit_per_token=0,
        rate_limit_window=3600,
    )
    try:
        client = app.test_client()
        # an address of its own, so no other test's requests share its bucket
        address = {"REMOTE_ADDR": f"2001:db8:{uuid.uuid4().hex[:4]}::1"}
        answers = [
            client.get("/v1/tables", headers={"Origin": APP}, environ_overrides=address)
            for _ in range(3)
        ]
        assert [answer.status_code for answer in answers] == [200, 200, 429]
        refused = answers[-1]
        assert refused.get_json()["code"] == "rate_limited"
        assert refused.headers["Access-Control-Allow-Origin"] == APP
        exposed = refused.headers["Access-Control-Expose-Headers"].split(", ")
        assert "Retry-After" in refused.headers
        assert "Retry-After" in exposed
        limits = [name for name, _ in refused.headers.items() if name.startswith("RateLimit-")]
        assert limits
        assert all(name in exposed for name in limits)
        # a preflight is answered before the limits: it still goes through
        preflight = client.options(
            "/v1/tables", headers={"Origin": APP, **PREFLIGHT}, environ_overrides=address
        )
        assert preflight.status_code == 204
    finally:
        close_app(app)
