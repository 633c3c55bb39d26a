"""The error family (problem+json) and request body validation against the OpenAPI schemas."""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import pytest
from flask import Flask, Response, abort, request
from werkzeug.exceptions import ServiceUnavailable

from api.errors import (
    PROBLEM_CODES,
    PROBLEM_CONTENT_TYPE,
    RULE_ERROR_DEFAULT_STATUS,
    RULE_ERROR_STATUS,
    ApiError,
    EvaluatorUnavailable,
    StoreUnavailable,
    from_rule_error,
    invalid_token,
    missing_token,
    problem,
    stale_version,
    table_not_found,
)
from api.games.common import RuleError
from api.http import schemas
from api.http.etags import entity_tags
from api.http.pipeline import install_pipeline
from api.http.problems import problem_parts
from api.http.schemas import field_path, parse_json_body, validate_body, validator_for

JSON = "application/json"


def problem_response(error: ApiError, instance: str) -> Response:
    """`error` answered as the pipeline answers it, as a Flask response to inspect."""
    status, headers, body = problem_parts(error, instance)
    return Response(body, status=status, headers=headers)


def fault(data: bytes | str, schema: str, content_type: str | None = JSON) -> ApiError:
    raw = data.encode() if isinstance(data, str) else data
    with pytest.raises(ApiError) as caught:
        parse_json_body(raw, content_type, schema)
    return caught.value


# ----------------------------------------------------------------- parse_json_body


