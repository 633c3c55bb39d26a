"""Bounded growth on a real Redis: trimmed histories, idle tables closed, the clock's sweep."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any, cast

import pytest

from api.adapters.evaluator import EvaluatorClient
from api.adapters.store import (
    DEADLINES_KEY,
    LOBBY_KEY,
    events_key,
    table_key,
    tokens_key,
)
from api.app import create_app
from api.bootstrap import bootstrap
from api.runtime.clock import Clock
from api.service.tables import TableService
from api.settings import Settings
from tests.support.gateway import EVALUATOR_TIMEOUT, Gateway, gateway_settings
from tests.support.play import wait_for
from tests.support.redis_wire import Wire, counting_client
from tests.support.tables_api import Player


def _no_rate_limits() -> dict[str, Any]:
    names = {item.name for item in dataclasses.fields(Settings)}
    return {name: 0 for name in ("rate_limit_per_address", "rate_limit_per_token") if name in names}


def _gateway(redis_url: str, evaluator_address: str, **overrides: Any) -> Gateway:
    settings = gateway_settings(redis_url, evaluator_address, **_no_rate_limits(), **overrides)
    app = create_app(settings)
    app.testing = True
    return Gateway(app, app.test_client())


def _close(gateway: Gateway) -> None:
    clock = gateway.app.extensions.get("cardroom.clock")
    if clock is not None:
        clock.stop()
    gateway.app.extensions["cardroom.service"].evaluator.close()


@pytest.fixture
def keeping_two(redis_url: str, evaluator_address: str) -> Iterator[Gateway]:
    """A gateway that keeps the history of the last two deals."""
    gateway = _gateway(redis_url, evaluator_address, history_deals=2)
    yield gateway
    _close(gateway)


@pytest.fixture
def idle_after_one_second(redis_url: str, evaluator_address: str) -> Iterator[Gateway]:
    """A gateway that closes a table after one second without a player's move."""
    gateway = _gateway(
        redis_url, evaluator_address, table_idle_seconds=1.0, stream_max_seconds=60.0
    )
    yield gateway
    _close(gateway)


def _play_deals(gateway: Gateway, table_id: str, players: list[Player], deals: int) -> None:
    """Everyone declares out, deal after deal; returns when `deals` deals have ended."""
    for number in range(1, deals + 1):

        def declaring(n: int = number) -> bool:
            table = gateway.table(table_id)
            return bool(table["hand_number"] == n and table["phase"] == "declaring")

        def recorded(n: int = number) -> bool:
            return bool(gateway.call("GET", f"/v1/tables/{table_id}/hands/{n}").status_code == 200)

        wait_for(declaring, seconds=60)
        for player in players:
            response = gateway.act(table_id, player, action="declare", choice="out")
            assert response.status_code == 200, response.get_json()
        wait_for(recorded, seconds=60)


