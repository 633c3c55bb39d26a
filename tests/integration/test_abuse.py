"""The gateway under abuse: rate limits, oversized and malformed requests, stolen tokens.

Each refusal is checked for its status, its problem+json body (stable `code`, the
`field` to blame) and for leaving Redis exactly as it was. The rate limits are checked
in-process (two apps on one Redis share a bucket) and through gunicorn with two
workers, where the limit holds for the workers together; oversized chunked bodies are
sent to gunicorn over a raw socket.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, cast

import pytest
import redis
import redis.cluster
from flask import Flask

from api.http.limits import bucket_address, client_address
from tests.support.gateway import Gateway, close_app
from tests.support.gateway import make_app as support_make_app
from tests.support.play import seated
from tests.support.problems import PROBLEM, assert_problem
from tests.support.processes import Gunicorn, RedisProcess
from tests.support.tables_api import Account, Player

MAX_BODY = 256 * 1024


# ----------------------------------------------------------------- helpers


def make_app(redis_url: str, evaluator_address: str, **overrides: Any) -> Flask:
    """A gateway app without a clock (nothing changes Redis unless a request does)."""
    return support_make_app(redis_url, evaluator_address, **{"clock": False, **overrides})


@pytest.fixture
def app_factory(redis_url: str, evaluator_address: str) -> Iterator[Callable[..., Flask]]:
    """Build gateway apps with overridden settings on the test's Redis; closed afterwards."""
    built: list[Flask] = []

    def build(**overrides: Any) -> Flask:
        app = make_app(redis_url, evaluator_address, **overrides)
        built.append(app)
        return app

    yield build
    for app in built:
        close_app(app)


@pytest.fixture
def unlimited(app_factory: Callable[..., Flask]) -> Gateway:
    """A gateway with the rate limits off, for the malformed-request checks."""
    app = app_factory(rate_limit_per_address=0, rate_limit_per_token=0)
    return Gateway(app, app.test_client())


def snapshot(redis_url: str) -> dict[str, Any]:
    """Every key of the store (the rate-limit buckets aside) and its serialized value."""
    client = redis.Redis.from_url(redis_url)
    every = cast(list[bytes], client.keys("*"))
    keys = sorted(k for k in every if not k.startswith(b"ratelimit:"))
    return {key.decode(): client.dump(key) for key in keys}


def assert_rate_limited(response: Any) -> None:
    """A 429 rate_limited with a usable Retry-After and the RateLimit headers."""
    assert_problem(response, 429, "rate_limited")
    retry = response.headers["Retry-After"]
    assert retry.isdigit()
    assert int(retry) >= 1
    assert int(response.headers["RateLimit-Limit"]) >= 1
    assert response.headers["RateLimit-Remaining"] == "0"
    assert int(response.headers["RateLimit-Reset"]) >= 1


