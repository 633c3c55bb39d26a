"""The lobby's filters and order, a quick seat and its last-seat race, the index's repair:
on a single Redis and on a Redis Cluster.

Each test plays at an ante of its own, and filters on it, so that tables other tests
left on the (module-wide) cluster never show on its pages.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest
from flask import Flask

from api.adapters.lobby import SHARDS, rows_key, shard_key
from api.adapters.store import table_key
from api.runtime.clock import Clock
from tests.support.gateway import Gateway, close_app, make_app
from tests.support.problems import assert_problem
from tests.support.tables_api import Account


@pytest.fixture(params=["redis", "cluster"])
def lobby_gateway(
    request: pytest.FixtureRequest, redis_url: str, evaluator_address: str
) -> Iterator[Gateway]:
    """A gateway app on the session's Redis, or on a Redis Cluster."""
    if request.param == "cluster":
        app = make_app(
            request.getfixturevalue("redis_cluster"), evaluator_address, redis_cluster=True
        )
    else:
        app = make_app(redis_url, evaluator_address)
    yield Gateway(app, app.test_client())
    close_app(app)


def page(gateway: Gateway, query: str, account: Account | None = None) -> dict[str, Any]:
    """A lobby page; asserts it was answered."""
    response = gateway.call("GET", f"/v1/tables?{query}", account)
    assert response.status_code == 200, response.get_data(as_text=True)
    return dict(response.get_json())


def every_page(gateway: Gateway, query: str, limit: int) -> list[str]:
    """The ids of every page of a lobby query, in order."""
    seen: list[str] = []
    cursor = ""
    for _ in range(100):
        answer = page(gateway, f"{query}&limit={limit}{cursor}")
        seen += [table["id"] for table in answer["tables"]]
        if answer["next"] is None:
            return seen
        cursor = f"&cursor={answer['next']}"
    raise AssertionError("the lobby never ended")


def test_filters_order_and_empty_tables(lobby_gateway: Gateway) -> None:
    gateway = lobby_gateway
    ante = 71
    host = gateway.sign_up("host")
    other = gateway.sign_up("other")
    empty = gateway.create(host, ante=ante, name="nobody here")
    one = gateway.create(host, ante=ante, name="one seated")
    three = gateway.create(host, ante=ante, name="three seated", max_players=4)
    full = gateway.create(host, ante=ante, name="full", max_players=2)
    two_cards = gateway.create(other, ante=ante, cards=2, name="two cards")
    paiute = gateway.create(other, game="paiute", ante=ante, name="paiute")
    for table_id, count in ((one, 1), (three, 3), (full, 2), (two_cards, 2), (paiute, 1)):
        for n in range(count):
            gateway.sit(table_id, f"p{n}", buy_in=20 * ante)
    only = f"ante_min={ante}&ante_max={ante}"
    listed = every_page(gateway, only, 2)
    # joinable first, the fullest first; the full table last; nobody's table not at all
    # (of two tables as full, the one with fewer seats free)
    assert listed == [three, two_cards, paiute, one, full]
    assert every_page(gateway, f"{only}&game=guts&cards=3", 20) == [three, one, full]
    assert every_page(gateway, f"{only}&cards=2", 20) == [two_cards]
    assert every_page(gateway, f"{only}&game=paiute", 20) == [paiute]
    assert every_page(gateway, f"{only}&free_seats=3", 20) == [two_cards, paiute, one]
    assert every_page(gateway, f"ante_min={ante + 1}&ante_max={ante + 5}", 20) == []
    first = page(gateway, f"{only}&game=guts&cards=3&limit=1")["tables"][0]
    assert first["id"] == three
    assert (first["seats_taken"], first["seats_free"], first["max_players"]) == (3, 1, 4)
    # the creator finds their own tables, the empty one too
    mine = page(gateway, f"mine=true&{only}", host)
    assert [table["id"] for table in mine["tables"]] == [full, three, one, empty]
    assert mine["next"] is None
    for query, field in (
        ("game=poker", "game"),
        ("cards=4", "cards"),
        ("ante_min=0", "ante_min"),
        ("free_seats=11", "free_seats"),
        ("free_seats=-1", "free_seats"),
        ("mine=yes", "mine"),
        ("cursor=not-a-cursor", "cursor"),
    ):
        code = "invalid_cursor" if field == "cursor" else "invalid_parameter"
        problem = assert_problem(gateway.call("GET", f"/v1/tables?{query}"), 400, code)
        assert problem["field"] == field
    assert gateway.call("GET", "/v1/tables?mine=true").status_code == 401


