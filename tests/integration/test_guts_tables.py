"""Guts tables through the HTTP API, on a real Redis and the real evaluator."""

from __future__ import annotations

import hashlib
import json
import threading
import time
from typing import Any

import pytest
from werkzeug.datastructures import Headers

from api.adapters.store import hand_key
from api.app import create_app
from cardroom_client import FairnessError, HandHistory, verify_fairness
from tests.support.gateway import Gateway, gateway_settings
from tests.support.play import opened_cards, play_guts_game, wait_for
from tests.support.problems import assert_problem
from tests.support.tables_api import Player

CARD_TEXTS = {rank + suit for rank in "23456789TJQKA" for suit in "cdhs"}


def start_deal(gateway: Gateway, players: int = 2, **options: Any) -> tuple[str, list[Player]]:
    options.setdefault("deal_pause_seconds", 60)
    table_id = gateway.create(**options)
    seated = [gateway.sit(table_id, f"p{i}") for i in range(players)]
    response = gateway.act(table_id, seated[0], action="start")
    assert response.status_code == 200, response.get_json()
    return table_id, seated


# ---------------------------------------------------------------- tables and seats


def test_create_with_defaults_and_read_back(gateway: Gateway) -> None:
    response = gateway.call("POST", "/v1/tables", json={"game": "guts", "name": "Friday"})
    assert response.status_code == 201
    body = response.get_json()["table"]
    assert response.headers["Location"] == f"/v1/tables/{body['id']}"
    options = body["options"]
    assert options["cards"] == 3
    assert options["ante"] == 1
    assert options["ante_mode"] == "empty_pot"
    assert options["declare"] == "simultaneous"
    assert options["all_out_ante"] is True
    assert options["wimp"] is False
    assert options["losers_pay"] == "all"
    assert options["ghost"] is False
    assert options["cap"] is None
    assert options["turn_seconds"] == 30
    table = gateway.table(body["id"])
    assert table["name"] == "Friday"
    assert table["phase"] == "waiting"


@pytest.mark.parametrize(
    ("body", "status", "code", "field"),
    [
        ({"game": "guts", "cards": 4}, 422, None, "cards"),
        ({"game": "guts", "ante": 0}, 422, None, "ante"),
        ({"game": "guts", "ante": True}, 422, None, "ante"),
        ({"game": "guts", "declare": "shouting"}, 422, None, "declare"),
        ({"game": "guts", "turn_seconds": 3601}, 422, None, "turn_seconds"),
        ({"game": "guts", "colour": "red"}, 422, "unknown_field", "colour"),
        ({"game": "chess"}, 422, None, "game"),
        ({}, 422, "missing_field", "game"),
    ],
)
def test_bad_options_are_refused_naming_the_field(
    gateway: Gateway, body: dict[str, Any], status: int, code: str | None, field: str
) -> None:
    response = gateway.call("POST", "/v1/tables", json=body)
    assert response.status_code == status, response.get_json()
    problem_body = response.get_json()
    if code is not None:
        assert problem_body["code"] == code
    assert field in (problem_body.get("field") or "") + problem_body["detail"]


def test_malformed_json_and_wrong_media_type(gateway: Gateway) -> None:
    assert_problem(
        gateway.call("POST", "/v1/tables", data="{not json", content_type="application/json"),
        400,
        "malformed_json",
    )
    response = gateway.call(
        "POST", "/v1/tables", data="game=guts", content_type="application/x-www-form-urlencoded"
    )
    assert response.status_code == 415
    assert response.mimetype == "application/problem+json"


def test_unknown_table_and_route(gateway: Gateway) -> None:
    assert assert_problem(gateway.call("GET", "/v1/tables/nope"), 404, "table_not_found")[
        "field"
    ] == ("table_id")
    response = gateway.call("GET", "/v1/nothing-here")
    assert response.status_code == 404
    assert response.mimetype == "application/problem+json"


def test_lobby_pages(gateway: Gateway) -> None:
    ids = [gateway.create(name=f"t{i}") for i in range(6)]
    for number, table_id in enumerate(ids[1:]):
        for seat in range(number % 3 + 1):
            gateway.sit(table_id, f"p{seat}")
    first = gateway.call("GET", "/v1/tables?limit=2").get_json()
    assert first["tables"][0]["seats_taken"] == 3
    assert first["tables"][0]["seats_free"] == 7
    second = gateway.call("GET", f"/v1/tables?limit=2&cursor={first['next']}").get_json()
    third = gateway.call("GET", f"/v1/tables?limit=2&cursor={second['next']}").get_json()
    pages = (first, second, third)
    seen = [t["id"] for page in pages for t in page["tables"]]
    # the table nobody sits at is not listed; the fullest come first
    assert sorted(seen) == sorted(ids[1:])
    assert [t["seats_taken"] for page in pages for t in page["tables"]] == [3, 2, 2, 1, 1]
    assert third["next"] is None
    assert [page["next_cursor"] for page in pages] == [page["next"] for page in pages]
    assert_problem(gateway.call("GET", "/v1/tables?limit=0"), 400, "invalid_parameter")