def poll(condition: Callable[[], bool], seconds: float = 60.0) -> bool:
    """Wait until `condition()` holds, at most `seconds`; whether it did."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


# ----------------------------------------------------------------- the client address


def test_the_client_address_trusts_only_the_configured_proxy_hops() -> None:
    assert client_address("10.0.0.1", "6.6.6.6", 0) == "10.0.0.1"
    assert client_address("10.0.0.1", None, 1) == "10.0.0.1"
    assert client_address("10.0.0.1", "1.2.3.4", 1) == "1.2.3.4"
    # The client may send its own X-Forwarded-For; only the proxy's hop counts.
    assert client_address("10.0.0.1", "6.6.6.6, 1.2.3.4", 1) == "1.2.3.4"
    assert client_address("10.0.0.2", "6.6.6.6, 1.2.3.4, 10.0.0.1", 2) == "1.2.3.4"
    # Fewer hops than proxies: the header is not what the proxies wrote.
    assert client_address("10.0.0.1", "1.2.3.4", 2) == "10.0.0.1"
    assert client_address(None, None, 0) == bucket_address("unknown")


def test_addresses_are_counted_in_a_normal_form() -> None:
    assert bucket_address("2001:db8::1") == bucket_address("2001:db8:0:0:ffff::2")
    assert bucket_address("2001:db8::1") == "2001:db8::/64"
    assert bucket_address("2001:db8::1") != bucket_address("2001:db8:0:1::1")
    assert bucket_address("::ffff:192.0.2.7") == "192.0.2.7"
    assert bucket_address(" 192.0.2.7 ") == "192.0.2.7"
    forged = bucket_address("x" * 10_000)
    assert len(forged) == 32
    assert forged == bucket_address("x" * 10_000)


# ----------------------------------------------------------------- rate limits in-process


def test_the_address_limit_refuses_with_429_and_spares_health(
    app_factory: Callable[..., Flask],
) -> None:
    app = app_factory(rate_limit_per_address=5, rate_limit_per_token=0, rate_limit_window=3600)
    client = app.test_client()
    codes = [client.get("/v1/tables").status_code for _ in range(5)]
    assert codes == [200] * 5
    refused = client.get("/v1/tables")
    assert_rate_limited(refused)
    assert int(refused.headers["RateLimit-Limit"]) == 5
    assert refused.get_json()["subject"] == "client address"
    # Every route counts against the address, including a write...
    assert_rate_limited(client.post("/v1/tables", json={"game": "guts"}))
    # ...but orchestrators and scrapers always get through.
    for path in ("/healthz", "/readyz", "/metrics"):
        assert client.get(path).status_code == 200, path
    # Another address has its own bucket.
    other = client.get("/v1/tables", environ_base={"REMOTE_ADDR": "192.0.2.44"})
    assert other.status_code == 200


def test_the_token_limit_is_per_token(app_factory: Callable[..., Flask]) -> None:
    app = app_factory(rate_limit_per_address=0, rate_limit_per_token=3, rate_limit_window=3600)
    gateway = Gateway(app, app.test_client())
    table_id, ann, bo = seated(gateway)
    for _ in range(3):
        assert gateway.call("GET", f"/v1/tables/{table_id}", ann).status_code == 200
    refused = gateway.call("GET", f"/v1/tables/{table_id}", ann)
    assert_rate_limited(refused)
    assert refused.get_json()["subject"] == "seat token"
    refused_move = gateway.act(table_id, ann, action="start")
    assert_rate_limited(refused_move)
    assert gateway.table(table_id)["phase"] == "waiting"  # the refused move did nothing
    # Bo's token and spectators are not held back by Ann's bucket.
    assert gateway.call("GET", f"/v1/tables/{table_id}", bo).status_code == 200
    assert gateway.call("GET", f"/v1/tables/{table_id}").status_code == 200


def test_forwarded_for_is_honoured_only_behind_trusted_proxies(
    app_factory: Callable[..., Flask],
) -> None:
    direct = app_factory(rate_limit_per_address=2, rate_limit_per_token=0, rate_limit_window=3600)
    client = direct.test_client()
    # Without trusted proxies a client cannot escape its bucket by forging the header.
    codes = [
        client.get("/v1/tables", headers={"X-Forwarded-For": f"198.51.100.{i}"}).status_code
        for i in range(4)
    ]
    assert codes == [200, 200, 429, 429]

    proxied = app_factory(
        rate_limit_per_address=2, rate_limit_per_token=0, rate_limit_window=3600, trusted_proxies=1
    )
    client = proxied.test_client()
    proxy = {"REMOTE_ADDR": "10.9.9.9"}
    for i in range(4):
        # Behind one proxy every client has its own bucket, whatever it claims further left.
        headers = {"X-Forwarded-For": f"6.6.6.6, 203.0.113.{i}"}
        assert client.get("/v1/tables", headers=headers, environ_base=proxy).status_code == 200
    headers = {"X-Forwarded-For": "7.7.7.7, 203.0.113.200"}
    codes = [
        client.get("/v1/tables", headers=headers, environ_base=proxy).status_code for _ in range(3)
    ]
    assert codes == [200, 200, 429]


def test_two_gateways_share_one_bucket(app_factory: Callable[..., Flask]) -> None:
    limits = {"rate_limit_per_address": 6, "rate_limit_per_token": 0, "rate_limit_window": 3600}
    first = app_factory(**limits).test_client()
    second = app_factory(**limits).test_client()
    codes = [(first if i % 2 else second).get("/v1/tables").status_code for i in range(10)]
    assert codes == [200] * 6 + [429] * 4


def test_the_limits_hold_after_redis_lost_its_scripts(
    app_factory: Callable[..., Flask], redis_url: str
) -> None:
    limits = {"rate_limit_per_address": 4, "rate_limit_per_token": 0, "rate_limit_window": 3600}
    client = app_factory(**limits).test_client()
    codes = [client.get("/v1/tables").status_code for _ in range(2)]
    redis.Redis.from_url(redis_url).script_flush()  # as after a restart without its scripts
    codes += [client.get("/v1/tables").status_code for _ in range(4)]
    assert codes == [200] * 4 + [429] * 2


def test_a_refused_client_gets_back_in_after_retry_after(
    app_factory: Callable[..., Flask],
) -> None:
    app = app_factory(rate_limit_per_address=2, rate_limit_per_token=0, rate_limit_window=1)
    client = app.test_client()
    assert client.get("/v1/tables").status_code == 200
    assert client.get("/v1/tables").status_code == 200
    refused = client.get("/v1/tables")
    assert_rate_limited(refused)
    assert int(refused.headers["Retry-After"]) == 1
    assert poll(lambda: client.get("/v1/tables").status_code == 200)


def test_the_buckets_expire_and_carry_a_hash_tag(
    app_factory: Callable[..., Flask], redis_url: str
) -> None:
    app = app_factory(rate_limit_per_address=10, rate_limit_per_token=10, rate_limit_window=30)
    gateway = Gateway(app, app.test_client())
    table_id, ann, _ = seated(gateway)
    gateway.call("GET", f"/v1/tables/{table_id}", ann)
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    keys = cast(list[str], client.keys("ratelimit:*"))
    # the seat grants came with players' keys, the read with a seat token
    assert {key.split("{")[1].split(":")[0] for key in keys} == {"addr", "player", "seat"}
    for key in keys:
        assert key.count("{") == 1
        assert key.endswith("}")
        assert 0 < client.pttl(key) <= 30_000
    assert ann.token not in "".join(keys)  # the token is stored only as a digest


def test_the_limits_work_on_a_redis_cluster(redis_cluster: str, evaluator_address: str) -> None:
    app = make_app(
        redis_cluster,
        evaluator_address,
        redis_cluster=True,
        rate_limit_per_address=8,
        rate_limit_per_token=2,
        rate_limit_window=3600,
    )
    try:
        gateway = Gateway(app, app.test_client())
        table_id, ann, bo = seated(gateway)  # three requests from the address
        codes = [gateway.call("GET", f"/v1/tables/{table_id}", ann).status_code for _ in range(3)]
        assert codes == [200, 200, 429]
        codes = [gateway.call("GET", f"/v1/tables/{table_id}", bo).status_code for _ in range(2)]
        assert codes == [200, 200]  # the address's eighth request
        assert_rate_limited(gateway.call("GET", f"/v1/tables/{table_id}"))
        client = redis.cluster.RedisCluster.from_url(redis_cluster, decode_responses=True)
        keys = list(client.scan_iter("ratelimit:*"))
        # the test's address and the players' sign-up address, two seat tokens, three players
        assert len(keys) == 7
        assert len({client.keyslot(key) for key in keys}) == 7  # type: ignore[no-untyped-call]
        client.close()
    finally:
        close_app(app)


def test_without_redis_the_limiter_steps_aside(tmp_path: Any, evaluator_address: str) -> None:
    server = RedisProcess(str(tmp_path))
    server.start()
    app = make_app(server.url, evaluator_address, rate_limit_per_address=100)
    try:
        client = app.test_client()
        assert client.get("/v1/tables").status_code == 200
        server.stop()
        # No Redis: the evaluator still ranks hands, the store's routes say 503.
        ranked = client.post("/v1/evaluate", json={"game": "guts3", "hands": ["Ah Kh Qh"]})
        assert ranked.status_code == 200, ranked.get_json()
        assert_problem(client.get("/v1/tables"), 503, "store_unavailable")
        assert_problem(client.post("/v1/tables", json={"game": "guts"}), 503, "store_unavailable")
        assert client.get("/healthz").status_code == 200
    finally:
        server.stop()
        close_app(app)


# ----------------------------------------------------------------- body size


def test_oversized_bodies_are_413_everywhere_and_change_nothing(
    unlimited: Gateway, redis_url: str
) -> None:
    table_id, ann, _ = seated(unlimited)
    host = unlimited.sign_up()
    before = snapshot(redis_url)
    padding = " " * MAX_BODY
    oversized = ('{"game": "guts"' + padding + "}").encode()
    routes: list[tuple[str, str, Player | Account | None]] = [
        ("POST", "/v1/tables", host),
        ("POST", f"/v1/tables/{table_id}/seats", host),
        ("POST", f"/v1/tables/{table_id}/actions", ann),
        ("POST", "/v1/evaluate", None),
        ("DELETE", f"/v1/tables/{table_id}/seats/{ann.seat}", ann),
    ]
    for method, path, player in routes:
        response = unlimited.call(
            method,
            path,
            player,
            data=oversized,
            headers={"Content-Type": "application/json", "Idempotency-Key": "big-1"},
        )
        assert_problem(response, 413, "body_too_large")
    assert snapshot(redis_url) == before
    # Just under the limit is read, and refused for what it says instead.
    fits = ('{"game": "guts"' + " " * (MAX_BODY - 100) + "}").encode()
    response = unlimited.call(
        "POST", "/v1/evaluate", data=fits, headers={"Content-Type": "application/json"}
    )
    assert_problem(response, 422, "missing_field", "hands")


def test_evaluate_batches_are_bounded(unlimited: Gateway) -> None:
    hand = "Ah Kh Qh"
    assert (
        unlimited.call(
            "POST", "/v1/evaluate", json={"game": "guts3", "hands": [hand] * 1000}
        ).status_code
        == 200
    )
    for count in (1001, 10_001):
        response = unlimited.call(
            "POST", "/v1/evaluate", json={"game": "guts3", "hands": [hand] * count}
        )
        assert_problem(response, 422, "invalid_field", "hands")
        assert "1000" in response.get_json()["detail"]
    response = unlimited.call(
        "POST", "/v1/evaluate", json={"game": "guts3", "hands": [hand] * 40_000}
    )
    assert_problem(response, 413, "body_too_large")
    # Odds are bounded too: over HTTP a request costs the evaluator tenths of a second.
    odds: dict[str, Any] = {
        "game": "guts3",
        "odds": {"hand": "Ah Kd Qc", "opponents": 9, "samples": 200_001},
    }
    response = unlimited.call("POST", "/v1/evaluate", json=odds)
    assert_problem(response, 422, "invalid_field", "odds.samples")
    odds["odds"]["samples"] = 200_000
    assert unlimited.call("POST", "/v1/evaluate", json=odds).status_code == 200
    long_hand = {"game": "guts3", "hands": ["Ah " * 30]}
    assert_problem(
        unlimited.call("POST", "/v1/evaluate", json=long_hand), 422, "invalid_field", "hands[0]"
    )


# ----------------------------------------------------------------- malformed requests


def _raw(body: bytes, content_type: str = "application/json") -> dict[str, Any]:
    return {"data": body, "headers": {"Content-Type": content_type}}


MALFORMED_CREATE = [
    ("invalid json", _raw(b'{"game": "guts",}'), 400, "malformed_json", None),
    ("invalid utf-8", _raw(b'{"game": "gu\xfft\xc3s"}'), 400, "malformed_json", None),
    ("lone surrogate", _raw(b'{"game": "\\ud800"}'), 400, "malformed_json", None),
    ("blank name", _raw(b'{"game": "guts", "name": "   "}'), 422, "invalid_name", "name"),
    ("invisible name", _raw(b'{"game": "guts", "name": "\\u200b"}'), 422, "invalid_name", "name"),
    (
        "control in name",
        _raw(b'{"game": "guts", "name": "a\\u0007"}'),
        422,
        "invalid_name",
        "name",
    ),
    ("nan", _raw(b'{"game": "guts", "ante": NaN}'), 400, "malformed_json", None),
    ("1e400", _raw(b'{"game": "guts", "ante": 1e400}'), 422, "invalid_type", "ante"),
    ("10**100", _raw(b'{"game": "guts", "ante": 1' + b"0" * 100 + b"}"), 422, None, "ante"),
    ("huge digits", _raw(b'{"game": "guts", "ante": 1' + b"0" * 5000 + b"}"), 400, None, None),
    ("negative", _raw(b'{"game": "guts", "ante": -1}'), 422, "invalid_field", "ante"),
    ("fraction", _raw(b'{"game": "guts", "ante": 1.5}'), 422, "invalid_type", "ante"),
    ("fractional integer", _raw(b'{"game": "guts", "ante": 2.5}'), 422, "invalid_type", "ante"),
    ("boolean", _raw(b'{"game": "guts", "ante": true}'), 422, "invalid_type", "ante"),
    ("string number", _raw(b'{"game": "guts", "ante": "5"}'), 422, "invalid_type", "ante"),
    ("unknown option", _raw(b'{"game": "guts", "colour": "red"}'), 422, "unknown_field", "colour"),
    ("unknown game", _raw(b'{"game": "chess"}'), 422, "unsupported_game", "game"),
    ("repeated member", _raw(b'{"game": "guts", "game": "paiute"}'), 400, "malformed_json", None),
    ("not an object", _raw(b'["guts"]'), 400, "invalid_body", None),
    ("deep nesting", _raw(b"[" * 100_000 + b"]" * 100_000), 400, None, None),
    (
        "text/plain",
        _raw(b'{"game": "guts"}', "text/plain"),
        415,
        "unsupported_media_type",
        "Content-Type",
    ),
    (
        "form",
        _raw(b"game=guts", "application/x-www-form-urlencoded"),
        415,
        "unsupported_media_type",
        "Content-Type",
    ),
    (
        "json-ish",
        _raw(b'{"game": "guts"}', "application/jsonx"),
        415,
        "unsupported_media_type",
        "Content-Type",
    ),
    (
        "contradicting options",
        _raw(b'{"game": "guts", "min_players": 5, "max_players": 3}'),
        422,
        "invalid_option",
        None,
    ),
]


# query values that int() or float() would take, and a strict parser does not: a sign,
# a space, an underscore, another script's digit, an exponent
NOT_PLAIN_NUMBERS = (
    "after=%2B3",
    "after=%203",
    "after=1_0",
    "after=%D9%A3",
    "wait=1e1",
    "wait=1_0",
    "wait=%2B1",
)


@pytest.mark.parametrize(
    ("request_args", "status", "code", "field"),
    [case[1:] for case in MALFORMED_CREATE],
    ids=[case[0] for case in MALFORMED_CREATE],
)
def test_malformed_table_creation_is_refused(
    unlimited: Gateway,
    redis_url: str,
    request_args: dict[str, Any],
    status: int,
    code: str | None,
    field: str | None,
) -> None:
    host = unlimited.sign_up()
    before = snapshot(redis_url)
    response = unlimited.call("POST", "/v1/tables", host, **request_args)
    body = response.get_json(force=True)
    assert response.status_code == status, body
    assert response.mimetype == PROBLEM
    if code is not None:
        assert body["code"] == code, body
    else:
        assert body["code"] in {"malformed_json", "invalid_field", "invalid_type"}, body
    if field is not None:
        assert body.get("field") == field, body
    assert snapshot(redis_url) == before


def test_malformed_seats_and_moves_are_refused(unlimited: Gateway, redis_url: str) -> None:
    table_id, ann, _ = seated(unlimited, rebuy=True)
    cy = unlimited.sign_up("cy")
    seats = f"/v1/tables/{table_id}/seats"
    actions = f"/v1/tables/{table_id}/actions"
    cases: list[tuple[str, str, Player | Account | None, dict[str, Any], int, str, str | None]] = [
        (
            "POST",
            seats,
            cy,
            {"json": {"name": "cy", "buy_in": -50}},
            422,
            "invalid_field",
            "buy_in",
        ),
        (
            "POST",
            seats,
            cy,
            {"json": {"name": "cy", "buy_in": 50.5}},
            422,
            "invalid_type",
            "buy_in",
        ),
        (
            "POST",
            seats,
            cy,
            {"json": {"name": "cy", "buy_in": True}},
            422,
            "invalid_type",
            "buy_in",
        ),
        (
            "POST",
            seats,
            cy,
            {"json": {"name": "cy", "buy_in": 10**100}},
            422,
            "invalid_field",
            "buy_in",
        ),
        (
            "POST",
            seats,
            cy,
            _raw(b'{"name": "cy", "buy_in": 1e400}'),
            422,
            "invalid_type",
            "buy_in",
        ),
        (
            "POST",
            seats,
            cy,
            {"json": {"name": "cy", "buy_in": 50, "chips": 9}},
            422,
            "unknown_field",
            "chips",
        ),
        ("POST", seats, cy, {"json": {"name": "", "buy_in": 50}}, 422, "invalid_name", "name"),
        ("POST", seats, cy, {"json": {"name": "cy"}}, 422, "missing_field", "buy_in"),
        ("POST", seats, cy, {"json": {"name": "cy", "buy_in": 1}}, 422, "invalid_buy_in", None),
        (
            "POST",
            actions,
            ann,
            {"json": {"action": "rebuy", "amount": -5}},
            422,
            "invalid_field",
            "amount",
        ),
        (
            "POST",
            actions,
            ann,
            {"json": {"action": "rebuy", "amount": 0.5}},
            422,
            "invalid_type",
            "amount",
        ),
        (
            "POST",
            actions,
            ann,
            {"json": {"action": "rebuy", "amount": False}},
            422,
            "invalid_type",
            "amount",
        ),
        (
            "POST",
            actions,
            ann,
            {"json": {"action": "declare", "choice": "maybe"}},
            422,
            "invalid_choice",
            "choice",
        ),
        ("POST", actions, ann, {"json": {"action": "fold"}}, 422, "unsupported_action", "action"),
        (
            "POST",
            actions,
            ann,
            {"json": {"action": "start", "force": True}},
            422,
            "unknown_field",
            "force",
        ),
        (
            "POST",
            actions,
            ann,
            _raw(b'{"action": "start"}', "text/plain"),
            415,
            "unsupported_media_type",
            "Content-Type",
        ),
        ("POST", actions, ann, _raw(b"\xff\xfe"), 400, "malformed_json", None),
        ("POST", actions, None, {"json": {"action": "start"}}, 401, "missing_token", None),
        (
            "POST",
            actions,
            ann,
            {"json": {"action": "start"}, "headers": {"Idempotency-Key": ""}},
            400,
            "invalid_idempotency_key",
            "Idempotency-Key",
        ),
        (
            "POST",
            actions,
            ann,
            {"json": {"action": "start"}, "headers": {"If-Match": '"999"'}},
            412,
            "stale_version",
            "If-Match",
        ),
        (
            "GET",
            f"/v1/tables/{table_id}/events?after=-1",
            None,
            {},
            400,
            "invalid_parameter",
            "after",
        ),
        (
            "GET",
            f"/v1/tables/{table_id}/events?after=1e400",
            None,
            {},
            400,
            "invalid_parameter",
            "after",
        ),
        (
            "GET",
            f"/v1/tables/{table_id}/events?wait=nan",
            None,
            {},
            400,
            "invalid_parameter",
            "wait",
        ),
        (
            "GET",
            f"/v1/tables/{table_id}/events?wait=inf",
            None,
            {},
            400,
            "invalid_parameter",
            "wait",
        ),
        *(
            (
                "GET",
                f"/v1/tables/{table_id}/events?{query}",
                None,
                {},
                400,
                "invalid_parameter",
                query.split("=")[0],
            )
            for query in NOT_PLAIN_NUMBERS
        ),
        (
            "GET",
            f"/v1/tables/{table_id}/events?after=1000",
            None,
            {},
            400,
            "invalid_cursor",
            "after",
        ),
        (
            "GET",
            f"/v1/tables/{table_id}/events/stream",
            None,
            {"headers": {"Last-Event-ID": "1000"}},
            400,
            "invalid_cursor",
            "Last-Event-ID",
        ),
        *(
            (method, f"/v1/tables/{table_id}/{path}", ann, {}, 404, "route_not_found", None)
            for method, path in (
                ("DELETE", "seats/01"),
                ("DELETE", "seats/0"),
                ("GET", "hands/01"),
                ("GET", "hands/0"),
            )
        ),  # a seat or deal number has no leading zero
        ("GET", "/v1/tables?limit=0", None, {}, 400, "invalid_parameter", "limit"),
        ("GET", "/v1/tables?limit=true", None, {}, 400, "invalid_parameter", "limit"),
        ("GET", "/v1/tables?limit=%2B5", None, {}, 400, "invalid_parameter", "limit"),
        ("GET", "/v1/tables?cursor=nan", None, {}, 400, "invalid_cursor", "cursor"),
        (
            "GET",
            f"/v1/tables/{table_id}/events/stream",
            None,
            {"headers": {"Last-Event-ID": "x1"}},
            400,
            "invalid_parameter",
            "Last-Event-ID",
        ),
        (
            # a write refuses a credential that does not hold (a read would ignore it)
            "POST",
            actions,
            None,
            {"headers": {"Authorization": "Basic eDp5"}, "json": {"action": "start"}},
            401,
            "invalid_token",
            None,
        ),
    ]
    before = snapshot(redis_url)
    for method, path, player, kwargs, status, code, field in cases:
        response = unlimited.call(method, path, player, **kwargs)
        assert response.status_code == status, (method, path, kwargs, response.get_json())
        assert_problem(response, status, code, field)
    assert snapshot(redis_url) == before


# ----------------------------------------------------------------- seat tokens


def test_a_token_acts_only_for_its_own_seat_at_its_own_table(
    unlimited: Gateway, redis_url: str
) -> None:
    table_id, ann, bo = seated(unlimited)
    other_id, cy, _ = seated(unlimited)
    before = snapshot(redis_url)
    # Ann's token cannot make Bo leave, nor act at the other table.
    response = unlimited.call("DELETE", f"/v1/tables/{table_id}/seats/{bo.seat}", ann)
    assert_problem(response, 403, "wrong_seat", "seat")
    assert_problem(unlimited.act(other_id, ann, action="start"), 401, "invalid_token")
    response = unlimited.call("DELETE", f"/v1/tables/{other_id}/seats/{cy.seat}", ann)
    assert_problem(response, 401, "invalid_token")
    # a read ignores a token that does not hold: the public view
    assert unlimited.call("GET", f"/v1/tables/{other_id}", ann).get_json()["you"] is None
    # A token with one character changed is no token at all.
    forged = Player("ann", ann.seat, ann.token[:-1] + ("A" if ann.token[-1] != "A" else "B"))
    assert_problem(unlimited.act(table_id, forged, action="start"), 401, "invalid_token")
    assert snapshot(redis_url) == before


def test_a_token_stops_working_when_its_seat_is_left(unlimited: Gateway) -> None:
    table_id, ann, bo = seated(unlimited)
    left = unlimited.call("DELETE", f"/v1/tables/{table_id}/seats/{ann.seat}", ann)
    assert left.status_code == 200, left.get_json()
    assert_problem(unlimited.act(table_id, ann, action="start"), 401, "invalid_token")
    assert unlimited.call("GET", f"/v1/tables/{table_id}", ann).get_json()["you"] is None
    again = unlimited.call("DELETE", f"/v1/tables/{table_id}/seats/{ann.seat}", ann)
    assert again.status_code in (401, 404), again.get_json()
    # A newcomer in the same seat number gets a new token; the old one stays dead.
    cy = unlimited.sit(table_id, "cy")
    assert cy.token != ann.token
    assert_problem(unlimited.act(table_id, ann, action="start"), 401, "invalid_token")
    assert unlimited.act(table_id, bo, action="start").status_code == 200


# ----------------------------------------------------------------- through gunicorn


@pytest.fixture
def gunicorn_factory(
    redis_url: str, evaluator_address: str, tmp_path: Path
) -> Iterator[Callable[..., Gunicorn]]:
    """Start gunicorn gateways on the test's Redis; all stopped afterwards."""
    started: list[Gunicorn] = []

    def start(**env: str) -> Gunicorn:
        server = Gunicorn(
            redis_url, evaluator_address, tmp_path / f"gunicorn-{len(started)}.log", **env
        )
        started.append(server)
        return server

    yield start
    for server in started:
        server.stop()