def test_a_table_leaves_the_lobby_when_its_last_seat_leaves(lobby_gateway: Gateway) -> None:
    gateway = lobby_gateway
    ante = 72
    table_id = gateway.create(ante=ante)
    seat = gateway.sit(table_id, "solo", buy_in=20 * ante)
    only = f"ante_min={ante}&ante_max={ante}"
    assert every_page(gateway, only, 5) == [table_id]
    left = gateway.call("DELETE", f"/v1/tables/{table_id}/seats/{seat.seat}", seat)
    assert left.status_code == 200, left.get_data(as_text=True)
    assert every_page(gateway, only, 5) == []


def quick_seat(gateway: Gateway, account: Account, ante: int, **extra: Any) -> Any:
    """A quick seat at a 3-card Guts table of `ante`, with a 20-ante buy-in."""
    body = {"table": {"game": "guts", "cards": 3, "ante": ante, **extra}, "buy_in": 20 * ante}
    return gateway.call("POST", "/v1/tables/quick-seat", account, json=body)


def test_a_quick_seat_joins_a_table_or_opens_one(lobby_gateway: Gateway) -> None:
    gateway = lobby_gateway
    ante = 73
    waiting = gateway.create(ante=ante, max_players=3)
    gateway.sit(waiting, "first", buy_in=20 * ante)
    gateway.create(ante=ante)  # nobody sits there: not a table to join
    ann = gateway.sign_up("ann")
    joined = quick_seat(gateway, ann, ante)
    assert joined.status_code == 201, joined.get_data(as_text=True)
    body = joined.get_json()
    assert (body["table"]["id"], body["seat"], body["created"]) == (waiting, 2, False)
    assert gateway.table(waiting, ann)["you"]["seat"] == 2
    # asked again with the same key: the same answer, token included
    keyed = {"Idempotency-Key": "quick-1"}
    bo = gateway.sign_up("bo")
    request = {"table": {"game": "guts", "ante": ante}, "buy_in": 20 * ante}
    sent = [
        gateway.call("POST", "/v1/tables/quick-seat", bo, json=request, headers=keyed)
        for _ in range(2)
    ]
    assert [answer.status_code for answer in sent] == [201, 201]
    assert sent[1].headers["Idempotent-Replayed"] == "true"
    assert sent[0].get_json()["token"] == sent[1].get_json()["token"]
    assert sent[0].get_json()["table"]["id"] == waiting
    # the table is full now: the next player gets a new table, made with the options asked
    cy = gateway.sign_up("cy")
    opened = quick_seat(gateway, cy, ante, max_players=3)
    assert opened.status_code == 201, opened.get_data(as_text=True)
    made = opened.get_json()
    assert made["created"] is True
    assert made["table"]["id"] != waiting
    assert made["table"]["options"]["max_players"] == 3
    # an option the table does not have is a table not like it
    dee = gateway.sign_up("dee")
    other = quick_seat(gateway, dee, ante, declare="sequential")
    assert other.get_json()["created"] is True
    assert other.get_json()["table"]["id"] != made["table"]["id"]
    assert_problem(
        gateway.call("POST", "/v1/tables/quick-seat", dee, json={"table": {"game": "guts"}}),
        422,
        "missing_field",
    )


def test_a_quick_seat_refused_leaves_no_empty_table(lobby_gateway: Gateway) -> None:
    gateway = lobby_gateway
    ante = 77
    eve = gateway.sign_up("eve")
    mine = f"mine=true&ante_min={ante}&ante_max={ante}"
    # a quick seat that fits makes the player's one table; the player leaves it at once
    made = quick_seat(gateway, eve, ante, max_buy_in=100 * ante)
    assert made.status_code == 201, made.get_data(as_text=True)
    gateway.call("DELETE", f"/v1/tables/{made.get_json()['table']['id']}/seats/1", eve)
    # more than the wallet holds (10,000 chips), then less than a new table's minimum
    body = {"table": {"game": "guts", "ante": ante}, "buy_in": 10_001}
    refused = gateway.call("POST", "/v1/tables/quick-seat", eve, json=body)
    assert_problem(refused, 409, "insufficient_funds")
    body = {"table": {"game": "guts", "ante": ante}, "buy_in": ante}
    refused = gateway.call("POST", "/v1/tables/quick-seat", eve, json=body)
    assert_problem(refused, 422, "invalid_buy_in")
    assert len(page(gateway, mine, eve)["tables"]) == 1  # only the first, left since