def test_lobby_pages_of_the_former_order_skip_no_table_created_at_the_same_instant(
    gateway: Gateway,
) -> None:
    ids = [gateway.create(name=f"t{i}") for i in range(7)]
    for table_id in ids:
        gateway.sit(table_id, "solo")
    store = gateway.app.extensions["cardroom.service"].store
    # several gateway processes can create tables within one clock tick
    store.client.zadd("tables", dict.fromkeys(ids, 1_700_000_000.0))
    seen: list[str] = []
    # a cursor the lobby gave out in its former order, newest first, pages on in it
    cursor = f"&cursor={1_700_000_001.0!r}:"
    while True:
        page = gateway.call("GET", f"/v1/tables?limit=2{cursor}").get_json()
        seen += [t["id"] for t in page["tables"]]
        if page["next"] is None:
            break
        cursor = f"&cursor={page['next']}"
    assert sorted(seen) == sorted(ids)
    assert len(seen) == len(ids)


def test_seat_token_shown_once_and_own_cards_only(gateway: Gateway) -> None:
    table_id, (alice, bob) = start_deal(gateway)
    mine = gateway.table(table_id, alice)
    assert mine["you"]["seat"] == alice.seat
    assert len(mine["you"]["cards"]) == 3
    theirs = gateway.table(table_id, bob)
    assert not set(mine["you"]["cards"]) & set(theirs["you"]["cards"])
    spectator = gateway.table(table_id)
    assert spectator["you"] is None
    assert "token" not in str(spectator)
    # a credential that does not hold is ignored by a read of what is public, and said so
    forged = gateway.call(
        "GET", f"/v1/tables/{table_id}", headers={"Authorization": "Bearer not-a-token"}
    )
    assert forged.status_code == 200
    assert forged.get_json()["you"] is None
    assert 'error="invalid_token"' in forged.headers["WWW-Authenticate"]
    # the player's own key sees the seat as its token does
    assert alice.account is not None
    assert gateway.table(table_id, alice.account)["you"] == mine["you"]


def test_a_seat_taken_during_a_game_waits_for_the_next_game(gateway: Gateway) -> None:
    table_id, _players = start_deal(gateway)
    late = gateway.call("POST", f"/v1/tables/{table_id}/seats", json={"name": "late", "buy_in": 50})
    assert late.status_code == 201
    assert late.get_json()["waiting"] is True
    table = gateway.table(table_id)
    assert table["seats"][str(late.get_json()["seat"])]["status"] == "waiting"


def test_etag_and_if_match(gateway: Gateway) -> None:
    table_id, (alice, bob) = start_deal(gateway)
    response = gateway.call("GET", f"/v1/tables/{table_id}", alice)
    etag = response.headers["ETag"]
    assert (
        gateway.call(
            "GET", f"/v1/tables/{table_id}", alice, headers={"If-None-Match": etag}
        ).status_code
        == 304
    )
    stale = '"1"'
    assert_problem(
        gateway.call(
            "POST",
            f"/v1/tables/{table_id}/actions",
            alice,
            json={"action": "declare", "choice": "in"},
            headers={"If-Match": stale},
        ),
        412,
        "stale_version",
    )
    fresh = gateway.call(
        "POST",
        f"/v1/tables/{table_id}/actions",
        alice,
        json={"action": "declare", "choice": "in"},
        headers={"If-Match": etag},
    )
    assert fresh.status_code == 200, fresh.get_json()
    assert fresh.headers["ETag"] != etag
    current = fresh.headers["ETag"]
    declare = {"action": "declare", "choice": "in"}
    actions = f"/v1/tables/{table_id}/actions"
    # If-Match compares strongly (RFC 9110, 13.1.1): a weak tag never matches
    weak = gateway.call("POST", actions, bob, json=declare, headers={"If-Match": f"W/{current}"})
    assert_problem(weak, 412, "stale_version")
    # a comma may stand inside an entity tag: another table's tag, not a malformed list
    other = gateway.call("POST", actions, bob, json=declare, headers={"If-Match": '"4,5"'})
    assert_problem(other, 412, "stale_version")
    for malformed in ("4", '"4', "W/", '"4" "5"'):
        refused = gateway.call("POST", actions, bob, json=declare, headers={"If-Match": malformed})
        assert assert_problem(refused, 400, "invalid_parameter")["field"] == "If-Match"
    anything = gateway.call(
        "POST", actions, bob, json=declare, headers={"If-Match": f'"0", {current}'}
    )
    assert anything.status_code == 200, anything.get_json()