def test_the_limit_holds_across_gunicorn_workers(
    gunicorn_factory: Callable[..., Gunicorn],
) -> None:
    server = gunicorn_factory(RATE_LIMIT_PER_ADDRESS="30", RATE_LIMIT_WINDOW_SECONDS="3600")
    # Fresh connections from many threads at once spread over both workers; the
    # budget is shared, so exactly 30 of them are let through whichever worker answers.
    with ThreadPoolExecutor(12) as pool:
        results = list(pool.map(lambda _: server.get("/v1/tables"), range(60)))
    codes = sorted(status for status, _, _ in results)
    assert codes == [200] * 30 + [429] * 30
    for status, headers, body in results:
        if status == 429:
            assert headers["Content-Type"] == PROBLEM
            assert json.loads(body)["code"] == "rate_limited"
            assert int(headers["Retry-After"]) >= 1
    assert server.get("/healthz")[0] == 200
    assert server.get("/readyz")[0] == 200


def send_raw(port: int, head: bytes, chunks: Iterator[bytes]) -> bytes:
    """Send a request head and body chunks (stopping if the server hangs up); the reply."""
    with socket.create_connection(("127.0.0.1", port), timeout=60) as connection:
        reply = bytearray()
        try:
            connection.sendall(head)
            for chunk in chunks:
                connection.sendall(chunk)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered early and closed; its answer is still readable
        try:
            while True:
                data = connection.recv(65536)
                if not data:
                    break
                reply += data
        except ConnectionResetError:
            pass
        return bytes(reply)


