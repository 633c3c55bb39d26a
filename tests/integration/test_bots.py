"""Computer players at real tables: seated by the table's creator, marked in every view,
paid from the house's bots account, played by runners that share them through leases,
and one person playing a whole game against two of them. The ledger's audit runs after
each test (tests/conftest.py)."""

from __future__ import annotations

import os
import random
import secrets
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from api.bootstrap import Services
from api.bots.runner import Pace, Runner
from api.games.cards import canonical_card
from api.service.bots import BOTS_ACCOUNT
from deploy.processes import BotsProcess
from tests.support.gateway import Gateway, close_app, make_app
from tests.support.play import wait_for
from tests.support.tables_api import Account

QUICK = Pace(delay=(0.01, 0.05), lease_seconds=1.0, round_seconds=0.02)


def _services(gateway: Gateway) -> Services:
    services: Services = gateway.app.extensions["cardroom.services"]
    return services


def _odds(services: Services) -> Any:
    def odds(cards: list[str]) -> float:
        counted = services.evaluator.odds(f"guts{len(cards)}", " ".join(cards), 1, 1, None)
        return float(counted["win"]) + float(counted["tie"]) / 2  # type: ignore[arg-type]

    return odds


@contextmanager
def running(runner: Runner) -> Iterator[Runner]:
    """`runner` playing in a thread of its own until the block ends."""
    thread = threading.Thread(target=runner.run, daemon=True)
    thread.start()
    try:
        yield runner
    finally:
        runner.stop()
        thread.join(timeout=30)


def _table(gateway: Gateway, host: Account, **options: Any) -> str:
    response = gateway.json_call("POST", "/v1/tables", host, options)
    assert response.status_code == 201, response.get_json()
    return str(response.get_json()["table"]["id"])


def _seat_bot(gateway: Gateway, who: Account | None, table_id: str, **body: Any) -> Any:
    return gateway.json_call("POST", f"/v1/tables/{table_id}/bots", who, body)


def _view(gateway: Gateway, table_id: str, host: Account) -> dict[str, Any]:
    response = gateway.call("GET", f"/v1/tables/{table_id}", host)
    assert response.status_code == 200
    return dict(response.get_json())


def test_a_bot_is_seated_marked_and_paid_by_the_house(gateway: Gateway) -> None:
    host = gateway.sign_up("host")
    table_id = _table(gateway, host, game="guts", turn_seconds=30)
    seated = _seat_bot(gateway, host, table_id, strategy="strong", buy_in=100)
    assert seated.status_code == 201, seated.get_json()
    body = seated.get_json()
    assert "token" not in body  # the bot's credential stays with its runner
    seat = body["seat"]
    assert body["table"]["seats"][str(seat)]["computer"] == "strong"
    assert body["table"]["seats"][str(seat)]["name"] == "Strong bot"
    assert any(e["type"] == "seated" and e["data"]["computer"] == "strong" for e in body["events"])
    # every view says so: a spectator's, and the table's lobby entry is the same table
    spectator = gateway.call("GET", f"/v1/tables/{table_id}").get_json()
    assert spectator["seats"][str(seat)]["computer"] == "strong"
    second = _seat_bot(gateway, host, table_id, strategy="easy", buy_in=50).get_json()
    assert second["table"]["seats"][str(second["seat"])]["name"] == "Easy bot"
    # the chips came from the house's bots account, through the ledger
    wallets = _services(gateway).wallets
    assert wallets.balance(BOTS_ACCOUNT) == {"balance": 0, "pending": 0}
    kinds = [e["kind"] for e in wallets.entries_page(BOTS_ACCOUNT, None, 100)[0]]
    assert kinds.count("deposit") == 2
    assert kinds.count("buy_in") == 2
    # removed by its creator, it cashes out back to the bots' account
    removed = gateway.call("DELETE", f"/v1/tables/{table_id}/bots/{seat}", host)
    assert removed.status_code == 200, removed.get_json()
    assert removed.get_json()["left"] is True
    assert wallets.balance(BOTS_ACCOUNT)["balance"] == 100


def test_who_may_seat_a_bot_and_what_it_may_play(gateway: Gateway) -> None:
    host, other = gateway.sign_up("host"), gateway.sign_up("other")
    table_id = _table(gateway, host, game="paiute")
    refused = _seat_bot(gateway, other, table_id, strategy="strong", buy_in=100)
    assert refused.status_code == 403
    assert refused.get_json()["code"] == "not_table_owner"
    unknown = _seat_bot(gateway, host, table_id, strategy="perfect", buy_in=100)
    assert unknown.status_code == 422
    assert unknown.get_json()["code"] == "unknown_strategy"
    assert unknown.get_json()["field"] == "strategy"
    anonymous = _seat_bot(gateway, None, table_id, strategy="strong", buy_in=100)
    assert anonymous.status_code == 401
    poor = _seat_bot(gateway, host, table_id, strategy="strong", buy_in=10**6)
    assert poor.status_code == 422
    assert poor.get_json()["code"] == "invalid_buy_in"
    # a person's seat is no computer player's to remove
    gateway.json_call("POST", f"/v1/tables/{table_id}/seats", host, {"buy_in": 100})
    person = gateway.call("DELETE", f"/v1/tables/{table_id}/bots/1", host)
    assert person.status_code == 404
    assert person.get_json()["code"] == "not_a_computer_player"
    strategies = gateway.call("GET", "/v1/bots/strategies").get_json()
    assert strategies == {
        "guts": ["random", "easy", "strong"],
        "paiute": ["random", "easy", "strong"],
    }