def test_two_players_never_both_take_the_last_seat(lobby_gateway: Gateway) -> None:
    gateway = lobby_gateway
    ante = 74
    racers = 6
    last_seat = gateway.create(ante=ante, max_players=2)
    gateway.sit(last_seat, "first", buy_in=20 * ante)
    accounts = [gateway.sign_up(f"racer{n}") for n in range(racers)]
    answers: list[Any] = [None] * racers
    start = threading.Barrier(racers)

    def race(n: int) -> None:
        client = gateway.app.test_client()
        start.wait()
        answers[n] = client.post(
            "/v1/tables/quick-seat",
            json={"table": {"game": "guts", "ante": ante, "max_players": 2}, "buy_in": 20 * ante},
            headers=accounts[n].auth,
        )

    threads = [threading.Thread(target=race, args=(n,)) for n in range(racers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert [answer.status_code for answer in answers] == [201] * racers
    tables = [answer.get_json()["table"]["id"] for answer in answers]
    assert tables.count(last_seat) == 1
    seats: dict[str, list[str]] = {}
    for account, table_id in zip(accounts, tables, strict=True):
        seats.setdefault(table_id, []).append(account.id)
    for table_id, players in seats.items():
        state = gateway.table(table_id)
        assert len(state["seats"]) <= 2
        expected = len(players) + (1 if table_id == last_seat else 0)
        assert len(state["seats"]) == expected
    # the lobby shows the tables as they are: the full ones after those with a seat
    shown = page(gateway, f"ante_min={ante}&ante_max={ante}&limit=20")["tables"]
    assert sorted(table["id"] for table in shown) == sorted(seats)
    free = [table["seats_free"] for table in shown]
    assert free == sorted(free, reverse=True)


def clock_of(app: Flask) -> Clock:
    """A clock over the app's services, to run a repair pass by hand."""
    return Clock(app.extensions["cardroom.services"].deadlines, 0.05)


def test_the_sweep_rebuilds_the_lobby_from_the_tables(lobby_gateway: Gateway) -> None:
    gateway = lobby_gateway
    ante = 75
    tables = [gateway.create(ante=ante, max_players=3) for _ in range(3)]
    for n, table_id in enumerate(tables):
        for k in range(n + 1):
            gateway.sit(table_id, f"s{k}", buy_in=20 * ante)
    only = f"ante_min={ante}&ante_max={ante}"
    before = every_page(gateway, only, 10)
    assert before == [tables[1], tables[0], tables[2]]
    client = gateway.app.extensions["cardroom.service"].store.client
    for shard in SHARDS:
        client.delete(shard_key(shard), rows_key(shard))
    assert every_page(gateway, only, 10) == []
    # a stale entry of a table that is gone, too
    client.hset(rows_key("guts-3"), "0badc0de", "099.0000075.02.0badc0de")
    client.zadd(shard_key("guts-3"), {"099.0000075.02.0badc0de": 0})
    client.zadd("tables", {"0badc0de": 1.0})
    # and a table stored before the lobby had shards: its place is found from its state
    client.hdel(table_key(tables[0]), "listing")
    assert clock_of(gateway.app).sweep() >= 4
    assert every_page(gateway, only, 10) == before
    assert client.hget(rows_key("guts-3"), "0badc0de") is None
    member = client.hget(rows_key("guts-3"), tables[0])
    assert client.hget(table_key(tables[0]), "listing") == f"guts-3:{member}"
    assert clock_of(gateway.app).sweep() == 0


def test_a_cursor_of_the_former_order_pages_on(gateway: Gateway) -> None:
    ante = 76
    tables = [gateway.create(ante=ante) for _ in range(3)]
    for table_id in tables:
        gateway.sit(table_id, "solo", buy_in=20 * ante)
    created = gateway.app.extensions["cardroom.service"].store.client.zscore("tables", tables[2])
    answer = page(gateway, f"limit=5&cursor={created!r}:{tables[2]}")
    assert [table["id"] for table in answer["tables"]] == [tables[1], tables[0]]