@pytest.mark.parametrize(
    ("body", "schema", "status", "code", "field"),
    [
        # not JSON at all
        ('{"game": ', "CreateTable", 400, "malformed_json", None),
        ("{'game': 'guts'}", "CreateTable", 400, "malformed_json", None),
        ('{"game": "guts", "ante": NaN}', "CreateTable", 400, "malformed_json", None),
        ('{"game": "guts", "ante": Infinity}', "CreateTable", 400, "malformed_json", None),
        ('{"game": "guts", "game": "paiute"}', "CreateTable", 400, "malformed_json", None),
        (b'{"name": "\xff"}', "TakeSeat", 400, "malformed_json", None),
        # a \u escape of half a surrogate pair, in a value or a member name
        ('{"name": "\\ud800", "buy_in": 5}', "TakeSeat", 400, "malformed_json", None),
        ('{"game": "guts", "\\udfff": 1}', "CreateTable", 400, "malformed_json", None),
        (
            '{"game": "guts3", "hands": ["Ah \\ud83d"]}',
            "EvaluateRequest",
            400,
            "malformed_json",
            None,
        ),
        # JSON, but not an object
        ("[1, 2]", "TakeSeat", 400, "invalid_body", None),
        ('"hello"', "TakeSeat", 400, "invalid_body", None),
        ("null", "TakeSeat", 400, "invalid_body", None),
        ("42", "TakeSeat", 400, "invalid_body", None),
        # unknown members, top level and nested
        ('{"game": "guts", "colour": "red"}', "CreateTable", 422, "unknown_field", "colour"),
        ('{"game": "paiute", "cards": 3}', "CreateTable", 422, "unknown_field", "cards"),
        ('{"nam": "Ada", "buy_in": 50}', "TakeSeat", 422, "unknown_field", "nam"),
        ('{"action": "start", "seat": 1}', "Action", 422, "unknown_field", "seat"),
        (
            '{"game": "guts3", "odds": {"hand": "Ah Kh Qh", "opponents": 2, "colour": 1}}',
            "EvaluateRequest",
            422,
            "unknown_field",
            "odds.colour",
        ),
        # wrong JSON type, booleans and 20.5 included
        ('{"name": "Ada", "buy_in": true}', "TakeSeat", 422, "invalid_type", "buy_in"),
        ('{"name": "Ada", "buy_in": 20.5}', "TakeSeat", 422, "invalid_type", "buy_in"),
        ('{"name": "Ada", "buy_in": "50"}', "TakeSeat", 422, "invalid_type", "buy_in"),
        ('{"name": 7, "buy_in": 50}', "TakeSeat", 422, "invalid_type", "name"),
        ('{"game": "guts", "ante": false}', "CreateTable", 422, "invalid_type", "ante"),
        ('{"game": "guts", "wimp": "yes"}', "CreateTable", 422, "invalid_type", "wimp"),
        ('{"game": "guts", "cap": "none"}', "CreateTable", 422, "invalid_type", "cap"),
        ('{"game": 3}', "CreateTable", 422, "invalid_type", "game"),
        ('{"action": "rebuy", "amount": [5]}', "Action", 422, "invalid_type", "amount"),
        ('{"game": "guts3", "hands": "Ah Kh"}', "EvaluateRequest", 422, "invalid_type", "hands"),
        ('{"game": "guts", "cards": 3.5}', "CreateTable", 422, "invalid_type", "cards"),
        # out of range, enum, length, pattern, items
        ('{"name": "Ada", "buy_in": 0}', "TakeSeat", 422, "invalid_field", "buy_in"),
        # a fault the rules name too has the rules' code (x-problem-code)
        ('{"name": "", "buy_in": 50}', "TakeSeat", 422, "invalid_name", "name"),
        ('{"name": "' + "x" * 33 + '", "buy_in": 50}', "TakeSeat", 422, "invalid_name", "name"),
        ('{"name": ""}', "CreatePlayer", 422, "invalid_name", "name"),
        ('{"game": "guts", "name": ""}', "CreateTable", 422, "invalid_name", "name"),
        (
            '{"game": "guts", "turn_seconds": 3601}',
            "CreateTable",
            422,
            "invalid_field",
            "turn_seconds",
        ),
        (
            '{"game": "guts", "deal_pause_seconds": -1}',
            "CreateTable",
            422,
            "invalid_field",
            "deal_pause_seconds",
        ),
        ('{"game": "guts", "max_players": 11}', "CreateTable", 422, "invalid_field", "max_players"),
        ('{"game": "guts", "cards": 4}', "CreateTable", 422, "invalid_field", "cards"),
        ('{"game": "guts", "cap": 0}', "CreateTable", 422, "invalid_field", "cap"),
        (
            '{"game": "guts", "ante_mode": "sometimes"}',
            "CreateTable",
            422,
            "invalid_field",
            "ante_mode",
        ),
        ('{"game": "chess"}', "CreateTable", 422, "unsupported_game", "game"),
        (
            '{"game": "chess", "hands": ["Ah Kh"]}',
            "EvaluateRequest",
            422,
            "unsupported_game",
            "game",
        ),
        (
            '{"game": "paiute", "max_players": 6}',
            "CreateTable",
            422,
            "invalid_field",
            "max_players",
        ),
        ('{"action": "declare", "choice": "maybe"}', "Action", 422, "invalid_choice", "choice"),
        ('{"action": "draw", "source": "deck"}', "Action", 422, "invalid_choice", "source"),
        ('{"action": "fold"}', "Action", 422, "unsupported_action", "action"),
        ('{"action": "discard", "card": "1h"}', "Action", 422, "invalid_card", "card"),
        ('{"action": "discard", "card": "Ah\\n"}', "Action", 422, "invalid_card", "card"),
        (
            '{"action": "call", "cards": ["9h", "9d", "9s", "9c", "Xh"], "discard": null}',
            "Action",
            422,
            "invalid_card",
            "cards[4]",
        ),
        (
            '{"action": "call", "cards": ["9h", "9d", "9s", "9c", "8h"], "discard": "1c"}',
            "Action",
            422,
            "invalid_card",
            "discard",
        ),
        (
            '{"action": "call", "cards": ["9h"], "discard": null}',
            "Action",
            422,
            "invalid_combination",
            "cards",
        ),
        (
            '{"action": "call", "cards": ["9h", "9d", "9s", "9c"], "discard": "8h"}',
            "Action",
            422,
            "invalid_combination",
            "cards",
        ),
        (
            '{"action": "call", "cards": ["9h", "9d", "9s", "9c", "8h", "8d", "8s"],'
            ' "discard": null}',
            "Action",
            422,
            "invalid_combination",
            "cards",
        ),
        ('{"game": "guts3", "hands": []}', "EvaluateRequest", 422, "invalid_field", "hands"),
        ('{"game": "guts3", "hands": [""]}', "EvaluateRequest", 422, "invalid_field", "hands[0]"),
        (
            '{"game": "guts3", "odds": {"hand": "Ah Kh Qh", "opponents": 10}}',
            "EvaluateRequest",
            422,
            "invalid_field",
            "odds.opponents",
        ),
        (
            # odds are Guts' only: a game this operation does not play
            '{"game": "paiute", "odds": {"hand": "Ah Kh Qh", "opponents": 1}}',
            "EvaluateRequest",
            422,
            "unsupported_game",
            "game",
        ),
        # missing required members
        ("{}", "CreateTable", 422, "missing_field", "game"),
        ('{"name": "Ada"}', "TakeSeat", 422, "missing_field", "buy_in"),
        ("{}", "CreatePlayer", 422, "missing_field", "name"),
        ('{"name": "Ada", "key": "x"}', "CreatePlayer", 422, "unknown_field", "key"),
        ('{"choice": "in"}', "Action", 422, "missing_field", "action"),
        ('{"action": "declare"}', "Action", 422, "missing_field", "choice"),
        (
            '{"action": "call", "cards": ["9h", "9d", "9s", "9c", "4h"]}',
            "Action",
            422,
            "missing_field",
            "discard",
        ),
        ('{"game": "guts3"}', "EvaluateRequest", 422, "missing_field", "hands"),
        (
            '{"game": "paiute", "hands": ["9h 9d 9s 9c 4h 4d"]}',
            "EvaluateRequest",
            422,
            "missing_field",
            "wild_rank",
        ),
        (
            '{"game": "guts3", "odds": {"hand": "Ah Kh Qh"}}',
            "EvaluateRequest",
            422,
            "missing_field",
            "odds.opponents",
        ),
    ],
)
def test_parse_json_body_faults(
    body: str | bytes, schema: str, status: int, code: str, field: str | None
) -> None:
    error = fault(body, schema)
    assert (error.status, error.code, error.field) == (status, code, field), error.detail
    if code in PROBLEM_CODES:
        assert PROBLEM_CODES[code] == (status, error.title)
    else:  # a fault the rules name too
        assert RULE_ERROR_STATUS[code] == status
    assert re.fullmatch(r"[A-Z].*\.", error.detail), error.detail