def test_bots_sit_only_where_the_operator_allows(redis_url: str, evaluator_address: str) -> None:
    app = make_app(redis_url, evaluator_address, bots_allowed="never")
    try:
        gateway = Gateway(app, app.test_client())
        host = gateway.sign_up("host")
        table_id = _table(gateway, host, game="guts")
        refused = _seat_bot(gateway, host, table_id, strategy="easy", buy_in=100)
        assert refused.status_code == 403
        assert refused.get_json()["code"] == "bots_not_allowed"
    finally:
        close_app(app)
    # operator mode's chips are no play money: by default no bot sits there, and with
    # BOTS_ALLOWED=everywhere an operator key seats one at any table
    key = "op-" + secrets.token_hex(16)
    for allowed, status in (("play_money", 403), ("everywhere", 201)):
        app = make_app(
            redis_url,
            evaluator_address,
            players_mode="operator",
            operator_keys=(key,),
            bots_allowed=allowed,
        )
        try:
            client = app.test_client()
            client.signs_in = False  # type: ignore[attr-defined]
            gateway = Gateway(app, client)
            operator = {"Authorization": f"Bearer {key}"}
            made = gateway.call("POST", "/v1/players", json={"name": "host"}, headers=operator)
            host = Account(made.get_json()["id"], "host", made.get_json()["key"])
            table_id = _table(gateway, host, game="guts")
            path = f"/v1/tables/{table_id}/bots"
            body = {"strategy": "strong", "buy_in": 100}
            seated = gateway.call("POST", path, json=body, headers=operator)
            assert seated.status_code == status, seated.get_json()
        finally:
            close_app(app)


def _play_person(
    gateway: Gateway, table_id: str, host: Account, deals: int, started: bool = False
) -> None:
    """The person's side of a game against bots (it starts the table unless `started`),
    at random, until `deals` deals are over."""
    if not started:
        path = f"/v1/tables/{table_id}/actions"
        answer = gateway.json_call("POST", path, host, {"action": "start"})
        assert answer.status_code == 200, answer.get_json()
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        view = _view(gateway, table_id, host)
        if view["hand_number"] > deals:
            return
        you, pending = view["you"], view["pending"]
        if pending and you and you["seat"] in pending["seats"]:
            if view["game"] == "guts":
                body = {"action": "declare", "choice": random.choice(["in", "out"])}
            elif pending["action"] == "draw":
                body = {"action": "draw", "source": "stock"}
            else:
                drawn = you["drawn"]["card"] if you["drawn"] else you["cards"][-1]
                body = {"action": "discard", "card": canonical_card(drawn)}
            gateway.json_call("POST", f"/v1/tables/{table_id}/actions", host, body)
        time.sleep(0.02)
    raise AssertionError(f"the table did not reach deal {deals + 1}")


@pytest.mark.parametrize("game", ["guts", "paiute"])
def test_one_person_plays_a_game_alone_against_two_bots(gateway: Gateway, game: str) -> None:
    host = gateway.sign_up("host")
    table_id = _table(gateway, host, game=game, turn_seconds=60, deal_pause_seconds=0)
    gateway.json_call("POST", f"/v1/tables/{table_id}/seats", host, {"buy_in": 100})
    for strategy in ("strong", "easy"):
        assert _seat_bot(gateway, host, table_id, strategy=strategy, buy_in=100).status_code == 201
    services = _services(gateway)
    runner = Runner(services.bots, services.bots.store, _odds(services), QUICK)
    with running(runner):
        _play_person(gateway, table_id, host, deals=3)
    assert runner.moves > 0
    events = gateway.events(table_id)["events"]
    # no deadline played a bot's turn: the bots always moved in time
    bot_seats = {
        int(seat)
        for seat, view in _view(gateway, table_id, host)["seats"].items()
        if "computer" in view
    }
    assert len(bot_seats) == 2
    timed_out = [e for e in events if e["type"] == "timeout" and e["data"].get("seat") in bot_seats]
    assert not timed_out


