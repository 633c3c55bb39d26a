"""Every write to a table answers one envelope, `{"table", "events", ...}`, and its replay
answers it again; the table's one id field is `id`, in every body that carries the table."""

from __future__ import annotations

from typing import Any

from tests.support.gateway import Gateway
from tests.support.play import paiute_table
from tests.support.problems import assert_problem
from tests.support.tables_api import Account, Player


def _types(body: dict[str, Any]) -> list[str]:
    return [item["type"] for item in body["events"]]


def _assert_table(table: dict[str, Any], table_id: str) -> None:
    """A table body: its id is `id`, and there is no other id field."""
    assert table["id"] == table_id, table
    assert "table_id" not in table, table


def _twice(
    gateway: Gateway, method: str, path: str, who: Account | Player, body: Any, key: str
) -> tuple[Any, Any]:
    """A write and its retry with the same Idempotency-Key: both responses."""
    headers = {"Idempotency-Key": key}
    sent = {} if body is None else {"json": body}
    first = gateway.call(method, path, who, headers=headers, **sent)
    again = gateway.call(method, path, who, headers=headers, **sent)
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert (again.status_code, again.get_json()) == (first.status_code, first.get_json())
    return first, again


def test_creating_a_table_answers_the_table_and_its_first_event(gateway: Gateway) -> None:
    ann = gateway.sign_up("ann")
    created, _ = _twice(gateway, "POST", "/v1/tables", ann, {"game": "guts"}, "create-1")
    assert created.status_code == 201, created.get_json()
    body = created.get_json()
    assert set(body) == {"table", "events"}
    table_id = body["table"]["id"]
    _assert_table(body["table"], table_id)
    assert created.headers["Location"] == f"/v1/tables/{table_id}"
    assert _types(body) == ["table_created"]
    assert body["table"]["version"] == 1


def test_a_seat_grant_answers_the_envelope_with_the_seat_and_its_token(
    gateway: Gateway,
) -> None:
    table_id = gateway.create()
    ann = gateway.sign_up("ann")
    path = f"/v1/tables/{table_id}/seats"
    granted, _ = _twice(gateway, "POST", path, ann, {"buy_in": 100}, "seat-1")
    assert granted.status_code == 201, granted.get_json()
    body = granted.get_json()
    assert set(body) == {"table", "events", "seat", "token", "waiting"}
    _assert_table(body["table"], table_id)
    assert _types(body) == ["seated"]
    assert body["table"]["you"]["seat"] == body["seat"]
    assert body["waiting"] is True
    # the token it granted acts for the seat
    seat = Player("ann", body["seat"], body["token"], ann)
    assert gateway.table(table_id, seat)["you"]["seat"] == body["seat"]


def test_moves_and_rebuys_answer_the_table_and_their_events(gateway: Gateway) -> None:
    table_id = gateway.create(rebuy=True, turn_seconds=600)
    ann, bo = gateway.sit(table_id, "ann"), gateway.sit(table_id, "bo")
    path = f"/v1/tables/{table_id}/actions"
    rebought, _ = _twice(gateway, "POST", path, ann, {"action": "rebuy", "amount": 50}, "r-1")
    assert rebought.status_code == 200, rebought.get_json()
    body = rebought.get_json()
    assert set(body) == {"table", "events"}
    _assert_table(body["table"], table_id)
    assert _types(body) == ["rebought"]
    assert body["table"]["seats"][str(ann.seat)]["stack"] == 150
    # an integer written as a double is the integer; a fraction is none
    again = gateway.act(table_id, ann, action="rebuy", amount=50.0)
    assert again.get_json()["table"]["seats"][str(ann.seat)]["stack"] == 200
    assert_problem(gateway.act(table_id, ann, action="rebuy", amount=1.5), 422, "invalid_type")
    started, _ = _twice(gateway, "POST", path, bo, {"action": "start"}, "start-1")
    assert started.status_code == 200, started.get_json()
    body = started.get_json()
    assert set(body) == {"table", "events"}
    _assert_table(body["table"], table_id)
    assert "game_started" in _types(body)
    # asked for, a move still answers 204 without a body, and so does its replay
    minimal = {"Prefer": "return=minimal", "Idempotency-Key": "declare-1"}
    declared = gateway.call("POST", path, ann, headers=minimal, json=ANN_IN)
    again = gateway.call("POST", path, ann, headers=minimal, json=ANN_IN)
    assert (declared.status_code, again.status_code) == (204, 204)
    assert declared.get_data() == again.get_data() == b""


ANN_IN = {"action": "declare", "choice": "in"}


def test_a_leave_answers_the_envelope_with_what_it_did(gateway: Gateway) -> None:
    table_id = gateway.create(turn_seconds=600, deal_pause_seconds=60)
    ann, bo, cy = (gateway.sit(table_id, name) for name in ("ann", "bo", "cy"))
    path = f"/v1/tables/{table_id}/seats"
    # between deals a seat leaves at once: cashed out, and the table seen as a spectator
    left, _ = _twice(gateway, "DELETE", f"{path}/{cy.seat}", cy, None, "leave-1")
    assert left.status_code == 200, left.get_json()
    body = left.get_json()
    assert set(body) == {"table", "events", "seat", "left", "leaving", "cashed_out"}
    _assert_table(body["table"], table_id)
    assert _types(body) == ["cashed_out", "left"]
    assert (body["seat"], body["left"], body["leaving"], body["cashed_out"]) == (
        cy.seat,
        True,
        False,
        100,
    )
    assert str(cy.seat) not in body["table"]["seats"]
    assert body["table"]["you"] is None
    # in a deal it leaves when the deal is settled, and sees the table as its seat
    started = gateway.act(table_id, ann, action="start")
    assert started.status_code == 200, started.get_json()
    leaving, _ = _twice(gateway, "DELETE", f"{path}/{bo.seat}", bo, None, "leave-2")
    body = leaving.get_json()
    assert _types(body) == ["leaving"]
    assert (body["left"], body["leaving"], body["cashed_out"]) == (False, True, None)
    assert body["table"]["you"]["seat"] == bo.seat
    assert body["table"]["seats"][str(bo.seat)]["leaving"] is True


def test_every_body_that_carries_the_table_names_it_by_id_only(gateway: Gateway) -> None:
    ann = gateway.sign_up("ann")
    table_id = gateway.create(ann)
    seat = gateway.sit(table_id, "ann", account=ann)
    _assert_table(gateway.table(table_id), table_id)
    _assert_table(gateway.table(table_id, seat), table_id)
    lobby = gateway.call("GET", "/v1/tables").get_json()["tables"]
    (entry,) = [item for item in lobby if item["id"] == table_id]
    assert "table_id" not in entry
    # a seat listing names the table it is at, and carries the table itself
    (held,) = gateway.call("GET", "/v1/players/me/seats", ann).get_json()["seats"]
    assert held["table_id"] == table_id
    _assert_table(held["table"], table_id)


def test_a_paiute_call_of_the_wrong_number_of_cards_is_no_combination(
    gateway: Gateway,
) -> None:
    table_id, players = paiute_table(gateway, players=2)
    assert gateway.act(table_id, players[0], action="start").status_code == 200
    hand = ["Ah", "Kh", "Qh", "Jh", "Th", "9h", "8h"]
    for count in (4, 7):
        body = {"action": "call", "cards": hand[:count], "discard": None}
        for player in players:  # whoever's turn it is, and whatever the table's state
            response = gateway.json_call("POST", f"/v1/tables/{table_id}/actions", player, body)
            assert_problem(response, 422, "invalid_combination", "cards")