def chunked(body: bytes, size: int = 16 * 1024) -> Iterator[bytes]:
    """`body` in HTTP/1.1 chunked transfer coding."""
    for start in range(0, len(body), size):
        piece = body[start : start + size]
        yield f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
    yield b"0\r\n\r\n"


def _status_and_body(reply: bytes) -> tuple[int, dict[str, str], Any]:
    head, _, body = reply.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.strip().lower(): v.strip() for k, _, v in (x.partition(":") for x in lines[1:])}
    return status, headers, json.loads(body) if body else None


def test_oversized_chunked_bodies_get_413_through_gunicorn(
    gunicorn_factory: Callable[..., Gunicorn], redis_url: str
) -> None:
    server = gunicorn_factory(RATE_LIMIT_PER_ADDRESS="0", RATE_LIMIT_PER_TOKEN="0")
    before = snapshot(redis_url)
    body = b'{"game": "guts", "name": "' + b"x" * (MAX_BODY + 1024) + b'"}'
    # a move is answered below Flask (api.http.moves), with the same limit
    for path in ("/v1/tables", "/v1/evaluate", "/v1/tables/t1/actions"):
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
        ).encode()
        status, headers, problem = _status_and_body(send_raw(server.port, head, chunked(body)))
        assert status == 413, problem
        assert headers["content-type"] == PROBLEM
        assert problem["code"] == "body_too_large"
        # With Content-Length the same body is refused before it is read.
        head = (
            f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
        ).encode()
        status, headers, problem = _status_and_body(send_raw(server.port, head, iter([body])))
        assert status == 413, problem
        assert problem["code"] == "body_too_large"
    assert snapshot(redis_url) == before
    # A small chunked body is read as usual.
    small = b'{"game": "guts3", "hands": ["Ah Kh Qh"]}'
    head = (
        b"POST /v1/evaluate HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
        b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    )
    status, _, result = _status_and_body(send_raw(server.port, head, chunked(small, 7)))
    assert status == 200, result
    assert len(result["results"]) == 1