def test_details_name_the_field_and_what_it_must_be() -> None:
    assert fault('{"name": "Ada", "buy_in": true}', "TakeSeat").detail == (
        "Field 'buy_in' must be an integer."
    )
    assert fault('{"name": "Ada", "buy_in": true}', "TakeSeat").extra == {"expected": "integer"}
    assert fault('{"game": "guts", "cap": "x"}', "CreateTable").detail == (
        "Field 'cap' must be an integer or null."
    )
    assert fault('{"name": "Ada"}', "TakeSeat").detail == "Field 'buy_in' is required."
    assert fault('{"game": "guts", "turn_seconds": 0}', "CreateTable").detail == (
        "Field 'turn_seconds' must be at least 1."
    )
    assert fault('{"action": "declare", "choice": "no"}', "Action").detail == (
        'Field \'choice\' must be one of "in", "out".'
    )
    assert fault('{"action": "discard", "card": "1h"}', "Action").detail == (
        "Field 'card' must be a card such as 'Ah', 'Td' or '10c'."
    )
    unknown = fault('{"nam": "Ada", "buy_in": 5}', "TakeSeat").detail
    assert unknown == "Field 'nam' is not allowed here; the allowed fields are: name, buy_in."


def test_the_first_fault_is_chosen_deterministically() -> None:
    # A misspelt member is reported as unknown before the member it stands for is missing,
    # and the choice does not depend on the order of the members in the body.
    for body in ('{"nam": "Ada", "buy_in": true}', '{"buy_in": true, "nam": "Ada"}'):
        error = fault(body, "TakeSeat")
        assert (error.code, error.field) == ("unknown_field", "nam")
    several = fault('{"game": "guts", "zeta": 1, "alpha": 2}', "CreateTable")
    assert several.field == "alpha"


