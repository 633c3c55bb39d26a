"""A clock claims the tables it finds due, so that other processes' clocks skip them."""

from __future__ import annotations

import time

import redis

from gateway.adapters.store import DEADLINES_KEY, TableStore
from gateway.runtime.clock import CLAIM_SECONDS, Clock
from tests.support.gateway import Gateway, close_app, make_app


def test_a_due_table_is_claimed_once_until_its_claim_runs_out(redis_url: str) -> None:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    store = TableStore(client)
    client.zadd(DEADLINES_KEY, {"due-a": 10.0, "due-b": 20.0, "later": 100.0})
    assert sorted(store.claim_due(50.0, CLAIM_SECONDS)) == ["due-a", "due-b"]
    # another clock polling meanwhile finds nothing to do
    assert store.claim_due(50.0, CLAIM_SECONDS) == []
    assert client.zscore(DEADLINES_KEY, "due-a") == 50.0 + CLAIM_SECONDS
    assert client.zscore(DEADLINES_KEY, "later") == 100.0
    # a claim left behind makes the table due again once it runs out
    assert sorted(store.claim_due(50.0 + CLAIM_SECONDS, CLAIM_SECONDS)) == ["due-a", "due-b"]
    client.close()


def test_of_two_clocks_one_deals_the_next_deal_and_the_other_skips_it(
    redis_url: str, evaluator_address: str
) -> None:
    app = make_app(redis_url, evaluator_address, clock=False)
    service = app.extensions["cardroom.service"]
    gateway = Gateway(app, app.test_client())
    table_id = gateway.create(deal_pause_seconds=0, turn_seconds=3600)
    players = [gateway.sit(table_id, f"p{i}") for i in range(2)]
    gateway.act(table_id, players[0], action="start")
    for player in players:
        gateway.act(table_id, player, action="declare", choice="out")
    first, second = (Clock(service, 1.0, sweep=3600.0) for _ in range(2))
    for clock in (first, second):
        clock._last_sweep = time.monotonic()  # no repair pass in these ticks
    assert first.tick() == 1
    assert second.tick() == 0
    table = gateway.table(table_id)
    assert (table["hand_number"], table["phase"]) == (2, "declaring")
    # the deal's commit scheduled the table at its real deadline, the turn's end
    record = service.store.load(table_id)
    assert record is not None
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    assert client.zscore(DEADLINES_KEY, table_id) == service.next_deadline(record.state)
    client.close()
    close_app(app)
