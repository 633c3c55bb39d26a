"""Health, readiness, metrics, the OpenAPI document, docs, and ranking without a table."""

from __future__ import annotations

import random

from tests.support.gateway import Gateway


def test_health_ready_metrics(gateway: Gateway) -> None:
    assert gateway.call("GET", "/healthz").get_json() == {"status": "ok"}
    assert gateway.call("GET", "/readyz").get_json() == {
        "status": "ready",
        "redis": "ok",
        "evaluator": "ok",
    }
    gateway.create()
    text = gateway.call("GET", "/metrics").get_data(as_text=True)
    assert 'cardroom_http_requests_total{method="POST",route="/v1/tables",status="201"}' in text
    assert "cardroom_http_request_seconds_bucket" in text


def test_openapi_and_docs(gateway: Gateway) -> None:
    document = gateway.call("GET", "/openapi.json").get_json()
    assert document["openapi"].startswith("3.1")
    assert "/v1/tables/{table_id}/actions" in document["paths"]
    docs = gateway.call("GET", "/docs")
    assert docs.status_code == 200
    assert "swagger-ui" in docs.get_data(as_text=True)
    initializer = gateway.call("GET", "/docs/initializer.js").get_data(as_text=True)
    assert "/openapi.json" in initializer
    slash = gateway.call("GET", "/docs/")
    assert (slash.status_code, slash.headers["Location"]) == (308, "/docs")


def test_evaluate_hands_and_odds(gateway: Gateway) -> None:
    ranked = gateway.call(
        "POST", "/v1/evaluate", json={"game": "guts3", "hands": ["Ah Kh Qh", "2c 3d 5h"]}
    )
    assert ranked.status_code == 200, ranked.get_json()
    results = ranked.get_json()["results"]
    assert results[0]["category"] == "STRAIGHT_FLUSH"
    assert results[0]["strength"] > results[1]["strength"]
    paiute = gateway.call(
        "POST",
        "/v1/evaluate",
        json={
            "game": "paiute",
            "wild_rank": 2,
            "hands": ["9h 9d 9s 9c 2d 3c"],
            "paiute_valuation": "best_of_any",
        },
    )
    assert paiute.get_json()["results"][0]["category"] == "FIVE_OF_A_KIND"
    assert paiute.get_json()["results"][0]["leftover"] == "3c"
    odds = gateway.call(
        "POST", "/v1/evaluate", json={"game": "guts3", "odds": {"hand": "Ac Kd Qh", "opponents": 1}}
    ).get_json()
    assert (odds["wins"], odds["ties"], odds["losses"], odds["exact"]) == (18_314, 26, 84, True)
    bad = gateway.call("POST", "/v1/evaluate", json={"game": "guts3", "hands": ["Ah Ah Kd"]})
    assert bad.status_code == 422
    assert bad.get_json()["detail"] == "The card Ah is in the hand twice."
    assert bad.get_json()["field"] == "hands[0]"
    guts_wild = gateway.call(
        "POST", "/v1/evaluate", json={"game": "guts3", "hands": ["Ah Kd Qc"], "wild_rank": 7}
    )
    assert guts_wild.status_code == 422
    assert (guts_wild.get_json()["code"], guts_wild.get_json()["field"]) == (
        "invalid_field",
        "wild_rank",
    )
    unseeded = gateway.call(
        "POST",
        "/v1/evaluate",
        json={"game": "guts3", "odds": {"hand": "Ah Kd Qc", "opponents": 2, "seed": 0}},
    )
    assert (unseeded.status_code, unseeded.get_json()["field"]) == (422, "odds.seed")
    bad_odds = gateway.call(
        "POST", "/v1/evaluate", json={"game": "guts3", "odds": {"hand": "Ah Ah Kd", "opponents": 1}}
    )
    assert (bad_odds.status_code, bad_odds.get_json()["field"]) == (422, "odds.hand")
    missing = gateway.call(
        "POST", "/v1/evaluate", json={"game": "paiute", "hands": ["2c 3c 4c 5c 6c"]}
    )
    assert missing.status_code == 422
    assert missing.get_json()["field"] == "wild_rank"
    four = gateway.call(
        "POST", "/v1/evaluate", json={"game": "paiute", "wild_rank": 2, "hands": ["2c 2d 2h 2s 9c"]}
    )
    assert four.status_code == 422
    assert four.get_json()["code"] == "invalid_hand"
    assert "all four twos, the wild rank" in four.get_json()["detail"]
    assert four.get_json()["field"] == "hands[0]"


def test_chips_are_conserved_over_random_moves(gateway: Gateway) -> None:
    rng = random.Random(2026)
    table_id = gateway.create(
        deal_pause_seconds=0, turn_seconds=2, cap=5, cap_mode="reserve", ante_mode="every_deal"
    )
    players = [gateway.sit(table_id, f"p{i}", buy_in=40) for i in range(5)]
    bought, cashed = 5 * 40, 0
    gateway.act(table_id, players[0], action="start")
    for _ in range(120):
        player = rng.choice(players)
        move = rng.random()
        if move < 0.7:
            gateway.act(table_id, player, action="declare", choice=rng.choice(["in", "out"]))
        elif move < 0.8:
            if gateway.act(table_id, player, action="rebuy", amount=5).status_code == 200:
                bought += 5
        elif move < 0.85:
            gateway.call("DELETE", f"/v1/tables/{table_id}/seats/{player.seat}", player)
        else:
            gateway.act(table_id, player, action="start")
        table = gateway.table(table_id)
        events = gateway.events(table_id)["events"]
        cashed = sum(e["data"]["amount"] for e in events if e["type"] == "cashed_out")
        total = sum(s["stack"] for s in table["seats"].values()) + table["pot"] + table["reserve"]
        assert total == bought - cashed
        assert all(s["stack"] >= 0 for s in table["seats"].values())
        assert table["pot"] >= 0
        assert table["reserve"] >= 0