def test_if_none_match_compares_weakly_and_takes_lists(gateway: Gateway) -> None:
    table_id, (alice, _) = start_deal(gateway)
    path = f"/v1/tables/{table_id}"
    etag = gateway.call("GET", path, alice).headers["ETag"]
    for header in (etag, f"W/{etag}", "*", f'"x", {etag}', f" , {etag} ,"):
        response = gateway.call("GET", path, alice, headers={"If-None-Match": header})
        assert response.status_code == 304, header
        assert response.headers["ETag"] == etag
    for header in ('"x"', "4", f"{etag[:-1]}"):  # another tag, or none that parses
        response = gateway.call("GET", path, alice, headers={"If-None-Match": header})
        assert response.status_code == 200, header


def test_idempotent_retries(gateway: Gateway) -> None:
    table_id, (alice, _bob) = start_deal(gateway)
    headers = {"Idempotency-Key": "declare-1"}
    first = gateway.call(
        "POST",
        f"/v1/tables/{table_id}/actions",
        alice,
        json={"action": "declare", "choice": "in"},
        headers=headers,
    )
    again = gateway.call(
        "POST",
        f"/v1/tables/{table_id}/actions",
        alice,
        json={"action": "declare", "choice": "in"},
        headers=headers,
    )
    assert first.status_code == again.status_code == 200
    assert first.get_json() == again.get_json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert_problem(
        gateway.call(
            "POST",
            f"/v1/tables/{table_id}/actions",
            alice,
            json={"action": "declare", "choice": "out"},
            headers=headers,
        ),
        409,
        "idempotency_key_reused",
    )
    declared = [e for e in gateway.events(table_id)["events"] if e["type"] == "declared"]
    assert len(declared) == 1


def test_a_retry_is_answered_after_the_request_took_the_seat_away(gateway: Gateway) -> None:
    """Leaving ends the seat token; a retry of that request still gets its answer."""
    table_id = gateway.create()
    alice, bob = gateway.sit(table_id, "alice"), gateway.sit(table_id, "bob")
    path = f"/v1/tables/{table_id}/seats/{bob.seat}"
    key = {"Idempotency-Key": "leave-1"}
    first = gateway.call("DELETE", path, bob, headers=key)
    assert first.status_code == 200, first.get_json()
    again = gateway.call("DELETE", path, bob, headers=key)
    assert again.status_code == 200, again.get_json()
    assert again.get_json() == first.get_json()
    assert again.headers["Idempotent-Replayed"] == "true"
    # the key is no pass: without it, or from another seat, the token is gone or wrong
    assert_problem(gateway.call("DELETE", path, bob), 401, "invalid_token")
    assert_problem(gateway.call("DELETE", path, alice, headers=key), 403, "wrong_seat")
    assert [e["type"] for e in gateway.events(table_id)["events"]].count("left") == 1


def test_idempotent_seat_replays_the_same_token(gateway: Gateway) -> None:
    table_id = gateway.create()
    carol, mallory = gateway.sign_up("carol"), gateway.sign_up("mallory")
    headers = {"Idempotency-Key": "sit-carol"}
    body = {"name": "carol", "buy_in": 40}
    path = f"/v1/tables/{table_id}/seats"
    first = gateway.call("POST", path, carol, json=body, headers=headers)
    again = gateway.call("POST", path, carol, json=body, headers=headers)
    assert first.status_code == again.status_code == 201
    assert again.headers["Idempotent-Replayed"] == "true"
    assert first.get_json()["token"] == again.get_json()["token"]
    assert len(gateway.table(table_id)["seats"]) == 1
    # the key is carol's: the same key and body from another player is another request
    # (here refused: the name is carol's seat's), never carol's token
    other = gateway.call("POST", path, mallory, json=body, headers=headers)
    assert "Idempotent-Replayed" not in other.headers
    assert first.get_json()["token"] not in other.get_data(as_text=True)
    assert_problem(other, 409, "name_taken")
    created = gateway.call(
        "POST", "/v1/tables", carol, json={"game": "guts"}, headers={"Idempotency-Key": "t"}
    )
    replay = gateway.call(
        "POST", "/v1/tables", carol, json={"game": "guts"}, headers={"Idempotency-Key": "t"}
    )
    assert created.get_json()["table"]["id"] == replay.get_json()["table"]["id"]
    elsewhere = gateway.call(
        "POST", "/v1/tables", mallory, json={"game": "guts"}, headers={"Idempotency-Key": "t"}
    )
    assert elsewhere.status_code == 201
    assert elsewhere.get_json()["table"]["id"] != created.get_json()["table"]["id"]


# ---------------------------------------------------------------- rule errors


