"""What one client sends must not hurt anyone else, in process: made-up methods stay one
metrics label, invisible and look-alike names are refused, a cursor that cannot be read is
400, and operator keys are operator keys whatever their shape.

The same attacks through gunicorn, with a seated player playing meanwhile, are in
`test_floods.py`.
"""

from __future__ import annotations

import base64
import json
import logging
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from api.service.credentials import new_player_key
from api.telemetry import METHOD_LABELS, REGISTRY
from tests.support.gateway import Gateway, SignedInClient, close_app, make_app
from tests.support.problems import assert_problem

HEX_KEY = secrets.token_hex(32)  # as `openssl rand -hex 32` makes one
PLAYER_SHAPED_KEY = new_player_key()
HEADERS = {"Authorization": f"Bearer {HEX_KEY}"}


@pytest.fixture
def operated(redis_url: str, evaluator_address: str, tmp_path: Path) -> Iterator[Gateway]:
    """A gateway whose operator keys file holds a 64-hex key and a player-shaped one."""
    keys = tmp_path / "operator-keys"
    keys.write_text(f"# the operator's keys\n{HEX_KEY}\n{PLAYER_SHAPED_KEY}\n")
    app = make_app(redis_url, evaluator_address, operator_keys_file=str(keys))
    app.test_client_class = SignedInClient
    yield Gateway(app, app.test_client())
    close_app(app)


def method_labels() -> set[str]:
    """The method labels the request counter holds."""
    return {
        sample.labels["method"]
        for metric in REGISTRY.collect()
        if metric.name == "cardroom_http_requests"
        for sample in metric.samples
    }


def test_made_up_methods_are_one_label(gateway: Gateway) -> None:
    for number in range(200):
        method = f"X{number:04d}ABCDEFGHIJKLMNOP"
        response = gateway.client.open("/v1/tables", method=method)
        assert_problem(response, 405, "method_not_allowed")
    assert method_labels() <= METHOD_LABELS | {"other"}
    assert "other" in method_labels()
    assert not any("ABCDEFG" in line for line in gateway.client.get("/metrics").text.splitlines())


INVISIBLE_NAMES = [
    "\u3164",  # HANGUL FILLER
    "\u2800",  # BRAILLE PATTERN BLANK
    "\uffa0",  # HALFWIDTH HANGUL FILLER
    "\u0301",  # a combining mark alone
    "a\u034fnn",  # COMBINING GRAPHEME JOINER inside
    "ann\ufe0f",  # VARIATION SELECTOR-16
    "an\u17b4n",  # KHMER VOWEL INHERENT AQ
    "a\u1160nn",  # HANGUL JUNGSEONG FILLER
    "ann\u2800",
    "a\u0301\u0301nn",  # one mark twice on one letter
]


@pytest.mark.parametrize("name", INVISIBLE_NAMES)
def test_invisible_names_are_refused_everywhere(gateway: Gateway, name: str) -> None:
    player = gateway.client.post("/v1/players", json={"name": name})
    assert_problem(player, 422, "invalid_name", "name")
    table = gateway.client.post("/v1/tables", json={"game": "guts", "name": name})
    assert_problem(table, 422, "invalid_name", "name")
    table_id = gateway.create()
    seat = gateway.json_call(
        "POST", f"/v1/tables/{table_id}/seats", gateway.sign_up(), {"name": name, "buy_in": 50}
    )
    assert_problem(seat, 422, "invalid_name", "name")


def test_look_alike_names_are_one_name_at_a_table(gateway: Gateway) -> None:
    table_id = gateway.create()
    ann = gateway.sit(table_id, "ann")
    for name in ("Ann", "\u0430nn", "\uff41\uff4e\uff4e", "ANN "):
        refused = gateway.json_call(
            "POST", f"/v1/tables/{table_id}/seats", gateway.sign_up(), {"name": name, "buy_in": 50}
        )
        body = assert_problem(refused, 409, "name_taken", "name")
        assert "'ann'" in body["detail"]
    seats = gateway.table(table_id)["seats"]
    assert [seat["name"] for seat in seats.values()] == [ann.name]
    # fullwidth letters are kept as their plain letters; other names sit as sent
    gateway.sit(table_id, "\uff22\uff4f")
    gateway.sit(table_id, "Zo\u00eb \u2660")
    seats = gateway.table(table_id)["seats"]
    assert [seat["name"] for seat in seats.values()] == ["ann", "Bo", "Zo\u00eb \u2660"]


def ledger_page(gateway: Gateway, cursor: str) -> Any:
    """The operator's export of the ledger from `cursor`."""
    return gateway.call("GET", f"/v1/operator/ledger?cursor={cursor}", headers=HEADERS)


def encoded(text: str) -> str:
    """`text` as an export cursor encodes it."""
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


BAD_CURSORS = [
    encoded("[" * 5000 + "]" * 5000),
    encoded('["house", NaN, 0]'),
    encoded('["house", Infinity, 0]'),
    encoded('["house", 1e400, 0]'),
    encoded(f'["house", 0, {10**40}]'),
    encoded('["house", 0, -1]'),
    encoded('["house", 0, 1.5]'),
    encoded('["house", 0, true]'),
    encoded('["../etc", 0, 0]'),
    encoded('{"a": 1}'),
    encoded('["p_' + "0" * 24 + '", 0, 0, 0]'),
    "%%%",
    "A" * 5000,
]


@pytest.mark.parametrize("cursor", BAD_CURSORS, ids=range(len(BAD_CURSORS)))
def test_a_cursor_that_cannot_be_read_is_400(operated: Gateway, cursor: str) -> None:
    assert_problem(ledger_page(operated, cursor), 400, "invalid_cursor", "cursor")


def test_the_cursors_the_gateway_gives_are_read(operated: Gateway) -> None:
    for _ in range(3):
        operated.sign_up()
    first = operated.call("GET", "/v1/operator/ledger?limit=1", headers=HEADERS)
    assert first.status_code == 200
    following = ledger_page(operated, first.headers["Next-Cursor"])
    assert following.status_code == 200
    assert following.get_data() != first.get_data()


@pytest.mark.parametrize("cursor", ["0", "\u00b2", "1e3", "-1"])
def test_a_wallet_page_cursor_is_a_position(operated: Gateway, cursor: str) -> None:
    player = operated.sign_up()
    page = operated.call("GET", f"/v1/players/me/ledger?cursor={cursor}", player)
    assert_problem(page, 400, "invalid_cursor", "cursor")


@pytest.mark.parametrize("key", [HEX_KEY, PLAYER_SHAPED_KEY], ids=["hex", "player-shaped"])
def test_an_operator_key_of_any_shape_is_an_operator_key(operated: Gateway, key: str) -> None:
    audit = operated.call("GET", "/v1/operator/audit", headers={"Authorization": f"Bearer {key}"})
    assert audit.status_code == 200, audit.get_data(as_text=True)
    assert audit.get_json()["clean"] is True


def test_an_operator_key_no_client_could_send_is_warned_of(
    redis_url: str, evaluator_address: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    keys = tmp_path / "operator-keys"
    unusable = "two words"
    keys.write_text(f"{HEX_KEY}\n{unusable}\n")
    with caplog.at_level(logging.WARNING, logger="cardroom.credentials"):
        app = make_app(redis_url, evaluator_address, operator_keys_file=str(keys))
    try:
        warned = [r for r in caplog.records if "can never be used" in r.getMessage()]
        assert len(warned) == 1
        text = json.dumps(vars(warned[0]), default=str)
        assert unusable not in text
        assert HEX_KEY not in text
    finally:
        close_app(app)