def test_valid_bodies_come_back_unchanged() -> None:
    body = {"game": "guts", "cards": 2, "cap": None, "deal_pause_seconds": 2.5, "name": "Ada's"}
    assert parse_json_body(json.dumps(body).encode(), JSON, "CreateTable") == body
    assert parse_json_body(b'{"name": "Bo", "buy_in": 20}', JSON, "TakeSeat") == {
        "name": "Bo",
        "buy_in": 20,
    }
    call = {"action": "call", "cards": ["9h", "9d", "9s", "9c", "4h", "4d"], "discard": None}
    assert parse_json_body(json.dumps(call).encode(), JSON, "Action") == call
    odds = {"game": "guts2", "odds": {"hand": "Ah Ad", "opponents": 9, "seed": 1}}
    assert parse_json_body(json.dumps(odds).encode(), JSON, "EvaluateRequest") == odds


@pytest.mark.parametrize(
    ("data", "schema", "member", "value"),
    [
        (b'{"name": "Bo", "buy_in": 20.0}', "TakeSeat", "buy_in", 20),
        (b'{"game": "guts", "ante": 1.0, "cards": 3e0}', "CreateTable", "ante", 1),
        (b'{"action": "rebuy", "amount": 95.0}', "Action", "amount", 95),
        (b'{"amount": 5E2}', "WalletTransfer", "amount", 500),
    ],
)
def test_integral_numbers_written_as_doubles_are_integers(
    data: bytes, schema: str, member: str, value: int
) -> None:
    body = parse_json_body(data, JSON, schema)
    assert body[member] == value
    assert type(body[member]) is int


def test_a_body_seen_before_comes_back_as_a_fresh_equal_copy() -> None:
    data = b'{"action": "call", "cards": ["9h", "9d", "9s", "9c", "4h"], "discard": "2c"}'
    first = parse_json_body(data, JSON, "Action")
    first["cards"].append("changed")  # a caller's change must not reach the next caller
    first["extra"] = True
    again = parse_json_body(data, JSON, "Action")
    assert again == {"action": "call", "cards": ["9h", "9d", "9s", "9c", "4h"], "discard": "2c"}
    assert again is not first
    assert again["cards"] is not first["cards"]


def test_a_refused_body_is_refused_every_time() -> None:
    for _ in range(3):
        assert fault(b'{"action": "declare", "choice": "maybe"}', "Action").code == (
            "invalid_choice"
        )
        assert fault(b'{"action": "start", "action": "start"}', "Action").code == ("malformed_json")


def test_the_same_bytes_are_checked_against_each_schema_on_its_own() -> None:
    data = b'{"name": "Bo", "buy_in": 20}'
    assert parse_json_body(data, JSON, "TakeSeat") == {"name": "Bo", "buy_in": 20}
    assert fault(data, "Action").code == "missing_field"
    assert parse_json_body(data, JSON, "TakeSeat") == {"name": "Bo", "buy_in": 20}


