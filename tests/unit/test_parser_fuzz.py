"""Every parser of client input, fuzzed: it returns a valid value or raises its documented error.

Cards and hands (`evaluator.cards`, `api.games.cards.canonical_card`), request bodies
(`api.http.schemas.parse_json_body`, for every request schema, from arbitrary bytes, JSON
and content types) and the gateway's query parameters and headers (`limit`, `after`,
`wait`, `cursor`, Authorization, Idempotency-Key, If-Match, Last-Event-ID). A parser
may refuse with `ApiError` (a 4xx with a registered code) or, in the evaluator,
`ValueError`; anything else (a KeyError, a RecursionError, a 500) is a failure.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from functools import partial
from typing import Any, TypeVar

import pytest
from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from api.adapters.lobby import MEMBER
from api.errors import PROBLEM_CODES, RULE_ERROR_STATUS, ApiError, from_rule_error
from api.games.cards import canonical_card
from api.games.common import RuleError
from api.http.etags import if_match
from api.http.routes import tables as table_routes
from api.http.schemas import openapi_document, parse_json_body, validator_for
from api.service.lobby import Filters
from api.settings import Settings
from evaluator.cards import (
    RANK_CHARS,
    SUIT_CHARS,
    CardError,
    HandError,
    card_text,
    check_hand,
    parse_card,
    parse_cards,
)

T = TypeVar("T")
REQUEST_SCHEMAS = ("CreateTable", "TakeSeat", "Action", "EvaluateRequest")


def fuzz(examples: int) -> settings:
    """Hypothesis settings for `examples` examples, without deadlines or a database."""
    return settings(
        max_examples=examples,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
    )


CARD_TEXT = re.compile(r"^(?:[2-9TtJjQqKkAa]|10)[cdhsCDHS]$")

# Text that looks like cards some of the time: card pieces, separators, look-alikes.
card_alphabet = st.sampled_from(
    [*"23456789TJQKAtjqka10cdhsCDHS ,\t\n", "10", "1", "0", "\u212a", "\u0130", "ß", "\x00"]
)
card_like = st.lists(card_alphabet, max_size=8).map("".join)
any_text = st.one_of(card_like, st.text(max_size=12))


def attempt(parse: Callable[[], T]) -> T | ApiError:
    """What `parse()` returns, or the ApiError it raises (checked to be a documented one)."""
    try:
        return parse()
    except ApiError as error:
        refusal = error
    assert_api_error(refusal)
    return refusal


def assert_api_error(error: ApiError) -> None:
    """A documented refusal: a 4xx with a registered code and a sentence."""
    assert 400 <= error.status < 500, error
    assert error.code in PROBLEM_CODES or error.code in RULE_ERROR_STATUS, error
    if error.code in PROBLEM_CODES:
        assert PROBLEM_CODES[error.code][0] == error.status, error
    assert error.detail
    json.dumps(error.body("/fuzz"))  # the body can be written


# ----------------------------------------------------------------- cards


@fuzz(1500)
@given(any_text)
def test_parse_card_returns_an_index_or_card_error(text: str) -> None:
    try:
        index = parse_card(text)
    except CardError:
        assert not CARD_TEXT.match(text.strip()), text
        return
    assert 0 <= index <= 51
    # Whatever was accepted names the card it parsed to.
    written = card_text(index)
    cleaned = text.strip()
    assert cleaned[-1:].lower() == written[-1]
    assert parse_card(written) == index


@fuzz(1000)
@given(st.one_of(any_text, st.lists(any_text, max_size=6)))
def test_parse_cards_returns_indexes_or_card_error(text: str | list[str]) -> None:
    try:
        indexes = parse_cards(text)
    except CardError:
        return
    assert all(0 <= index <= 51 for index in indexes)


@fuzz(1000)
@given(st.integers(min_value=-(2**70), max_value=2**70))
def test_card_text_accepts_exactly_the_52_indexes(index: int) -> None:
    try:
        text = card_text(index)
    except CardError:
        assert not 0 <= index <= 51
        return
    assert parse_card(text) == index
    assert text[0] in RANK_CHARS
    assert text[1] in SUIT_CHARS


hand_items = st.one_of(
    st.integers(min_value=-5, max_value=60),
    st.integers(),
    st.floats(allow_nan=True),
    st.text(max_size=3),
    st.booleans(),
    st.none(),
)


@fuzz(1000)
@given(st.lists(hand_items, max_size=8), st.sets(st.integers(1, 7), min_size=1, max_size=3))
def test_check_hand_accepts_only_distinct_indexes_of_a_valid_size(
    cards: list[Any], sizes: set[int]
) -> None:
    try:
        check_hand(cards, sizes)
    except HandError:
        return
    assert len(cards) in sizes
    assert len({int(card) for card in cards}) == len(cards)
    assert all(isinstance(card, int) and 0 <= card <= 51 for card in cards)


def card_or_problem(text: str) -> str:
    """The card `text` names, or the problem the gateway answers its RuleError with."""
    try:
        return canonical_card(text, "card")
    except RuleError as error:
        raise from_rule_error(error.code, error.detail, error.field) from None


@fuzz(1500)
@given(any_text)
def test_canonical_card_returns_a_card_or_invalid_card(text: str) -> None:
    card = attempt(lambda: card_or_problem(text))
    if isinstance(card, ApiError):
        assert (card.status, card.code, card.field) == (422, "invalid_card", "card")
        return
    assert len(card) == 2
    assert card == card_text(parse_card(card))


# ----------------------------------------------------------------- request bodies

json_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
    st.sampled_from(["guts", "paiute", "guts2", "guts3", "start", "declare", "in", "Ah"]),
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.text(max_size=10), children, max_size=4),
    ),
    max_leaves=12,
)
member_names = st.sampled_from(
    [
        "game", "name", "buy_in", "action", "choice", "amount", "source", "card", "cards",
        "discard", "hands", "wild_rank", "odds", "hand", "opponents", "samples", "seed",
        "cards", "ante", "ante_mode", "declare", "cap", "cap_mode", "turn_seconds", "rebuy",
        "min_players", "max_players", "min_buy_in", "max_buy_in", "ghost", "wimp",
    ]
)  # fmt: skip
# Objects built from the schemas' own member names, so many reach deep validation.
near_bodies = st.dictionaries(member_names, json_values, max_size=6)
content_types = st.one_of(
    st.sampled_from(
        [
            "application/json",
            "application/json; charset=utf-8",
            "APPLICATION/JSON",
            "application/problem+json",
            "text/plain",
            "application/x-www-form-urlencoded",
            "",
        ]
    ),
    st.none(),
    st.text(max_size=30),
)


def _named_codes(node: Any) -> Iterator[str]:
    """Every code the document names for a schema's faults (`x-problem-code`)."""
    if isinstance(node, dict):
        if isinstance(node.get("x-problem-code"), str):
            yield node["x-problem-code"]
        for value in node.values():
            yield from _named_codes(value)
    elif isinstance(node, list):
        for value in node:
            yield from _named_codes(value)


