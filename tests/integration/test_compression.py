"""Compression and caching headers through the in-process gateway (`api.http.compression`).

The step applies to the moves' endpoint below Flask and to Flask's routes alike; event
streams are never compressed; entity tags stay usable in any coding.
"""

from __future__ import annotations

import gzip
import json
from typing import Any

import brotli

from tests.support.gateway import Gateway
from tests.support.tables_api import Player


def decoded(response: Any) -> Any:
    """The JSON of an answer, decoded from its Content-Encoding."""
    body = response.get_data()
    assert response.headers.get("Content-Length") == str(len(body))
    coding = response.headers.get("Content-Encoding")
    if coding == "br":
        body = brotli.decompress(body)
    elif coding == "gzip":
        body = gzip.decompress(body)
    else:
        assert coding is None
    return json.loads(body)


def dealt(gateway: Gateway) -> tuple[str, Player, Player]:
    """A Guts table whose first deal is settled, and its two seats."""
    table_id = gateway.create(deal_pause_seconds=60)
    ann = gateway.sit(table_id, "ann")
    bo = gateway.sit(table_id, "bo")
    assert gateway.act(table_id, ann, action="start").status_code == 200
    assert gateway.act(table_id, ann, action="declare", choice="in").status_code == 200
    return table_id, ann, bo


def test_a_table_read_decodes_to_the_same_json_in_br_gzip_and_identity(gateway: Gateway) -> None:
    table_id, ann, _ = dealt(gateway)
    path = f"/v1/tables/{table_id}"
    answers = {
        coding: gateway.call("GET", path, ann, headers={"Accept-Encoding": accept})
        for coding, accept in (("br", "gzip, br"), ("gzip", "gzip"), (None, "identity"))
    }
    plain = answers[None]
    assert plain.headers.get("Content-Encoding") is None
    for coding, response in answers.items():
        assert response.status_code == 200
        assert response.headers.get("Content-Encoding") == coding
        assert "Accept-Encoding" in response.headers["Vary"]
        assert "Authorization" in response.headers["Vary"]
        assert decoded(response) == decoded(plain)
    version = plain.headers["ETag"].strip('"')
    assert answers["br"].headers["ETag"] == f'"{version}-br"'
    assert answers["gzip"].headers["ETag"] == f'"{version}-gzip"'
    assert len(answers["br"].get_data()) < len(plain.get_data())


def test_a_compressed_tag_revalidates_and_matches_a_move(gateway: Gateway) -> None:
    table_id, ann, bo = dealt(gateway)
    path = f"/v1/tables/{table_id}"
    read = gateway.call("GET", path, bo, headers={"Accept-Encoding": "gzip"})
    tag = read.headers["ETag"]
    assert tag.endswith('-gzip"')
    again = gateway.call("GET", path, bo, headers={"Accept-Encoding": "gzip", "If-None-Match": tag})
    assert again.status_code == 304
    assert again.headers["ETag"] == tag
    moved = gateway.call(
        "POST",
        f"/v1/tables/{table_id}/actions",
        bo,
        json={"action": "declare", "choice": "in"},
        headers={"If-Match": tag, "Accept-Encoding": "gzip, br"},
    )
    assert moved.status_code == 200, moved.get_data()
    assert moved.headers.get("Content-Encoding") == "br"  # a settling move's answer
    assert decoded(moved)["table"]["phase"] == "between_deals"
    stale = gateway.call(
        "POST",
        f"/v1/tables/{table_id}/actions",
        ann,
        json={"action": "start"},
        headers={"If-Match": tag, "Accept-Encoding": "gzip"},
    )
    assert stale.status_code == 412


def test_small_answers_and_event_streams_go_uncompressed(gateway: Gateway) -> None:
    table_id, _ann, _ = dealt(gateway)
    small = gateway.call("GET", "/healthz", headers={"Accept-Encoding": "gzip, br"})
    assert small.status_code == 200
    assert small.headers.get("Content-Encoding") is None
    stream = gateway.call(
        "GET",
        f"/v1/tables/{table_id}/events/stream",
        headers={"Accept-Encoding": "gzip, br"},
        buffered=False,
    )
    assert stream.mimetype == "text/event-stream"
    assert stream.headers.get("Content-Encoding") is None
    text = ""
    for chunk in stream.response:  # each event as it is written, in plain text
        text += chunk.decode() if isinstance(chunk, bytes) else chunk
        if "event: table_created" in text:
            break
    stream.close()
    assert "id: 1\n" in text


def test_a_problem_above_the_threshold_may_be_compressed(gateway: Gateway) -> None:
    response = gateway.call(
        "POST",
        "/v1/tables",
        gateway.sign_up(),
        json={"game": "guts", "x" * 2000: 1},
        headers={"Accept-Encoding": "gzip"},
    )
    assert response.status_code >= 400
    body = decoded(response)
    assert body["status"] == response.status_code


def test_the_lobby_is_cacheable_and_revalidates(gateway: Gateway) -> None:
    dealt(gateway)
    lobby = gateway.call("GET", "/v1/tables", headers={"Accept-Encoding": "br"})
    assert lobby.status_code == 200
    assert lobby.headers["Cache-Control"] == "public, max-age=2"
    tag = lobby.headers["ETag"]
    for sent in (tag, tag.replace("-br", "")):
        again = gateway.call(
            "GET", "/v1/tables", headers={"Accept-Encoding": "br", "If-None-Match": sent}
        )
        assert again.status_code == 304
        assert again.get_data() == b""


def test_a_hand_history_is_kept_by_its_viewer_only(gateway: Gateway) -> None:
    table_id, ann, bo = dealt(gateway)
    gateway.act(table_id, bo, action="declare", choice="in")
    history = gateway.call(
        "GET", f"/v1/tables/{table_id}/hands/1", ann, headers={"Accept-Encoding": "gzip"}
    )
    assert history.status_code == 200
    assert history.headers["Cache-Control"].startswith("private, max-age=")
    assert "Authorization" in history.headers["Vary"]
    assert history.headers.get("Content-Encoding") == "gzip"
    assert decoded(history)["fairness"]["commitment"]
