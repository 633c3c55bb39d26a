"""A first full Guts deal through the HTTP API."""

from __future__ import annotations

from tests.support.gateway import Gateway


def test_create_sit_start_declare_settle(gateway: Gateway) -> None:
    table_id = gateway.create(turn_seconds=30, deal_pause_seconds=30)
    alice = gateway.sit(table_id, "alice")
    bob = gateway.sit(table_id, "bob")
    started = gateway.act(table_id, alice, action="start")
    assert started.status_code == 200, started.get_json()
    table = gateway.table(table_id, alice)
    assert table["phase"] == "declaring"
    assert len(table["you"]["cards"]) == 3
    assert gateway.act(table_id, alice, action="declare", choice="in").status_code == 200
    done = gateway.act(table_id, bob, action="declare", choice="in")
    assert done.status_code == 200, done.get_json()
    table = gateway.table(table_id)
    assert table["phase"] == "between_deals"
    history = gateway.call("GET", f"/v1/tables/{table_id}/hands/1")
    assert history.status_code == 200, history.get_json()