def test_illegal_moves_get_stable_codes_and_change_nothing(gateway: Gateway) -> None:
    table_id = gateway.create(declare="sequential", deal_pause_seconds=60)
    alice, bob, carol = (gateway.sit(table_id, name) for name in ("alice", "bob", "carol"))
    assert_problem(
        gateway.act(table_id, alice, action="declare", choice="in"), 409, "no_hand_in_progress"
    )
    assert gateway.act(table_id, alice, action="start").status_code == 200
    before = gateway.table(table_id)
    turn = before["pending"]["seats"][0]
    waiting = next(p for p in (alice, bob, carol) if p.seat != turn)
    assert_problem(
        gateway.act(table_id, waiting, action="declare", choice="in"), 409, "not_your_turn"
    )
    assert_problem(gateway.act(table_id, waiting, action="start"), 409, "already_started")
    assert_problem(
        gateway.act(table_id, waiting, action="declare", choice="maybe"), 422, "invalid_choice"
    )
    assert_problem(
        gateway.act(table_id, waiting, action="rebuy", amount=10), 409, "game_in_progress"
    )
    after = gateway.table(table_id)
    assert after["version"] == before["version"]
    mover = next(p for p in (alice, bob, carol) if p.seat == turn)
    assert gateway.act(table_id, mover, action="declare", choice="in").status_code == 200
    assert_problem(
        gateway.act(table_id, mover, action="declare", choice="out"), 409, "already_declared"
    )


def test_moves_need_a_seat_token(gateway: Gateway) -> None:
    table_id, _ = start_deal(gateway)
    assert_problem(
        gateway.call(
            "POST", f"/v1/tables/{table_id}/actions", json={"action": "declare", "choice": "in"}
        ),
        401,
        "missing_token",
    )


# ---------------------------------------------------------------- whole deals


def test_simultaneous_declarations_stay_hidden_until_all_declared(gateway: Gateway) -> None:
    table_id, (alice, bob, carol) = start_deal(gateway, players=3)
    gateway.act(table_id, alice, action="declare", choice="in")
    for viewer in (bob, carol, None):
        table = gateway.table(table_id, viewer)
        assert table["deal"]["declarations"] == {}
        assert "in" not in str(
            [
                e["data"]
                for e in gateway.events(table_id, viewer)["events"]
                if e["type"] in ("declared", "your_declaration")
            ]
        )
    assert gateway.table(table_id, alice)["you"]["declaration"] == "in"
    gateway.act(table_id, bob, action="declare", choice="out")
    gateway.act(table_id, carol, action="declare", choice="in")
    revealed = [
        e for e in gateway.events(table_id)["events"] if e["type"] == "declarations_revealed"
    ]
    assert revealed[0]["data"]["choices"] == {
        str(alice.seat): "in",
        str(bob.seat): "out",
        str(carol.seat): "in",
    }
    table = gateway.table(table_id)
    shown = table["deal"]["shown"]
    assert set(shown) == {str(alice.seat), str(carol.seat)}


def test_a_watcher_sees_the_timeout_and_reveal_within_a_second(gateway: Gateway) -> None:
    table_id, (_alice, _bob) = start_deal(gateway, turn_seconds=1)
    deadline = gateway.table(table_id)["deadline"]
    cursor = gateway.events(table_id)["next"]
    seen: list[str] = []
    while "declarations_revealed" not in seen:
        page = gateway.events(table_id, after=cursor, wait=5)
        seen += [e["type"] for e in page["events"]]
        cursor = page["next"]
        assert time.time() < deadline + 1.0
    assert seen.count("timeout") == 2
    assert time.time() - deadline < 1.0


def test_a_lone_in_player_wins_without_showing_and_a_new_game_begins(gateway: Gateway) -> None:
    table_id, (alice, bob) = start_deal(gateway)
    alice_cards = gateway.table(table_id, alice)["you"]["cards"]
    gateway.act(table_id, alice, action="declare", choice="in")
    gateway.act(table_id, bob, action="declare", choice="out")
    table = gateway.table(table_id)
    assert table["pot"] == 0
    assert table["seats"][str(alice.seat)]["stack"] == 101
    assert table["seats"][str(bob.seat)]["stack"] == 99
    everything = str([body for _, body in gateway.received if _ != "p0"])
    for card in alice_cards:
        assert f"'{card}'" not in everything


def test_showdown_losers_pay_the_pot(gateway: Gateway) -> None:
    table_id, (alice, bob) = start_deal(gateway)
    gateway.act(table_id, alice, action="declare", choice="in")
    gateway.act(table_id, bob, action="declare", choice="in")
    table = gateway.table(table_id)
    stacks = sorted(table["seats"][str(p.seat)]["stack"] for p in (alice, bob))
    ranks = table["deal"]["ranks"]
    if ranks[str(alice.seat)]["strength"] == ranks[str(bob.seat)]["strength"]:
        assert stacks == [100, 100]
    else:
        # pot 2 from antes: the winner takes it (+1 net), the loser pays 2 into the next pot
        assert stacks == [97, 101]
        assert table["pot"] == 2


