"""Away and back with the real clock: a table left alone stops dealing, and deals again
when its players are back (docs/rules.md, Away and back)."""

from __future__ import annotations

import json
import time
from typing import Any

from tests.conftest import REPORTS
from tests.support.gateway import Gateway
from tests.support.play import wait_for


def _all_away(gateway: Gateway, table_id: str) -> dict[str, Any] | None:
    table = gateway.table(table_id)
    seats = table["seats"].values()
    waiting = table["phase"] == "waiting"
    return table if waiting and seats and all(seat["away"] for seat in seats) else None


def _events(gateway: Gateway, table_id: str, player: Any) -> list[dict[str, Any]]:
    return list(gateway.events(table_id, player)["events"])


def test_a_table_left_alone_deals_away_after_deals_then_waits_for_its_players(
    gateway: Gateway,
) -> None:
    table_id = gateway.create(turn_seconds=1, deal_pause_seconds=0)
    players = [gateway.sit(table_id, name) for name in ("ann", "bob", "cy", "dee")]
    started = time.monotonic()
    assert gateway.act(table_id, players[0], action="start").status_code == 200
    table = wait_for(lambda: _all_away(gateway, table_id))
    # every seat missed its two decisions (away_after, 2): two deals, then nobody is dealt
    assert table["hand_number"] == 2
    assert table["game_in_progress"]
    assert table["pot"] > 0
    assert table["deadline"] is None
    assert table["pending"] is None
    left_alone = 5.0  # five turn_seconds
    time.sleep(left_alone)
    assert gateway.table(table_id)["hand_number"] == 2
    log = _events(gateway, table_id, players[0])
    away = [e["data"]["seat"] for e in log if e["type"] == "away"]
    assert sorted(away) == [1, 2, 3, 4]
    REPORTS.mkdir(parents=True, exist_ok=True)
    (REPORTS / "away.json").write_text(
        json.dumps(
            {
                "deals_dealt_by_an_abandoned_guts_table": table["hand_number"],
                "seconds_watched": round(time.monotonic() - started, 1),
                "turn_seconds": 1,
                "deal_pause_seconds": 0,
            }
        )
    )

    # `back` from one: still too few present (min_players 2), the table keeps waiting
    answer = gateway.act(table_id, players[0], action="back")
    assert answer.status_code == 200, answer.get_json()
    table = gateway.table(table_id)
    assert table["seats"]["1"]["away"] is False
    assert table["phase"] == "waiting"
    again = gateway.act(table_id, players[0], action="back")
    assert again.status_code == 409
    assert again.get_json()["code"] == "not_away"
    # a second one back: the game goes on after the pause, dealt to the two present only
    assert gateway.act(table_id, players[1], action="back").status_code == 200
    table = wait_for(lambda: (t := gateway.table(table_id))["hand_number"] == 3 and t)
    assert table["deal"]["players"] in ([1, 2], [2, 1])
    assert table["game_number"] == 1  # the same game: returning players are not new ones
    log = _events(gateway, table_id, players[0])
    third = next(
        i
        for i, e in enumerate(log)
        if e["type"] == "deal_started" and e["data"]["hand_number"] == 3
    )
    antes = [e["data"]["seat"] for e in log[third:] if e["type"] == "ante"]
    assert 3 not in antes
    assert 4 not in antes


def test_an_abandoned_paiute_deal_is_void_and_the_table_waits(gateway: Gateway) -> None:
    table_id = gateway.create(game="paiute", turn_seconds=1, deal_pause_seconds=0)
    players = [gateway.sit(table_id, name) for name in ("ann", "bob", "cy")]
    assert gateway.act(table_id, players[0], action="start").status_code == 200
    table = wait_for(lambda: _all_away(gateway, table_id))
    assert table["hand_number"] == 1
    log = _events(gateway, table_id, players[0])
    void = [e["data"]["reason"] for e in log if e["type"] == "deal_void"]
    assert void == ["nobody_present"]
    time.sleep(3.0)
    assert gateway.table(table_id)["hand_number"] == 1
    # a move of one's own brings a seat back too: a rebuy between deals
    answer = gateway.act(table_id, players[2], action="rebuy", amount=1)
    assert answer.status_code == 200, answer.get_json()
    assert gateway.table(table_id)["seats"]["3"]["away"] is False
