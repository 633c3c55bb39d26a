"""Answers in the client's language (Accept-Language), on a real Redis and the real
evaluator: problems, table views, event logs and hand histories are said in the language
asked, with Content-Language, and are as they always were without the header."""

from __future__ import annotations

import copy
from typing import Any

from api.i18n.bodies import localise
from tests.support.gateway import Gateway
from tests.support.tables_api import Player


def vary(response: Any) -> set[str]:
    return {n.strip().lower() for v in response.headers.get_all("Vary") for n in v.split(",")}


def in_language(language: str) -> dict[str, str]:
    return {"Accept-Language": language}


def played_deal(gateway: Gateway) -> tuple[str, list[Player]]:
    """A 3-card Guts table whose first deal went to a showdown of two hands."""
    table_id = gateway.create(deal_pause_seconds=60)
    seated = [gateway.sit(table_id, name) for name in ("ann", "bob")]
    assert gateway.act(table_id, seated[0], action="start").status_code == 200
    for player in seated:
        assert gateway.act(table_id, player, action="declare", choice="in").status_code == 200
    return table_id, seated


def descriptions(value: Any) -> list[str]:
    if isinstance(value, dict):
        found = [value["description"]] if isinstance(value.get("description"), str) else []
        return found + [text for child in value.values() for text in descriptions(child)]
    if isinstance(value, list):
        return [text for child in value for text in descriptions(child)]
    return []


def test_a_problem_is_said_in_the_language_asked(gateway: Gateway) -> None:
    english = gateway.call("GET", "/v1/tables/t_nowhere")
    worded = gateway.call("GET", "/v1/tables/t_nowhere", headers=in_language("hu-HU,hu;q=0.9"))
    assert english.status_code == worded.status_code == 404
    assert "Content-Language" not in english.headers
    assert worded.headers["Content-Language"] == "hu"
    assert "accept-language" in vary(english)
    assert "accept-language" in vary(worded)
    said, plain = worded.get_json(), english.get_json()
    for member in ("code", "type", "status", "instance", "field"):
        assert said.get(member) == plain.get(member)
    assert said["title"] == "Nincs ilyen asztal"
    assert plain["title"] == "Table not found"
    assert "'t_nowhere'" in said["detail"]
    assert said["detail"] != plain["detail"]


def test_a_rule_refusal_is_said_in_the_language_asked(gateway: Gateway) -> None:
    table_id, (ann, _) = played_deal(gateway)
    move = {"action": "declare", "choice": "in"}
    path = f"/v1/tables/{table_id}/actions"
    for language in ("et", "en"):
        response = gateway.call("POST", path, ann, json=move, headers=in_language(language))
        problem = response.get_json()
        assert response.headers["Content-Language"] == language
        assert problem["code"] in {"showdown_pending", "no_hand_in_progress"}
        assert problem["type"].endswith(problem["code"])
        assert problem["detail"]
    plain = gateway.call("POST", path, ann, json=move).get_json()
    assert plain["detail"] in {
        "Wait until the showdown has been settled.",
        "Nobody is declaring right now.",
    }


def test_a_move_refused_by_the_rules_keeps_its_code(gateway: Gateway) -> None:
    table_id = gateway.create(deal_pause_seconds=60)
    ann, bob = gateway.sit(table_id, "ann"), gateway.sit(table_id, "bob")
    assert gateway.act(table_id, ann, action="start").status_code == 200
    path = f"/v1/tables/{table_id}/actions"
    move = {"action": "declare", "choice": "in"}
    assert gateway.call("POST", path, ann, json=move).status_code == 200
    plain = gateway.call("POST", path, ann, json=move).get_json()
    worded = gateway.call("POST", path, ann, json=move, headers=in_language("sw")).get_json()
    assert plain["code"] == worded["code"] == "already_declared"
    assert plain["type"] == worded["type"]
    assert plain["detail"] == f"Seat {ann.seat} has already declared."
    assert worded["detail"] == f"Kiti {ann.seat} kimeshaamua."
    assert worded["title"] == "Ameshaamua"
    assert bob.seat != ann.seat


def test_a_table_view_has_its_descriptions_in_the_language_asked(gateway: Gateway) -> None:
    table_id, (ann, _) = played_deal(gateway)
    path = f"/v1/tables/{table_id}"
    plain = gateway.call("GET", path, ann)
    worded = gateway.call("GET", path, ann, headers=in_language("et"))
    assert "Content-Language" not in plain.headers
    assert worded.headers["Content-Language"] == "et"
    english, estonian = plain.get_json(), worded.get_json()
    assert descriptions(english), "a showdown shows its hands' descriptions"
    assert estonian == localise(copy.deepcopy(english), "et")
    assert descriptions(estonian) != descriptions(english)


def test_an_event_log_has_lines_only_when_asked(gateway: Gateway) -> None:
    table_id, _ = played_deal(gateway)
    path = f"/v1/tables/{table_id}/events?after=0"
    plain = gateway.call("GET", path).get_json()
    assert all("line" not in item for item in plain["events"])
    for language in ("en", "ps"):
        response = gateway.call("GET", path, headers=in_language(language))
        assert response.headers["Content-Language"] == language
        worded = response.get_json()
        assert next(item.pop("line") for item in worded["events"])
        assert worded == localise(copy.deepcopy(plain), language) | {"events": worded["events"]}
    english = gateway.call("GET", path, headers=in_language("en")).get_json()
    lines = {item["type"]: item["line"] for item in english["events"]}
    assert lines["table_created"] == "The table opened"
    assert lines["seated"].endswith("sat down with 100 chips")
    assert lines["showdown"] == "Showdown"


