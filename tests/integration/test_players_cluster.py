"""Players on two gateways (gunicorn processes) sharing one Redis Cluster.

A player created on one gateway is known to the other; a table created on A is sat at
on B and played on both with the player's key; a key revoked on B stops working on B
at once and on A within the credential cache time (set short here).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import redis.cluster

from tests.support.problems import assert_problem
from tests.support.processes import GunicornGateway, HttpGateway, poll

pytestmark = pytest.mark.slow


@pytest.fixture
def gateways(
    redis_cluster: str, evaluator_address: str, tmp_path: Path
) -> Iterator[tuple[HttpGateway, HttpGateway]]:
    """Gateways A and B, one worker each, on the cluster; a key is trusted for 0.5 s."""
    started: list[GunicornGateway] = []
    try:
        for name in ("a", "b"):
            server = GunicornGateway(
                redis_cluster,
                evaluator_address,
                tmp_path / f"gateway-{name}.log",
                workers=1,
                REDIS_CLUSTER="true",
                CREDENTIAL_CACHE_SECONDS="0.5",
            )
            server.start()
            started.append(server)
        yield started[0].http, started[1].http
    finally:
        for server in started:
            server.stop()


def test_a_player_of_one_gateway_plays_and_is_revoked_on_the_other(
    gateways: tuple[HttpGateway, HttpGateway], redis_cluster: str
) -> None:
    a, b = gateways
    ann, bo = a.sign_up("ann"), b.sign_up("bo")
    me = b.call("GET", "/v1/players/me", ann)
    assert me.status_code == 200, me.text()
    assert me.get_json()["id"] == ann.id
    table_id = a.create(ann, deal_pause_seconds=60, turn_seconds=60)
    seated = b.sit(table_id, "ann", account=ann)
    b.sit(table_id, "bo", account=bo)
    started = a.call("POST", f"/v1/tables/{table_id}/actions", ann, {"action": "start"})
    assert started.status_code == 200, started.text()
    assert started.get_json()["table"]["you"]["seat"] == seated.seat
    (mine,) = b.call("GET", "/v1/players/me/seats", ann).get_json()["seats"]
    assert (mine["table_id"], mine["seat"], mine["phase"]) == (table_id, seated.seat, "declaring")
    declared = a.call(
        "POST", f"/v1/tables/{table_id}/actions", ann, {"action": "declare", "choice": "in"}
    )
    assert declared.status_code == 200, declared.text()
    # the player's records live on the slot of their id; tables on theirs
    client = redis.cluster.RedisCluster.from_url(redis_cluster)
    try:
        assert client.exists(f"player:{{{ann.id}}}")
        assert client.exists(f"table:{{{table_id}}}")
    finally:
        client.close()

    # revoked on B: refused on B at once, on A once A's cached lookup has run out
    key_id = b.call("GET", "/v1/players/me", ann).get_json()["key_id"]
    assert a.call("GET", "/v1/players/me", ann).status_code == 200  # A holds the key now
    revoked = b.call("DELETE", f"/v1/players/me/keys/{key_id}", ann)
    assert revoked.status_code == 204, revoked.text()
    assert_problem(b.call("GET", "/v1/players/me", ann), 401, "invalid_token")

    def refused_on_a() -> bool:
        return bool(a.call("GET", "/v1/players/me", ann).status_code == 401)

    poll(refused_on_a, 10, "the revoked key refused on A")
    move = a.call("POST", f"/v1/tables/{table_id}/actions", ann, {"action": "rebuy", "amount": 5})
    assert_problem(move, 401, "invalid_token")
    assert_problem(a.call("POST", "/v1/tables", ann, {"game": "guts"}), 401, "invalid_token")
    # the seat token is a credential of its own: it still acts for the seat
    view = a.call("GET", f"/v1/tables/{table_id}", seated)
    assert view.get_json()["you"]["seat"] == seated.seat
    assert b.call("GET", "/v1/players/me", bo).status_code == 200