def test_an_empty_cursor_is_the_first_page(gateway: Gateway) -> None:
    ann = gateway.sign_up("ann")
    table_id = gateway.create(ann)
    gateway.sit(table_id, "bo")  # listed once somebody sits there
    lobby = gateway.call("GET", "/v1/tables?cursor=")
    assert lobby.status_code == 200, lobby.get_json()
    assert table_id in [t["id"] for t in lobby.get_json()["tables"]]
    events = gateway.call("GET", f"/v1/tables/{table_id}/events?after=&wait=")
    assert events.status_code == 200, events.get_json()
    assert events.get_json()["events"][0]["type"] == "table_created"
    page = gateway.call("GET", "/v1/players/me/ledger?cursor=", ann)
    assert [e["kind"] for e in page.get_json()["entries"]] == ["grant"]


def test_a_query_parameter_given_twice_is_refused(gateway: Gateway) -> None:
    ann = gateway.sign_up("ann")
    table_id = gateway.create(ann)
    for path, name in (
        (f"/v1/tables/{table_id}/events?after=&after=3", "after"),
        (f"/v1/tables/{table_id}/events?wait=1&wait=0", "wait"),
        ("/v1/tables?cursor=&cursor=x", "cursor"),
        ("/v1/tables?limit=5&limit=5", "limit"),
        ("/v1/players/me/ledger?cursor=1&cursor=2", "cursor"),
    ):
        answer = gateway.call("GET", path, ann)
        assert answer.status_code == 400, (path, answer.get_json())
        assert answer.get_json()["code"] == "invalid_parameter"
        assert answer.get_json()["field"] == name