# a body's faults: the parser's own codes and those the document names for a field
BODY_CODES = {
    "malformed_json",
    "invalid_body",
    "unsupported_media_type",
    "unknown_field",
    "missing_field",
    "invalid_type",
    "invalid_field",
    *_named_codes(openapi_document()),
}


def check_parse(raw: bytes, content_type: str | None, schema: str) -> None:
    """parse_json_body returns a body the schema accepts, or raises a documented ApiError."""
    body = attempt(lambda: parse_json_body(raw, content_type, schema))
    if isinstance(body, ApiError):
        error = body
        assert error.code in BODY_CODES, error
        if error.status == 422:
            assert error.field is not None, error
        return
    assert isinstance(body, dict)
    assert not list(validator_for(schema).iter_errors(body))


@pytest.mark.parametrize("schema", REQUEST_SCHEMAS)
@fuzz(400)
@given(raw=st.binary(max_size=200), content_type=content_types)
def test_arbitrary_bytes(schema: str, raw: bytes, content_type: str | None) -> None:
    check_parse(raw, content_type, schema)


@pytest.mark.parametrize("schema", REQUEST_SCHEMAS)
@fuzz(400)
@given(value=st.one_of(json_values, near_bodies))
def test_arbitrary_json(schema: str, value: Any) -> None:
    check_parse(json.dumps(value).encode(), "application/json", schema)


extreme_numbers = st.sampled_from(
    [b"1e400", b"-1e400", b"1" + b"0" * 100, b"1" + b"0" * 5000, b"NaN", b"Infinity",
     b"-0", b"0.0", b"2.0", b"1.5", b"-1", b"true", b"null", b'"5"', b"1E2", b"9" * 19]
)  # fmt: skip


@pytest.mark.parametrize("schema", REQUEST_SCHEMAS)
@fuzz(250)
@given(name=member_names, number=extreme_numbers, rest=near_bodies)
def test_extreme_numbers_in_any_member(
    schema: str, name: str, number: bytes, rest: dict[str, Any]
) -> None:
    text = json.dumps(rest)
    inner = text[1:-1]
    raw = (
        b'{"' + name.encode() + b'": ' + number + (b", " + inner.encode() if inner else b"") + b"}"
    )
    check_parse(raw, "application/json", schema)