def test_a_game_abandoned_at_the_opening_of_a_deal_is_in_that_deals_history(
    gateway: Gateway,
) -> None:
    table_id = gateway.create(deal_pause_seconds=0.2, turn_seconds=60)
    ann, bob = gateway.sit(table_id, "ann"), gateway.sit(table_id, "bob")
    assert gateway.act(table_id, ann, action="start").status_code == 200
    cy = gateway.sit(table_id, "cy")  # during the game: waits for the next one
    for player in (ann, bob):  # nobody in: the pot carries
        assert gateway.act(table_id, player, action="declare", choice="out").status_code == 200
    # bob leaves between deals: at the next opening the game has one seat, and ends
    assert gateway.call("DELETE", f"/v1/tables/{table_id}/seats/{bob.seat}", bob).status_code == 200
    wait_for(lambda: gateway.table(table_id)["hand_number"] == 2)
    # the deal's history is written when it ends: everyone goes out
    table = gateway.table(table_id)
    for seat in table["deal"]["players"]:
        player = ann if seat == ann.seat else cy
        assert gateway.act(table_id, player, action="declare", choice="out").status_code == 200
    answer = gateway.call("GET", f"/v1/tables/{table_id}/hands/2")
    assert answer.status_code == 200, answer.get_json()
    history = answer.get_json()
    types = [e["type"] for e in history["events"]]
    assert types[:4] == ["pot_split", "game_ended", "game_started", "deal_started"], types
    split = history["events"][0]["data"]
    assert split["reason"] == "abandoned"
    assert split["shares"] == [{"seat": ann.seat, "amount": 2}]
    assert cy.seat in history["events"][3]["data"]["players"]


def test_hand_history_and_fairness_proof(gateway: Gateway) -> None:
    table_id, (alice, bob, carol) = start_deal(gateway, players=3)
    commitment = gateway.table(table_id)["deal"]["commitment"]
    cards = {p.seat: gateway.table(table_id, p)["you"]["cards"] for p in (alice, bob, carol)}
    assert_problem(gateway.call("GET", f"/v1/tables/{table_id}/hands/1"), 404, "hand_not_found")
    gateway.act(table_id, alice, action="declare", choice="in")
    gateway.act(table_id, bob, action="declare", choice="in")
    gateway.act(table_id, carol, action="declare", choice="out")
    history = gateway.call("GET", f"/v1/tables/{table_id}/hands/1").get_json()
    shown = set(cards[alice.seat]) | set(cards[bob.seat])
    # Everyone sees the hands shown at the showdown opened, never the hand that went out.
    assert set(opened_cards(history["fairness"], commitment).values()) == shown
    assert history["showdown"]["hands"][str(alice.seat)]["cards"] == cards[alice.seat]
    types = [e["type"] for e in history["events"]]
    # the history starts with the change that opened the deal: the game, then the deal
    assert types[:2] == ["game_started", "deal_started"]
    # the history ends with all of the change that ended the deal: here the pause after it
    assert types.index("deal_ended") < len(types) - 1
    assert types[-1] == "phase"
    first, last = history["events"][0]["id"], history["events"][-1]["id"]
    log = gateway.events(table_id)["events"]
    assert [e for e in log if first <= e["id"] <= last] == history["events"]
    assert log[-1]["id"] == last  # nothing else happened since
    assert "cards_dealt" not in types  # spectators do not see private deals
    read = gateway.call("GET", f"/v1/tables/{table_id}/hands/1", carol)
    # a finished deal's history does not change; what it shows depends on the credential
    assert read.headers["Cache-Control"] == "private, max-age=3600"
    varies = {n.strip() for v in read.headers.get_all("Vary") for n in v.split(",")}
    assert "Authorization" in varies
    mine = read.get_json()
    assert [e["data"]["cards"] for e in mine["events"] if e["type"] == "cards_dealt"] == [
        cards[carol.seat]
    ]
    # Its own seat sees its hand opened too, at the places the dealing order gives it.
    opened = opened_cards(mine["fairness"], commitment)
    assert set(opened.values()) == shown | set(cards[carol.seat])
    order = next(e for e in history["events"] if e["type"] == "deal_started")["data"]["players"]
    places = range(order.index(carol.seat), 9, 3)
    assert [opened[i] for i in places] == cards[carol.seat]
    assert history["pot_flow"]


