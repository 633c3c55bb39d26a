"""Closing tables and removing players over HTTP, on a real Redis and the real evaluator.

The creator closes a table that has not dealt, an operator any table; an operator
removes a seat. Every seat is cashed out (after the deal it is in), the table leaves the
lobby, its deals stay readable, and the ledger's audit over the whole store is clean.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
import redis

from cardroom_client import CardroomError, Client
from tests.integration.test_client import serve
from tests.support.gateway import Gateway
from tests.support.ledger import audited_gateway
from tests.support.play import wait_for
from tests.support.problems import assert_problem
from tests.support.tables_api import Account

OPERATOR_KEY = "op-closing-test-key-0123456789abcdef"
OPERATOR = {"Authorization": f"Bearer {OPERATOR_KEY}"}
GRANT = 10_000


@pytest.fixture
def gateway(redis_url: str, evaluator_address: str) -> Iterator[Gateway]:
    """A gateway with an operator key on a database of its own; the audit is clean after."""
    url = redis_url.rsplit("/", 1)[0] + "/9"
    client = redis.Redis.from_url(url)
    client.flushdb()
    client.close()
    with audited_gateway(url, evaluator_address, operator_keys=(OPERATOR_KEY,)) as gateway:
        yield gateway


def balance(gateway: Gateway, account: Account) -> int:
    response = gateway.call("GET", "/v1/players/me", account)
    assert response.status_code == 200, response.get_json()
    return int(response.get_json()["balance"])


def lobby_ids(gateway: Gateway) -> list[str]:
    return [table["id"] for table in gateway.call("GET", "/v1/tables").get_json()["tables"]]


def close(gateway: Gateway, table_id: str, **kwargs: Any) -> Any:
    return gateway.call("DELETE", f"/v1/tables/{table_id}", **kwargs)


def test_the_creator_closes_a_table_before_its_first_deal(gateway: Gateway) -> None:
    host, ann, bo = gateway.sign_up("host"), gateway.sign_up("ann"), gateway.sign_up("bo")
    table_id = gateway.create(host, min_buy_in=10, max_buy_in=500)
    seats = [gateway.sit(table_id, "ann", 300, ann), gateway.sit(table_id, "bo", 200, bo)]
    assert table_id in lobby_ids(gateway)

    # nobody else may: another player, a seat's token, nobody at all
    assert_problem(close(gateway, table_id, player=ann), 403, "not_table_creator")
    assert_problem(close(gateway, table_id, player=seats[0]), 403, "player_required")
    assert_problem(close(gateway, table_id), 401, "missing_token")

    closed = close(gateway, table_id, player=host)
    assert closed.status_code == 200, closed.get_json()
    body = closed.get_json()
    assert body["closed"] is True
    kinds = [event["type"] for event in body["events"] if event["type"] != "left"]
    assert kinds == ["cashed_out", "cashed_out", "table_closed"]
    assert body["events"][-1]["data"]["reason"] == "closed"
    assert (balance(gateway, ann), balance(gateway, bo)) == (GRANT, GRANT)

    gone = assert_problem(gateway.call("GET", f"/v1/tables/{table_id}"), 410, "table_closed")
    assert gone["closing"]["reason"] == "closed"
    assert "accounts" not in gone["closing"]  # who sat there is kept, never shown
    assert table_id not in lobby_ids(gateway)
    assert_problem(close(gateway, table_id, player=host), 410, "table_closed")
    # a closed table no longer counts against its creator's open tables
    for _ in range(5):
        gateway.create(host)


def test_an_operator_closes_a_table_in_play_after_its_deal(gateway: Gateway) -> None:
    host = gateway.sign_up("host")
    table_id = gateway.create(host, turn_seconds=1, deal_pause_seconds=0.2)
    accounts = [gateway.sign_up(name) for name in ("ann", "bo", "cy")]
    seats = [gateway.sit(table_id, a.name, 100, a) for a in accounts]
    started = gateway.act(table_id, seats[0], action="start")
    assert started.status_code == 200, started.get_json()
    assert_problem(close(gateway, table_id, player=host), 409, "table_started")

    closing = close(gateway, table_id, headers=OPERATOR)
    assert closing.status_code == 200, closing.get_json()
    assert closing.get_json()["closed"] is False  # the deal is played out first
    assert table_id not in lobby_ids(gateway)
    late = gateway.sign_up("late")
    body = {"name": "late", "buy_in": 100}
    refused = gateway.json_call("POST", f"/v1/tables/{table_id}/seats", late, body)
    assert_problem(refused, 409, "table_closing")
    assert balance(gateway, late) == GRANT

    # the deal ends by its deadlines, then every seat is cashed out and the table closes
    gone = wait_for(
        lambda: gateway.call("GET", f"/v1/tables/{table_id}").status_code == 410, seconds=90
    )
    assert gone
    wallets = gateway.app.extensions["cardroom.service"].wallets
    wait_for(lambda: wallets.audit().totals["unrelayed"] == 0, seconds=30)
    assert sum(balance(gateway, a) for a in accounts) + _house_take(gateway, table_id) == (
        3 * GRANT
    )

    # the deal stays readable after the close: each player's own cards, to them alone
    hand = f"/v1/tables/{table_id}/hands/1"
    public = gateway.call("GET", hand)
    assert public.status_code == 200, public.get_json()
    own = gateway.call("GET", hand, accounts[0])
    assert own.status_code == 200, own.get_json()
    assert len(own.get_json()["events"]) > len(public.get_json()["events"])


def _house_take(gateway: Gateway, table_id: str) -> int:
    """What the closed table's reserve sent to the house (zero without one)."""
    response = gateway.call("GET", f"/v1/tables/{table_id}")
    record = response.get_json()["closing"]["ledger"]
    assert record["pot"] == 0
    return int(record["chips_bought"] - record["chips_cashed"])