@given(depth=st.integers(min_value=1, max_value=200_000), opener=st.sampled_from([b"[", b'{"a":']))
@settings(max_examples=60, database=None)
def test_deep_nesting_is_malformed_or_refused(depth: int, opener: bytes) -> None:
    closer = b"]" if opener == b"[" else b"}"
    for schema in REQUEST_SCHEMAS:
        check_parse(b'{"game": ' + opener * depth + b"1" + closer * depth + b"}", "x", schema)
        check_parse(
            b'{"game": ' + opener * depth + b"1" + closer * depth + b"}",
            "application/json",
            schema,
        )


def test_a_body_nested_just_under_the_parsers_limit_is_refused_not_a_crash() -> None:
    """Deep enough to parse, deep enough to exhaust the schema validator's recursion."""
    for depth in (33, 500, 900):
        for opener, closer in ((b"[", b"]"), (b'{"a":', b"}")):
            raw = b'{"game": ' + opener * depth + b"1" + closer * depth + b"}"
            refusal = attempt(partial(parse_json_body, raw, "application/json", "Action"))
            assert isinstance(refusal, ApiError), refusal
            assert refusal.code in {"invalid_body", "malformed_json"}, refusal
    shallow = b'{"action": "declare", "choice": "in"}'
    assert parse_json_body(shallow, "application/json", "Action") == {
        "action": "declare",
        "choice": "in",
    }


# ----------------------------------------------------------------- query parameters and headers


@pytest.fixture(scope="module")
def app() -> Flask:
    """A bare Flask app carrying the gateway's settings, for request contexts."""
    application = Flask("parser-fuzz")
    application.extensions["cardroom.settings"] = Settings(long_poll_max=30.0)
    return application


# What a server hands the application as a header or query value: latin-1 text
# (WSGI decodes header bytes as latin-1), sometimes shaped like the valid values.
header_text = st.one_of(
    st.text(st.characters(codec="latin-1", exclude_characters="\r\n"), max_size=40),
    st.from_regex(r"\A[ -~]{0,300}\Z"),
    st.sampled_from(["", " ", "Bearer", "Bearer ", "bearer x", "BEARER  tok ", "Basic eDp5"]),
)
number_text = st.one_of(
    st.text(max_size=12),
    st.from_regex(r"\A[+-]?[0-9_]{0,25}(\.[0-9]*)?([eE][+-]?[0-9]{1,4})?\Z"),
    st.sampled_from(
        ["nan", "NaN", "inf", "-inf", "1e400", "1" + "0" * 100, "9" * 5000, "0x10", "\u0661",
         "  5 ", "1_0", "-0", "+3", "2.5", "true", ""]
    ),
)  # fmt: skip


# A header carries latin-1 text without line breaks.
header_numbers = number_text.filter(
    lambda text: all(ord(c) < 256 and c not in "\r\n" for c in text)
)


def call_in(app: Flask, parse: Callable[[], Any], **environ: Any) -> Any:
    """Run one of the routes' parsers in a request context; its value or documented error."""
    with app.test_request_context("/", **environ):
        value = attempt(parse)
    if isinstance(value, ApiError):
        assert value.status in (400, 401), value
    return value


QUERY_PARSERS: dict[str, tuple[Callable[[], Any], Callable[[Any], bool]]] = {
    "limit": (
        lambda: table_routes._int_arg("limit", 20, 1, 100),
        lambda value: isinstance(value, int) and 1 <= value <= 100,
    ),
    "after": (
        lambda: table_routes._int_arg("after", 0, 0, 2**53),
        lambda value: isinstance(value, int) and 0 <= value <= 2**53,
    ),
    "wait": (
        lambda: table_routes._number_arg("wait", 0.0, 0.0, 30.0, whole=False),
        lambda value: isinstance(value, float) and math.isfinite(value) and 0 <= value <= 30,
    ),
}


@pytest.mark.parametrize("name", sorted(QUERY_PARSERS))
@fuzz(400)
@given(raw=number_text)
def test_query_numbers(app: Flask, name: str, raw: str) -> None:
    parse, valid = QUERY_PARSERS[name]
    value = call_in(app, parse, query_string={name: raw})
    if isinstance(value, ApiError):
        assert (value.status, value.code, value.field) == (400, "invalid_parameter", name)
    else:
        assert valid(value), (raw, value)