def test_a_hand_history_is_said_in_the_language_asked(gateway: Gateway) -> None:
    table_id, _ = played_deal(gateway)
    path = f"/v1/tables/{table_id}/hands/1"
    plain = gateway.call("GET", path)
    worded = gateway.call("GET", path, headers=in_language("sw-KE"))
    assert plain.status_code == worded.status_code == 200
    assert worded.headers["Content-Language"] == "sw"
    assert "accept-language" in vary(worded)
    english, swahili = plain.get_json(), worded.get_json()
    assert all("line" not in item for item in english["events"])
    assert all("line" in item for item in swahili["events"])
    assert swahili == localise(copy.deepcopy(english), "sw")
    assert descriptions(swahili)
    assert descriptions(swahili) != descriptions(english)


def test_a_language_nobody_speaks_here_is_answered_in_english(gateway: Gateway) -> None:
    response = gateway.call("GET", "/v1/tables/t_nowhere", headers=in_language("de-DE,fr"))
    assert response.headers["Content-Language"] == "en"
    assert response.get_json()["title"] == "Table not found"


def first_event(gateway: Gateway, path: str, language: str) -> tuple[Any, str]:
    """The stream's answer and its text up to the table's first event."""
    stream = gateway.call("GET", path, headers=in_language(language), buffered=False)
    text = ""
    for chunk in stream.response:
        text += chunk.decode() if isinstance(chunk, bytes) else chunk
        if "event: table_created" in text:
            break
    stream.close()
    return stream, text


def test_an_event_stream_has_lines_when_asked(gateway: Gateway) -> None:
    table_id = gateway.create()
    stream, text = first_event(gateway, f"/v1/tables/{table_id}/events/stream", "hu")
    assert stream.mimetype == "text/event-stream"
    assert stream.headers["Content-Language"] == "hu"
    assert '"line":"Az asztal megnyílt"' in text


def test_a_streams_lang_parameter_takes_the_place_of_accept_language(gateway: Gateway) -> None:
    table_id = gateway.create()
    path = f"/v1/tables/{table_id}/events/stream?lang=hu"
    stream, text = first_event(gateway, path, "fr-FR,sw;q=0.5")
    assert stream.headers["Content-Language"] == "hu"
    assert '"line":"Az asztal megnyílt"' in text
    refused = gateway.call("GET", f"/v1/tables/{table_id}/events/stream?lang=fr")
    assert refused.status_code == 400
    problem = refused.get_json()
    assert (problem["code"], problem["field"]) == ("invalid_parameter", "lang")


def test_an_evaluation_is_described_in_the_language_asked(gateway: Gateway) -> None:
    body = {"game": "guts3", "hands": ["Kh Kd 9c"]}
    plain = gateway.call("POST", "/v1/evaluate", json=body)
    worded = gateway.call("POST", "/v1/evaluate", json=body, headers=in_language("et"))
    assert plain.status_code == worded.status_code == 200, plain.get_json()
    assert descriptions(plain.get_json()) == ["Pair of kings, 9 kicker"]
    assert descriptions(worded.get_json()) == ["Kuningate paar, lisakaart 9"]
    assert worded.headers["Content-Language"] == "et"


def test_each_language_has_an_etag_of_its_own(gateway: Gateway) -> None:
    """A worded table's ETag carries its language, so a client that changes language is
    not told 304 for the other language's words; If-Match still names the version."""
    table_id, _ = played_deal(gateway)
    path = f"/v1/tables/{table_id}"
    english = gateway.call("GET", path)
    version = english.headers["ETag"].strip('"')
    swahili = gateway.call("GET", path, headers=in_language("sw"))
    assert swahili.headers["ETag"] == f'"{version}-sw"'
    held = {**in_language("sw"), "If-None-Match": swahili.headers["ETag"]}
    again = gateway.call("GET", path, headers=held)
    assert again.status_code == 304
    assert again.headers["ETag"] == f'"{version}-sw"'
    other = gateway.call("GET", path, headers={**held, "Accept-Language": "hu"})
    assert other.status_code == 200
    assert other.headers["ETag"] == f'"{version}-hu"'
    assert other.headers["Content-Language"] == "hu"
    plain = gateway.call("GET", path, headers={"If-None-Match": swahili.headers["ETag"]})
    assert plain.status_code == 200
    assert plain.headers["ETag"] == f'"{version}"'
    fresh = gateway.create()
    players = [gateway.sit(fresh, name) for name in ("cy", "di")]
    fresh_path = f"/v1/tables/{fresh}"
    tag = gateway.call("GET", fresh_path, headers=in_language("sw")).headers["ETag"]
    start = {"json": {"action": "start"}, "headers": {**in_language("sw"), "If-Match": tag}}
    assert gateway.call("POST", f"{fresh_path}/actions", players[0], **start).status_code == 200
    stale = gateway.call("POST", f"{fresh_path}/actions", players[0], **start)
    assert stale.status_code == 412
    assert stale.get_json()["code"] == "stale_version"