def test_the_memo_of_accepted_bodies_is_bounded() -> None:
    schemas._accepted.clear()
    for number in range(schemas._ACCEPTED_MAX_ENTRIES + 10):
        data = json.dumps({"name": f"p{number}", "buy_in": 20}).encode()
        assert parse_json_body(data, JSON, "TakeSeat")["name"] == f"p{number}"
        assert len(schemas._accepted) <= schemas._ACCEPTED_MAX_ENTRIES
    body = b'{"action": "start"}' + b" " * schemas._ACCEPTED_MAX_BYTES
    schemas._accepted.clear()
    assert parse_json_body(body, JSON, "Action") == {"action": "start"}
    assert schemas._accepted == {}  # too large to keep


@pytest.mark.parametrize(
    "content_type", ["application/json", "application/json; charset=utf-8", "Application/JSON"]
)
def test_json_content_types_are_accepted(content_type: str) -> None:
    assert parse_json_body(b'{"action": "start"}', content_type, "Action") == {"action": "start"}


@pytest.mark.parametrize(
    "content_type", [None, "text/plain", "application/x-www-form-urlencoded", "application/xml"]
)
def test_other_content_types_are_unsupported(content_type: str | None) -> None:
    error = fault(b'{"action": "start"}', "Action", content_type)
    assert (error.status, error.code, error.field) == (
        415,
        "unsupported_media_type",
        "Content-Type",
    )


@pytest.mark.parametrize("data", [b"", b"  \r\n\t"])
def test_an_empty_body_is_an_empty_object(data: bytes) -> None:
    # Checked as {}: no Content-Type is needed, and required members are reported missing.
    error = fault(data, "TakeSeat", None)
    assert (error.code, error.field) == ("missing_field", "buy_in")


def test_validate_body_and_unknown_schema_names() -> None:
    assert validate_body({"action": "start"}, "Action") == {"action": "start"}
    with pytest.raises(KeyError):
        validator_for("NoSuchSchema")


def test_field_path() -> None:
    assert field_path([]) == ""
    assert field_path(["odds", "hand"]) == "odds.hand"
    assert field_path(["cards", 2]) == "cards[2]"
    assert field_path(["hands", 0, "x"]) == "hands[0].x"


# ----------------------------------------------------------------- the error family


def test_problem_response_shape() -> None:
    error = problem(
        "invalid_type",
        "Field 'ante' must be an integer.",
        field="ante",
        extra={"expected": "integer", "status": 200, "code": "spoof"},
    )
    response = problem_response(error, "/v1/tables")
    assert response.status_code == 422
    assert response.content_type == PROBLEM_CONTENT_TYPE == "application/problem+json"
    assert json.loads(response.get_data()) == {
        "type": "https://cardroom.dev/problems/invalid_type",
        "title": "Invalid field type",
        "status": 422,
        "detail": "Field 'ante' must be an integer.",
        "code": "invalid_type",
        "field": "ante",
        "instance": "/v1/tables",
        "expected": "integer",
    }


@pytest.mark.parametrize(
    ("header", "tags"),
    [
        ('"5"', [(False, "5")]),
        ('W/"5", "6"', [(True, "5"), (False, "6")]),
        ('"a,b"', [(False, "a,b")]),  # a comma inside the quotes is part of the tag
        ('"a,b", W/"c"', [(False, "a,b"), (True, "c")]),
        (' , "7" ,', [(False, "7")]),  # empty list elements are allowed
        ('"5",,"6"', [(False, "5"), (False, "6")]),
        ("*", []),
        ('"5" "6"', None),
        ("5", None),
        ('"5', None),
        ('"x"y', None),
        ("  ", None),
        ('"5"\n', None),
    ],
)
def test_entity_tag_lists_follow_rfc_9110(header: str, tags: list[tuple[bool, str]] | None) -> None:
    assert entity_tags(header) == tags