def test_with_no_pause_the_move_that_ends_a_deal_deals_the_next(gateway: Gateway) -> None:
    """With `deal_pause_seconds` 0 the settling declare deals the next deal in the same
    change (the clock is off here): its answer and the log carry the ended deal's events,
    then the next deal's, each stamped with its own deal, and the ended deal's history
    stops before the next deal's story."""
    table_id, (alice, bob, carol) = start_deal(gateway, players=3, deal_pause_seconds=0)
    gateway.act(table_id, alice, action="declare", choice="in")
    gateway.act(table_id, bob, action="declare", choice="in")
    answer = gateway.act(table_id, carol, action="declare", choice="out")
    assert answer.status_code == 200
    body = answer.get_json()
    types = [e["type"] for e in body["events"]]
    assert types.index("deal_ended") < types.index("deal_started")
    assert body["table"]["hand_number"] == 2
    assert body["table"]["phase"] == "declaring"
    assert len(gateway.table(table_id, carol)["you"]["cards"]) == 3
    log = gateway.events(table_id)["events"]
    opened = next(e for e in log if e["type"] == "deal_started" and e["hand_number"] == 2)
    started = next(e for e in log if e["type"] == "game_started")
    assert all(e["hand_number"] == 1 for e in log if started["id"] <= e["id"] < opened["id"])
    assert all(e["hand_number"] == 2 for e in log if e["id"] >= opened["id"])
    history = gateway.call("GET", f"/v1/tables/{table_id}/hands/1").get_json()
    assert history["events"][0]["type"] == "game_started"
    assert history["events"][-1]["id"] == opened["id"] - 1
    assert {e["hand_number"] for e in history["events"]} == {1}
    assert "deal_ended" in [e["type"] for e in history["events"]]
    # the next deal ends the same way, and its history opens with its own deal
    for player, choice in ((alice, "in"), (bob, "in"), (carol, "out")):
        gateway.act(table_id, player, action="declare", choice=choice)
    second = gateway.call("GET", f"/v1/tables/{table_id}/hands/2").get_json()
    assert second["events"][0]["id"] == opened["id"]
    assert second["events"][0]["type"] == "deal_started"
    assert gateway.table(table_id)["hand_number"] == 3


def test_a_hand_that_wins_without_showing_stays_hidden(gateway: Gateway) -> None:
    table_id, (alice, bob) = start_deal(gateway)
    commitment = gateway.table(table_id)["deal"]["commitment"]
    cards = {p.seat: gateway.table(table_id, p)["you"]["cards"] for p in (alice, bob)}
    gateway.act(table_id, alice, action="declare", choice="in")
    gateway.act(table_id, bob, action="declare", choice="out")
    path = f"/v1/tables/{table_id}/hands/1"
    spectator = gateway.call("GET", path).get_json()
    assert spectator["outcome"] == "uncontested"
    assert opened_cards(spectator["fairness"], commitment) == {}
    for player, other in ((alice, bob), (bob, alice)):
        seen = opened_cards(gateway.call("GET", path, player).get_json()["fairness"], commitment)
        assert sorted(seen.values()) == sorted(cards[player.seat])
        assert not set(seen.values()) & set(cards[other.seat])


def test_a_history_stored_with_the_earlier_whole_deck_proof_reads_as_stored(
    gateway: Gateway,
) -> None:
    table_id, (alice, bob) = start_deal(gateway)
    gateway.act(table_id, alice, action="declare", choice="in")
    gateway.act(table_id, bob, action="declare", choice="in")
    store = gateway.app.extensions["cardroom.service"].store
    key = hand_key(table_id, 1)
    record = json.loads(store.client.get(key))
    sealed = record.pop("sealed")
    text = ",".join(sealed["deck"]) + ":" + sealed["salt"]
    record["fairness"] = {
        "commitment": hashlib.sha256(text.encode()).hexdigest(),
        "deck": sealed["deck"],
        "salt": sealed["salt"],
        "formula": "sha256(','.join(deck) + ':' + salt)",
    }
    store.client.set(key, json.dumps(record))
    read = gateway.call("GET", f"/v1/tables/{table_id}/hands/1", alice)
    assert read.status_code == 200
    assert read.get_json()["fairness"] == record["fairness"]
    history = HandHistory.from_json(read.get_json())
    with pytest.raises(FairnessError, match="unknown formula"):
        verify_fairness(history)


def test_deals_follow_by_themselves_and_the_dealer_moves(gateway: Gateway) -> None:
    table_id, _players = start_deal(gateway, players=3, deal_pause_seconds=0, turn_seconds=1)
    first_dealer = gateway.table(table_id)["dealer"]
    table = wait_for(lambda: (t := gateway.table(table_id))["hand_number"] >= 2 and t)
    assert table["dealer"] != first_dealer