def test_only_the_last_deals_are_kept_and_older_ones_answer_410(keeping_two: Gateway) -> None:
    """Five deals with HISTORY_DEALS=2: hands 4-5 and their events kept, the rest gone."""
    gateway = keeping_two
    service: TableService = gateway.app.extensions["cardroom.service"]
    table_id = gateway.create(deal_pause_seconds=0, turn_seconds=60)
    players = [gateway.sit(table_id, name) for name in ("ann", "bob")]
    gateway.act(table_id, players[0], action="start")
    _play_deals(gateway, table_id, players, 5)

    kept = gateway.call("GET", f"/v1/tables/{table_id}/hands/4").get_json()
    assert kept["events"][0]["type"] in ("game_started", "deal_started")
    assert gateway.call("GET", f"/v1/tables/{table_id}/hands/5").status_code == 200
    for number in (1, 3):
        gone = gateway.call("GET", f"/v1/tables/{table_id}/hands/{number}")
        assert gone.status_code == 410
        assert gone.mimetype == "application/problem+json"
        assert gone.get_json()["code"] == "history_trimmed"
        assert gone.get_json()["first_hand"] == 4
        assert gone.get_json()["field"] == "hand_number"
    assert gateway.call("GET", f"/v1/tables/{table_id}/hands/9").get_json()["code"] == (
        "hand_not_found"
    )

    client = service.store.client
    hand_keys = list(client.scan_iter(match=f"table:{{{table_id}}}:hand:*"))
    assert sorted(hand_keys) == [f"table:{{{table_id}}}:hand:{n}" for n in (4, 5)]
    first = int(cast(str, client.hget(table_key(table_id), "first_event")))
    # deal 4's history is packed with its events (by the clock's packer, once deal 5
    # ended): the stream starts after them
    wait_for(lambda: client.hget(table_key(table_id), "packed_hand") == "4", seconds=60)
    packed = int(cast(str, client.hget(table_key(table_id), "packed")))
    entries = cast(list[tuple[str, dict[str, str]]], client.xrange(events_key(table_id), count=1))
    assert entries[0][0] == f"{packed + 1}-0"
    assert service.store.events_log(table_id)[0]["id"] == first
    assert first == kept_first_event(gateway, table_id, 4)

    # a cursor before the kept events: 410 with where to resume, for polls and streams
    stale = gateway.call("GET", f"/v1/tables/{table_id}/events?after=0")
    assert stale.status_code == 410
    problem = stale.get_json()
    assert problem["code"] == "history_trimmed"
    assert problem["first_event"] == first
    assert problem["resume_after"] == first - 1
    assert problem["field"] == "after"
    resumed = gateway.events(table_id, after=problem["resume_after"])
    assert resumed["events"][0]["id"] == first

    streamed = gateway.call("GET", f"/v1/tables/{table_id}/events/stream?after=3")
    assert streamed.status_code == 410
    assert streamed.get_json()["code"] == "history_trimmed"
    assert streamed.get_json()["field"] == "after"
    resuming = gateway.call(
        "GET", f"/v1/tables/{table_id}/events/stream", headers={"Last-Event-ID": "3"}
    )
    assert (resuming.status_code, resuming.get_json()["field"]) == (410, "Last-Event-ID")
    events = gateway.stream(table_id, None, blocks=3, headers={"Last-Event-ID": str(first - 1)})
    assert events[0]["id"] == first


def kept_first_event(gateway: Gateway, table_id: str, hand: int) -> int:
    """The id of the first event of a kept deal, from its history."""
    history = gateway.call("GET", f"/v1/tables/{table_id}/hands/{hand}").get_json()
    return int(history["events"][0]["id"])


def _closed(gateway: Gateway, table_id: str) -> dict[str, Any] | None:
    response = gateway.call("GET", f"/v1/tables/{table_id}")
    if response.status_code == 200:
        return None
    assert response.status_code == 410, response.get_json()
    return dict(response.get_json())


def test_an_idle_table_is_cashed_out_closed_and_forgotten(
    idle_after_one_second: Gateway,
) -> None:
    """No move for TABLE_IDLE_SECONDS: every stack cashed out, a closing record kept."""
    gateway = idle_after_one_second
    service: TableService = gateway.app.extensions["cardroom.service"]
    client = service.store.client
    table_id = gateway.create()
    players = [gateway.sit(table_id, "ann", buy_in=70), gateway.sit(table_id, "bob", buy_in=90)]
    cursor = gateway.events(table_id)["next"]

    # a watcher sees the cash-outs and the closing, then its stream ends
    streamed = gateway.stream(table_id, None, blocks=1000, headers={"Last-Event-ID": str(cursor)})
    assert [e["type"] for e in streamed if e["type"] in ("cashed_out", "table_closed")] == [
        "cashed_out",
        "cashed_out",
        "table_closed",
    ]
    problem = wait_for(lambda: _closed(gateway, table_id), seconds=60)
    assert problem["code"] == "table_closed"
    record = problem["closing"]
    assert record["reason"] == "idle"
    assert sorted((c["name"], c["amount"]) for c in record["cashed_out"]) == [
        ("ann", 70),
        ("bob", 90),
    ]
    assert record["ledger"]["chips_bought"] == record["ledger"]["chips_cashed"] == 160

    for player in players:
        moved = gateway.act(table_id, player, action="start")
        assert moved.status_code == 410
        assert moved.get_json()["code"] == "table_closed"
    assert gateway.call("GET", f"/v1/tables/{table_id}/hands/1").status_code == 410
    lobby = gateway.call("GET", "/v1/tables").get_json()["tables"]
    assert table_id not in [t["id"] for t in lobby]
    assert client.zscore(LOBBY_KEY, table_id) is None
    assert client.zscore(DEADLINES_KEY, table_id) is None
    assert not client.exists(tokens_key(table_id))
    assert 0 < client.ttl(table_key(table_id)) <= 60
    assert 0 < client.ttl(events_key(table_id)) <= 60

    # once the keys are gone the table still answers 410 while its record is kept
    client.delete(table_key(table_id), events_key(table_id))
    assert gateway.call("GET", f"/v1/tables/{table_id}").get_json() == problem
    # and once the record is gone too, it is a table like any unknown one
    client.delete(f"table:{{{table_id}}}:closed")
    assert gateway.call("GET", f"/v1/tables/{table_id}").get_json()["code"] == "table_not_found"


