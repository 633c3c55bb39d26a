"""Refusals said in the language asked, words and all: each request below is refused as
a client would be, in sw, ps, hu and et, and its title and detail keep no English word
(the words a refusal fills in, such as what a credential is or what a parameter must
be, included). English answers stay as they were."""

from __future__ import annotations

import pytest

from api.i18n import LANGUAGES, SOURCE_LANGUAGE
from tests.support.gateway import Gateway
from tests.support.words import english_words

TRANSLATED = [language for language in LANGUAGES if language != SOURCE_LANGUAGE]


def refusals(gateway: Gateway) -> list[tuple[str, str, str | None, str]]:
    """(method, path, body, code) of requests the gateway refuses."""
    guts = gateway.create()
    paiute = gateway.create(game="paiute")
    return [
        ("POST", "/v1/tables", '{"game": "guts", "cards": 4}', "invalid_field"),
        ("POST", "/v1/tables", '{"game": "guts", "ante": 0}', "invalid_field"),
        ("POST", "/v1/tables", '{"game": "guts", "ante": "one"}', "invalid_type"),
        ("POST", "/v1/tables", '{"game": "poker"}', "unsupported_game"),
        ("POST", "/v1/tables", '{"game": "guts", "colour": 1}', "unknown_field"),
        ("POST", "/v1/tables", '{"cards": 3}', "missing_field"),
        ("POST", "/v1/tables", '{"game": "guts",', "malformed_json"),
        ("POST", f"/v1/tables/{paiute}/actions", '{"action": "bet"}', "unsupported_action"),
        ("POST", f"/v1/tables/{guts}/actions", '{"action": "start"}', "not_seated"),
        ("POST", f"/v1/tables/{guts}/seats", '{"buy_in": 0}', "invalid_field"),
        ("POST", f"/v1/tables/{guts}/seats", '{"buy_in": 100000}', "invalid_buy_in"),
        ("GET", f"/v1/tables/{guts}/events?after=x", None, "invalid_parameter"),
        ("GET", f"/v1/tables/{guts}/events?wait=999", None, "invalid_parameter"),
        ("GET", "/v1/tables/nope", None, "table_not_found"),
        ("GET", f"/v1/tables/{guts}/hands/7", None, "hand_not_found"),
        ("GET", "/v1/nowhere", None, "route_not_found"),
        ("PUT", "/v1/tables", "{}", "method_not_allowed"),
        ("POST", "/v1/evaluate", '{"game": "guts3", "hands": ["Ah 1x Tc"]}', "invalid_hand"),
        ("POST", "/v1/evaluate", '{"game": "guts3", "hands": ["Ah Tc"]}', "invalid_hand"),
        ("POST", "/v1/evaluate", '{"game": "guts3", "odds": {"hand": "Ah Tc Xx", "opponents": 1}}',
         "invalid_hand"),
        ("POST", "/v1/evaluate", '{"game": "guts3", "hands": ["Ah Ah Tc"]}', "invalid_hand"),
        ("POST", "/v1/evaluate", '{"game": "guts2", "hands": ["Ah Tc"], "wild_rank": 7}',
         "invalid_field"),
        ("POST", "/v1/evaluate", '{"game": "paiute", "hands": ["Ah Tc 2c 3c 4c"]}',
         "missing_field"),
    ]  # fmt: skip


@pytest.mark.parametrize("language", TRANSLATED)
def test_every_refusal_is_said_without_english(gateway: Gateway, language: str) -> None:
    account = gateway.sign_up("ann")
    wrong = []
    for method, path, body, code in refusals(gateway):
        headers = {"Accept-Language": language, "Content-Type": "application/json"}
        headers.update(account.auth)
        answer = gateway.client.open(path, method=method, data=body, headers=headers)
        english = gateway.client.open(
            path, method=method, data=body, headers={**headers, "Accept-Language": "en"}
        ).get_json()
        said = answer.get_json()
        assert said is not None, (method, path, body)
        assert said.get("code") == code, (method, path, body, said)
        assert answer.headers["Content-Language"] == language
        left = english_words(f"{said['title']} {said['detail']}", language)
        if left or said["detail"] == english["detail"] or said["title"] == english["title"]:
            wrong.append((code, left, said["detail"]))
    assert not wrong, f"{language}: English left in {wrong}"


def test_an_unknown_move_names_the_moves_of_its_tables_game(gateway: Gateway) -> None:
    account = gateway.sign_up("ann")
    for game, moves in (
        ("guts", '"start", "declare", "rebuy", "back"'),
        ("paiute", '"start", "rebuy", "draw", "discard", "call", "back"'),
    ):
        table_id = gateway.create(game=game)
        refused = gateway.call(
            "POST", f"/v1/tables/{table_id}/actions", account, json={"action": "bet"}
        ).get_json()
        assert refused["code"] == "unsupported_action"
        assert refused["detail"] == f"A {game} table has no 'bet' move; its moves are {moves}."
    refused = gateway.call(
        "POST",
        f"/v1/tables/{table_id}/actions",
        account,
        json={"action": "declare", "choice": "in"},
    )
    assert refused.status_code == 403  # a move of another game is the rules' to refuse


def test_evaluated_hands_are_said_in_canonical_text(gateway: Gateway) -> None:
    answer = gateway.client.post(
        "/v1/evaluate", json={"game": "guts3", "hands": ["ah 10D tc", "2c,3c , 4c"]}
    ).get_json()
    assert [result["hand"] for result in answer["results"]] == ["Ah Td Tc", "2c 3c 4c"]