def test_leaving_cashes_out_after_the_deal_and_the_token_stops(gateway: Gateway) -> None:
    table_id, (alice, bob, carol) = start_deal(gateway, players=3)
    left = gateway.call("DELETE", f"/v1/tables/{table_id}/seats/{carol.seat}", carol)
    assert left.status_code == 200, left.get_json()
    body = left.get_json()
    assert {key: body[key] for key in ("seat", "left", "leaving", "cashed_out")} == {
        "seat": carol.seat,
        "left": False,
        "leaving": True,
        "cashed_out": None,
    }
    assert_problem(
        gateway.call("DELETE", f"/v1/tables/{table_id}/seats/{carol.seat}", alice),
        403,
        "wrong_seat",
    )
    for player in (alice, bob, carol):
        gateway.act(table_id, player, action="declare", choice="out")
    table = gateway.table(table_id)
    assert str(carol.seat) not in table["seats"]
    cashed = [e for e in gateway.events(table_id)["events"] if e["type"] == "cashed_out"]
    assert cashed[0]["data"]["seat"] == carol.seat
    # the seat's token stops: refused for a write, ignored (public view) for a read
    assert_problem(gateway.act(table_id, carol, action="start"), 401, "invalid_token")
    read = gateway.call("GET", f"/v1/tables/{table_id}", carol)
    assert read.status_code == 200
    assert read.get_json()["you"] is None
    assert 'error="invalid_token"' in read.headers["WWW-Authenticate"]


def test_server_sent_events_resume_from_last_event_id(gateway: Gateway) -> None:
    table_id, (alice, _bob) = start_deal(gateway)
    events = gateway.stream(table_id, alice, blocks=3, headers={"Last-Event-ID": "3"})
    assert events
    assert events[0]["id"] == 4
    assert [e["id"] for e in events] == sorted(e["id"] for e in events)


def test_the_events_of_one_change_reach_a_stream_as_one_chunk(gateway: Gateway) -> None:
    """A wake-up's events are written together: one chunk, one write to the socket."""
    table_id, (alice, _bob) = start_deal(gateway)
    known = gateway.events(table_id, alice)["events"]
    assert len(known) > 2
    response = gateway.call("GET", f"/v1/tables/{table_id}/events/stream", alice, buffered=False)
    chunks = iter(response.response)
    assert next(chunks) == b"retry: 1000\n\n"
    first = next(chunks).decode()
    response.close()
    assert first.count("\n\n") == len(known)  # every event so far, in the first chunk
    ids = [int(line[4:]) for line in first.splitlines() if line.startswith("id: ")]
    assert ids == [event["id"] for event in known]


# ---------------------------------------------------------------- guarantees