def test_an_idle_table_in_a_game_is_closed_once_its_deal_is_over(
    idle_after_one_second: Gateway,
) -> None:
    """Players who stopped playing: the deal plays out by its deadlines, then all cash out."""
    gateway = idle_after_one_second
    table_id = gateway.create(deal_pause_seconds=0, turn_seconds=1)
    players = [gateway.sit(table_id, name, buy_in=50) for name in ("ann", "bob", "cid")]
    gateway.act(table_id, players[0], action="start")

    record = wait_for(lambda: _closed(gateway, table_id), seconds=90)["closing"]
    ledger = record["ledger"]
    assert ledger["chips_bought"] == 150
    assert ledger["chips_cashed"] == sum(c["amount"] for c in record["cashed_out"])
    assert ledger["chips_cashed"] + ledger["pot"] + ledger["reserve"] == 150
    assert {c["name"] for c in record["cashed_out"]} == {"ann", "bob", "cid"}


def test_the_clock_repairs_schedules_a_page_per_tick(
    redis_url: str, evaluator_address: str
) -> None:
    """Lost or wrong schedule entries are repaired page by page, reading little per table
    (and the lobby's entries with them)."""
    gateway = _gateway(redis_url, evaluator_address, clock=False)
    service: TableService = gateway.app.extensions["cardroom.service"]
    try:
        tables = [gateway.create() for _ in range(7)]
        client = service.store.client
        expected = {t: client.zscore(DEADLINES_KEY, t) for t in tables}
        assert all(score is not None for score in expected.values())
        client.zrem(DEADLINES_KEY, *tables[:5])
        client.zadd(DEADLINES_KEY, {tables[6]: 1.0e12})
        client.delete(table_key(tables[5]))  # a table whose keys are gone

        wire = Wire()
        counted = bootstrap(
            gateway_settings(redis_url, evaluator_address),
            players=False,
            client=counting_client(redis_url, wire),
            evaluator=EvaluatorClient(evaluator_address, EVALUATOR_TIMEOUT),
        )
        clock = Clock(counted.deadlines, interval=1.0, sweep=3600.0, page=3)
        repaired = {**expected, tables[5]: None}
        progress = []
        for _ in range(4):
            clock.tick()
            progress.append(sum(client.zscore(DEADLINES_KEY, t) == repaired[t] for t in tables))
        # every table needed a repair: one page of three per tick, then the pass is over
        assert progress == [3, 6, 7, 7]
        assert client.zscore(LOBBY_KEY, tables[5]) is None

        # a pass over tables whose schedule is right reads one hash field per table
        wire.take()
        assert clock.sweep() == 0
        trips = wire.take()
        assert ["HMGET"] not in trips
        # and the lobby's: each table's place, and the three shards' rows
        page = [["ZRANGEBYSCORE"], ["HGET"] * 3, ["ZMSCORE"], ["HGET"] * 3 + ["HMGET"] * 3]
        # six tables left: two full pages, then an empty one ends the pass
        assert trips == [*page, *page, ["ZRANGEBYSCORE"]]
        counted.close()
    finally:
        _close(gateway)