@fuzz(500)
@given(raw=header_text)
def test_authorization_header(store_service: Any, raw: str) -> None:
    """Any Authorization header resolves to a principal; one that is not a credential's
    form is a refusal kept for the writes (401 invalid_token), never an exception."""
    assert store_service.players is not None
    principal = store_service.players.credentials.resolve(raw)
    if principal.refused is not None:
        assert principal.kind == "anonymous"
        refused = principal.refused
        assert (refused.status, refused.code) == (401, "invalid_token")
        assert "WWW-Authenticate" in refused.headers
    else:
        assert principal.kind == "seat"  # the only form random text can take
        assert raw.split(" ", 1)[0].lower() == "bearer"
        assert principal.token == raw.split(" ", 1)[1].strip()


@fuzz(400)
@given(raw=header_text, body=st.binary(max_size=40))
def test_idempotency_key_header(app: Flask, raw: str, body: bytes) -> None:
    value = call_in(
        app, table_routes._idempotency, headers={"Idempotency-Key": raw}, data=body, method="POST"
    )
    if isinstance(value, ApiError):
        assert (value.status, value.code, value.field) == (
            400,
            "invalid_idempotency_key",
            "Idempotency-Key",
        )
        assert not re.fullmatch(r"[!-~]{1,255}", raw)
    else:
        # the key is kept under its sender's scope (here, no credential)
        scope, _, key = value.key.partition(" ")
        assert scope == "anonymous"
        assert re.fullmatch(r"[!-~]{1,255}", key), value
        assert key == raw


@fuzz(500)
@given(raw=st.one_of(header_text, header_numbers))
def test_last_event_id_header(app: Flask, raw: str) -> None:
    value = call_in(app, table_routes._stream_cursor, headers={"Last-Event-ID": raw})
    if isinstance(value, ApiError):
        assert (value.status, value.code, value.field) == (
            400,
            "invalid_parameter",
            "Last-Event-ID",
        )
    else:
        assert isinstance(value, int)
        assert 0 <= value <= 2**53
        assert str(value) == raw.lstrip("0") or (value == 0 and set(raw) == {"0"})


def _list_items(raw: str) -> list[str]:
    """The elements of a comma-separated list, a comma inside double quotes kept (an
    entity tag may hold one, RFC 9110, 8.8.3)."""
    items, item, quoted = [], "", False
    for character in raw:
        if character == "," and not quoted:
            items.append(item)
            item = ""
            continue
        quoted ^= character == '"'
        item += character
    return [*items, item]


@fuzz(1000)
@given(
    raw=st.one_of(
        header_text,
        st.lists(
            st.sampled_from(['"3"', 'W/"3"', "*", '"4"', " ", '"3,4"', "\xa0", "\t"]), max_size=4
        ).map(",".join),
    ),
    version=st.integers(min_value=1, max_value=10**6),
)
def test_if_match_header(raw: str, version: int) -> None:
    matched = attempt(lambda: if_match(raw).matches(version))  # type: ignore[union-attr]
    items = [item.strip(" \t") for item in _list_items(raw) if item.strip(" \t")]
    well_formed = raw.strip() == "*" or (
        bool(items)
        and all(re.fullmatch(r'(W/)?"[\x21\x23-\x7e\x80-\xff]*"', item) for item in items)
    )
    if not well_formed:
        assert isinstance(matched, ApiError)
        assert (matched.status, matched.code, matched.field) == (
            400,
            "invalid_parameter",
            "If-Match",
        )
        return
    # strong comparison: "*", or the version's strong tag; a weak tag never matches
    assert matched == (raw.strip() == "*" or f'"{version}"' in items)


@fuzz(300)
@given(raw=st.one_of(number_text, header_text, st.sampled_from(["5:", "1.5:", ":", "2:ab"])))
def test_lobby_cursor(store_service: Any, raw: str) -> None:
    page = attempt(lambda: store_service.lobby(Filters(), 5, raw))
    if isinstance(page, ApiError):
        assert (page.status, page.code, page.field) == (400, "invalid_cursor", "cursor")
        return
    assert isinstance(page["tables"], list)
    # a cursor is a lobby's member, or of its former order, "<created_at>" or
    # "<created_at>:<table id>"
    if MEMBER.fullmatch(raw):
        return
    score, _colon, last = raw.partition(":")
    assert math.isfinite(float(score))
    # the former order's own first cursor had no table id after its colon
    assert not last or re.fullmatch(r"[0-9a-f]{1,64}", last)


@pytest.fixture(scope="module")
def store_service(redis_process: Any) -> Iterator[Any]:
    """A table service on the session's Redis (the lobby reads it); no evaluator is called."""
    from api.bootstrap import bootstrap

    if redis_process.process is None:
        redis_process.start()
    services = bootstrap(Settings(redis_url=redis_process.url, evaluator_addr="127.0.0.1:9"))
    yield services.tables
    services.close()