def test_problem_response_headers_and_no_field() -> None:
    response = problem_response(EvaluatorUnavailable(), "/v1/evaluate")
    body = json.loads(response.get_data())
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "2"
    assert "field" not in body
    assert body["code"] == "evaluator_unavailable"
    assert problem_response(StoreUnavailable(), "/").headers["Retry-After"] == "1"
    assert missing_token().headers["WWW-Authenticate"].startswith("Bearer")
    assert 'error="invalid_token"' in invalid_token().headers["WWW-Authenticate"]
    assert stale_version('"5"').headers["ETag"] == '"5"'
    assert table_not_found("abc").status == 404


def test_api_error_takes_status_code_title_detail() -> None:
    error = ApiError(409, "conflict", "Conflict", "Retry.", headers={"Retry-After": "1"})
    assert (error.status, error.code, error.title, error.detail) == (
        409,
        "conflict",
        "Conflict",
        "Retry.",
    )
    assert str(error) == "Retry."
    assert error.field is None
    assert error.extra == {}


@pytest.mark.parametrize(("code", "entry"), sorted(PROBLEM_CODES.items()))
def test_a_gateway_code_has_its_table_title_wherever_it_is_raised(
    code: str, entry: tuple[int, str]
) -> None:
    """RFC 9457: a problem type's title does not change between occurrences."""
    status, title = entry
    assert ApiError(status, code, "Some other words", "Detail.").title == title


@pytest.mark.parametrize(("code", "status"), sorted(RULE_ERROR_STATUS.items()))
def test_rule_codes_map_through_the_table(code: str, status: int) -> None:
    error = from_rule_error(code, "Seat 2 is not taken.", "seat")
    assert (error.status, error.code, error.field) == (status, code, "seat")
    assert error.title == code.replace("_", " ").capitalize()


def test_unknown_rule_codes_default_to_conflict() -> None:
    assert RULE_ERROR_DEFAULT_STATUS == 409
    assert from_rule_error("something_new", "No.", None).status == 409


def test_the_brief_s_rule_statuses() -> None:
    expected = {
        "not_your_turn": 409,
        "already_declared": 409,
        "no_hand_in_progress": 409,
        "not_seated": 403,
        "table_full": 409,
        "game_in_progress": 409,
        "not_enough_players": 409,
        "already_started": 409,
        "rebuy_not_allowed": 422,
        "invalid_choice": 422,
        "showdown_pending": 409,
        "already_left": 409,
        "invalid_buy_in": 422,
        "invalid_option": 422,
        "name_taken": 409,
    }
    assert {code: RULE_ERROR_STATUS[code] for code in expected} == expected


def test_the_code_tables_are_consistent() -> None:
    assert not set(PROBLEM_CODES) & set(RULE_ERROR_STATUS)
    for code, (status, title) in PROBLEM_CODES.items():
        assert re.fullmatch(r"[a-z][a-z0-9_]*", code)
        assert 400 <= status <= 599
        assert title[:1].isupper()
    for code, status in RULE_ERROR_STATUS.items():
        assert re.fullmatch(r"[a-z][a-z0-9_]*", code)
        assert status in {403, 409, 422}


# ----------------------------------------------------------------- the pipeline's errors


@pytest.fixture
def app() -> Flask:
    app = Flask("errors-test")
    app.config["MAX_CONTENT_LENGTH"] = 1024
    install_pipeline(app, [])

    @app.get("/tables/<table_id>")
    def get_table(table_id: str) -> dict[str, Any]:
        raise table_not_found(table_id)

    @app.post("/seats")
    def take_seat() -> dict[str, Any]:
        return parse_json_body(request.get_data(), request.content_type, "TakeSeat")

    @app.post("/declare")
    def declare() -> dict[str, Any]:
        raise RuleError("already_declared", "Seat 1 has already declared.", "seat")

    @app.get("/boom")
    def boom() -> dict[str, Any]:
        raise RuntimeError("secret redis password hunter2")

    @app.get("/unavailable")
    def unavailable() -> dict[str, Any]:
        abort(503)

    @app.get("/werkzeug-unavailable")
    def werkzeug_unavailable() -> dict[str, Any]:
        raise ServiceUnavailable()

    @app.get("/slash/")
    def slash() -> dict[str, Any]:
        return {"ok": True}

    return app