def test_two_gateways_never_lose_or_double_a_move(redis_url: str, evaluator_address: str) -> None:
    apps = [
        create_app(gateway_settings(redis_url, evaluator_address, clock=False)) for _ in range(2)
    ]
    gateways = [Gateway(app, app.test_client()) for app in apps]
    table_id = gateways[0].create(max_players=10, deal_pause_seconds=60)
    players = [gateways[i % 2].sit(table_id, f"racer{i}") for i in range(10)]
    assert gateways[1].act(table_id, players[0], action="start").status_code == 200
    results: list[int] = []

    def declare(index: int) -> None:
        client = apps[index % 2].test_client()
        for _ in range(3):  # the same move three times: exactly one may count
            response = client.post(
                f"/v1/tables/{table_id}/actions",
                json={"action": "declare", "choice": "out"},
                headers=players[index].auth,
            )
            results.append(response.status_code)

    threads = [threading.Thread(target=declare, args=(i,)) for i in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results.count(200) == 10
    events = apps[0].extensions["cardroom.service"].store.events_after(table_id, 0, None)
    assert [e["id"] for e in events] == list(range(1, len(events) + 1))
    assert sum(1 for e in events if e["type"] == "declared") == 10
    assert sum(1 for e in events if e["type"] == "declarations_revealed") == 1
    for app in apps:
        app.extensions["cardroom.service"].evaluator.close()


OPTION_SETS = [
    {},
    {"cards": 2},
    {"ante_mode": "every_deal"},
    {"declare": "sequential"},
    {"all_out_ante": False},
    {"wimp": True},
    {"losers_pay": "worst"},
    {"ghost": True},
    {"cap": 3},
    {"cap": 3, "cap_mode": "reserve"},
    {"cards": 2, "ghost": True, "losers_pay": "worst", "ante_mode": "every_deal", "ante": 2},
]


@pytest.mark.parametrize(
    "options", OPTION_SETS, ids=lambda o: ",".join(f"{k}={v}" for k, v in o.items()) or "defaults"
)
def test_whole_games_for_every_option(gateway: Gateway, options: dict[str, Any]) -> None:
    assert play_guts_game(gateway, options) >= 3


# ---------------------------------------------------------------- Prefer: return=minimal


def declare(gateway: Gateway, table_id: str, player: Player, choice: str, **headers: str) -> Any:
    return gateway.call(
        "POST",
        f"/v1/tables/{table_id}/actions",
        player,
        json={"action": "declare", "choice": choice},
        headers=headers,
    )


@pytest.mark.parametrize(
    "prefer",
    [
        "return=minimal",
        "RETURN=Minimal",
        'return="minimal"',
        "respond-async, return=minimal; x=1",
        "handling=lenient,return=minimal",
    ],
)
def test_a_move_with_prefer_return_minimal_answers_204(gateway: Gateway, prefer: str) -> None:
    table_id, (alice, _bob) = start_deal(gateway)
    version = gateway.table(table_id)["version"]
    response = declare(gateway, table_id, alice, "in", Prefer=prefer)
    assert response.status_code == 204, response.get_data(as_text=True)
    assert response.get_data() == b""
    assert "Content-Type" not in response.headers
    assert response.headers["Preference-Applied"] == "return=minimal"
    assert response.headers["ETag"] == f'"{version + 1}"'
    # the move happened: it is in the table and in the log
    table = gateway.table(table_id, alice)
    assert table["version"] == version + 1
    assert table["you"]["declaration"] == "in"
    types = [event["type"] for event in gateway.events(table_id, alice)["events"]]
    assert types[-2:] == ["declared", "your_declaration"]


def test_prefer_sent_twice_counts_both_fields(gateway: Gateway) -> None:
    table_id, (alice, _bob) = start_deal(gateway)
    headers = Headers([("Prefer", "respond-async"), ("Prefer", "return=minimal")])
    headers.update(alice.auth)
    response = gateway.client.open(
        f"/v1/tables/{table_id}/actions",
        method="POST",
        json={"action": "declare", "choice": "in"},
        headers=headers,
    )
    assert response.status_code == 204, response.get_data(as_text=True)


@pytest.mark.parametrize(
    "prefer",
    [
        "return=representation",
        "respond-async",
        "return",
        "return=minimal-ish",
        ",;=,",
        "return=representation, return=minimal",  # only the first instance counts
    ],
)
def test_other_preferences_get_the_table(gateway: Gateway, prefer: str) -> None:
    table_id, (alice, _bob) = start_deal(gateway)
    response = declare(gateway, table_id, alice, "in", Prefer=prefer)
    assert response.status_code == 200, response.get_json()
    assert "Preference-Applied" not in response.headers
    assert response.get_json()["table"]["you"]["declaration"] == "in"


def test_a_refused_move_with_prefer_minimal_is_still_a_problem(gateway: Gateway) -> None:
    table_id, (alice, _bob) = start_deal(gateway)
    assert declare(gateway, table_id, alice, "in", Prefer="return=minimal").status_code == 204
    again = declare(gateway, table_id, alice, "out", Prefer="return=minimal")
    assert_problem(again, 409, "already_declared")
    assert "Preference-Applied" not in again.headers


def test_a_key_first_answered_minimal_replays_the_204(gateway: Gateway) -> None:
    table_id, (alice, _bob) = start_deal(gateway)
    key = {"Idempotency-Key": "k1"}
    first = declare(gateway, table_id, alice, "in", Prefer="return=minimal", **key)
    assert first.status_code == 204
    # the replay is the first answer, whether or not the retry repeats the preference
    for retry in ({}, {"Prefer": "return=minimal"}):
        again = declare(gateway, table_id, alice, "in", **key, **retry)
        assert again.status_code == 204, again.get_data(as_text=True)
        assert again.headers["Idempotent-Replayed"] == "true"
        assert again.headers["ETag"] == first.headers["ETag"]
        assert again.headers["Preference-Applied"] == "return=minimal"
        assert again.get_data() == b""
    declared = [e for e in gateway.events(table_id)["events"] if e["type"] == "declared"]
    assert len(declared) == 1


def test_a_key_first_answered_in_full_replays_minimal_when_asked(gateway: Gateway) -> None:
    table_id, (alice, _bob) = start_deal(gateway)
    key = {"Idempotency-Key": "k2"}
    first = declare(gateway, table_id, alice, "in", **key)
    assert first.status_code == 200
    minimal = declare(gateway, table_id, alice, "in", Prefer="return=minimal", **key)
    assert minimal.status_code == 204
    assert minimal.headers["Idempotent-Replayed"] == "true"
    assert minimal.headers["ETag"] == first.headers["ETag"]
    assert minimal.get_data() == b""
    full = declare(gateway, table_id, alice, "in", **key)
    assert full.status_code == 200
    assert full.get_json() == first.get_json()