def test_runners_share_bots_and_a_dead_one_is_replaced(gateway: Gateway) -> None:
    host = gateway.sign_up("host")
    table_id = _table(gateway, host, game="guts", turn_seconds=60, deal_pause_seconds=0)
    gateway.json_call("POST", f"/v1/tables/{table_id}/seats", host, {"buy_in": 100})
    for strategy in ("strong", "easy", "random"):
        _seat_bot(gateway, host, table_id, strategy=strategy, buy_in=100)
    services = _services(gateway)
    first = Runner(services.bots, services.bots.store, _odds(services), QUICK)
    second = Runner(services.bots, services.bots.store, _odds(services), QUICK)
    first.round()
    second.round()
    # each bot is played by exactly one runner
    assert len(first.held) + len(second.held) == 3
    assert not set(first.held) & set(second.held)
    # the first runner dies holding its leases: once they run out the second takes over
    dead = set(first.held)
    with running(second):
        wait_for(lambda: dead <= set(second.held) or None, 30)
        _play_person(gateway, table_id, host, deals=2)
    assert second.moves > 0
    refused = [e for e in gateway.events(table_id)["events"] if e["type"] == "timeout"]
    assert not [e for e in refused if e["data"].get("seat") != 1]


def test_the_bots_process_plays_and_a_killed_one_is_replaced(
    gateway: Gateway, redis_url: str, evaluator_address: str, tmp_path: Path
) -> None:
    host = gateway.sign_up("host")
    table_id = _table(gateway, host, game="guts", turn_seconds=60, deal_pause_seconds=0)
    gateway.json_call("POST", f"/v1/tables/{table_id}/seats", host, {"buy_in": 100})
    for strategy in ("strong", "easy"):
        _seat_bot(gateway, host, table_id, strategy=strategy, buy_in=100)
    quick = {
        **os.environ,
        "BOT_DELAY_MIN_SECONDS": "0.01",
        "BOT_DELAY_MAX_SECONDS": "0.05",
        "BOT_LEASE_SECONDS": "1",
        "BOT_HEARTBEAT_FILE": str(tmp_path / "bots-alive"),
    }
    first = BotsProcess(redis_url, evaluator_address, tmp_path / "first.log", quick)
    first.start()
    try:
        _play_person(gateway, table_id, host, deals=1)
        assert (tmp_path / "bots-alive").exists()
        first.kill()  # a crash: its leases are left to run out
        second = BotsProcess(redis_url, evaluator_address, tmp_path / "second.log", quick)
        second.start()
        try:
            played = gateway.call("GET", f"/v1/tables/{table_id}").get_json()["hand_number"]
            _play_person(gateway, table_id, host, deals=played + 1, started=True)
        finally:
            second.stop()
    finally:
        first.stop()
    events = gateway.events(table_id)["events"]
    assert not [e for e in events if e["type"] == "timeout" and e["data"].get("seat") != 1]


def test_bots_left_alone_leave_too(gateway: Gateway) -> None:
    host = gateway.sign_up("host")
    table_id = _table(gateway, host, game="paiute", turn_seconds=60, deal_pause_seconds=0)
    gateway.json_call("POST", f"/v1/tables/{table_id}/seats", host, {"buy_in": 100})
    for strategy in ("strong", "random"):
        _seat_bot(gateway, host, table_id, strategy=strategy, buy_in=100)
    services = _services(gateway)
    runner = Runner(services.bots, services.bots.store, _odds(services), QUICK)
    with running(runner):
        _play_person(gateway, table_id, host, deals=1)
        left = gateway.call("DELETE", f"/v1/tables/{table_id}/seats/1", host)
        assert left.status_code == 200, left.get_json()

        def empty() -> bool | None:
            seats = gateway.call("GET", f"/v1/tables/{table_id}").get_json()["seats"]
            return not seats or None

        wait_for(empty, 60)
        # their runner forgets them once their seats are gone
        wait_for(lambda: not services.bots.store.at_table(table_id) or None, 30)


def test_a_bot_whose_seat_number_was_lost_is_still_played(gateway: Gateway) -> None:
    # as if the gateway died between the seat's commit and noting its number
    host = gateway.sign_up("host")
    table_id = _table(gateway, host, game="guts")
    gateway.json_call("POST", f"/v1/tables/{table_id}/seats", host, {"buy_in": 100})
    seat = _seat_bot(gateway, host, table_id, strategy="easy", buy_in=100).get_json()["seat"]
    store = _services(gateway).bots.store
    (record,) = store.at_table(table_id)
    assert record["seat"] == seat
    store.add({**record, "seat": 0})
    services = _services(gateway)
    Runner(services.bots, store, _odds(services), QUICK).round()
    (found,) = store.at_table(table_id)
    assert found["seat"] == seat
    # so its creator can remove it
    assert gateway.call("DELETE", f"/v1/tables/{table_id}/bots/{seat}", host).status_code == 200