def test_an_operator_removes_a_seat(gateway: Gateway) -> None:
    table_id = gateway.create(min_buy_in=10, max_buy_in=500)
    ann, bo = gateway.sign_up("ann"), gateway.sign_up("bo")
    seat = gateway.sit(table_id, "ann", 250, ann)
    gateway.sit(table_id, "bo", 100, bo)
    path = f"/v1/tables/{table_id}/seats/{seat.seat}"
    assert_problem(gateway.call("DELETE", path, bo), 403)

    removed = gateway.call("DELETE", path, headers=OPERATOR)
    assert removed.status_code == 200, removed.get_json()
    body = removed.get_json()
    assert (body["left"], body["cashed_out"]) == (True, 250)
    assert balance(gateway, ann) == GRANT
    assert [s["name"] for s in gateway.table(table_id)["seats"].values()] == ["bo"]
    # the seat's token no longer acts
    assert_problem(gateway.call("DELETE", path, seat), (401, 403))


def test_the_sdk_closes_a_table_and_removes_a_seat(redis_url: str, evaluator_address: str) -> None:
    with (
        serve(redis_url, evaluator_address, operator_keys=(OPERATOR_KEY,)) as url,
        Client(url, timeout=20) as anonymous,
    ):
        host = anonymous.with_credential(anonymous.create_player("host").key)
        operator = anonymous.with_credential(OPERATOR_KEY)
        table = host.create_table()
        ann = anonymous.with_credential(anonymous.create_player("ann").key)
        seat = ann.take_seat(table.id, None, 100)
        removed = operator.remove_seat(table.id, seat.number)
        assert (removed.left, removed.cashed_out) == (True, 100)

        closing = host.close_table(table.id)
        assert closing.closed
        assert [event.type for event in closing.events] == ["table_closed"]
        with pytest.raises(CardroomError) as refused:
            host.close_table(table.id)
        assert (refused.value.status, refused.value.code) == (410, "table_closed")