def problem_of(response: Any) -> dict[str, Any]:
    assert response.content_type == "application/problem+json"
    body: dict[str, Any] = json.loads(response.get_data())
    assert body["status"] == response.status_code
    assert body["type"] == "https://cardroom.dev/problems/" + body["code"]
    assert body["instance"] == response.request.path
    return body


def test_handler_api_error(app: Flask) -> None:
    response = app.test_client().get("/tables/abc")
    body = problem_of(response)
    assert (response.status_code, body["code"], body["field"]) == (
        404,
        "table_not_found",
        "table_id",
    )
    assert body["detail"] == "No table 'abc' exists."


def test_handler_rule_error(app: Flask) -> None:
    response = app.test_client().post("/declare")
    body = problem_of(response)
    assert (response.status_code, body["code"], body["field"]) == (409, "already_declared", "seat")


def test_handler_body_validation(app: Flask) -> None:
    client = app.test_client()
    response = client.post("/seats", json={"name": "Ada", "buy_in": True})
    assert (response.status_code, problem_of(response)["code"]) == (422, "invalid_type")
    response = client.post("/seats", data="name=Ada", content_type="text/plain")
    assert (response.status_code, problem_of(response)["code"]) == (415, "unsupported_media_type")
    response = client.post("/seats", data="{", content_type=JSON)
    assert (response.status_code, problem_of(response)["code"]) == (400, "malformed_json")
    response = client.post("/seats", json={"name": "Ada", "buy_in": 5})
    assert (response.status_code, response.get_json()) == (200, {"name": "Ada", "buy_in": 5})


def test_handler_unknown_route(app: Flask) -> None:
    response = app.test_client().get("/nowhere")
    body = problem_of(response)
    assert (response.status_code, body["code"]) == (404, "route_not_found")
    assert body["detail"] == "No route matches GET /nowhere."


def test_handler_method_not_allowed(app: Flask) -> None:
    response = app.test_client().delete("/seats")
    body = problem_of(response)
    assert (response.status_code, body["code"]) == (405, "method_not_allowed")
    assert "POST" in response.headers["Allow"]


def test_handler_body_too_large(app: Flask) -> None:
    response = app.test_client().post("/seats", data=b"x" * 2048, content_type=JSON)
    body = problem_of(response)
    assert (response.status_code, body["code"]) == (413, "body_too_large")


def test_handler_unexpected_exception(app: Flask, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.ERROR, logger="api.errors"):
        response = app.test_client().get("/boom")
    body = problem_of(response)
    assert (response.status_code, body["code"]) == (500, "internal_error")
    assert "hunter2" not in response.get_data(as_text=True)
    assert "RuntimeError" not in response.get_data(as_text=True)
    logged = [record for record in caplog.records if record.exc_info]
    assert logged, "the traceback must be logged"
    assert "hunter2" in str(logged[0].exc_info[1])  # type: ignore[index]


def test_handler_unexpected_exception_while_testing(app: Flask) -> None:
    # TESTING propagates unhandled exceptions, and the pipeline still answers them.
    app.config["TESTING"] = True
    response = app.test_client().get("/boom")
    assert (response.status_code, problem_of(response)["code"]) == (500, "internal_error")


@pytest.mark.parametrize("path", ["/unavailable", "/werkzeug-unavailable"])
def test_handler_other_http_errors_keep_their_status(app: Flask, path: str) -> None:
    response = app.test_client().get(path)
    body = problem_of(response)
    assert (response.status_code, body["code"]) == (503, "service_unavailable")


def test_handler_leaves_redirects_alone(app: Flask) -> None:
    response = app.test_client().get("/slash")
    assert response.status_code == 308
    assert response.headers["Location"].endswith("/slash/")
