"""The host's copies of the tables' last commits under gunicorn (api.adapters.host_commits):
the memory its master maps before it forks is shared by the real workers, and moves that
land on either worker take the copy the other one left."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.processes import GunicornGateway


def counted(page: str, result: str) -> float:
    """`cardroom_host_copies_total` for `result` on a metrics page (0 when absent)."""
    found = re.search(rf'^cardroom_host_copies_total{{result="{result}"}} (\S+)$', page, re.M)
    return 0.0 if found is None else float(found.group(1))


def test_moves_on_fresh_connections_take_the_copy_the_other_worker_left(
    redis_url: str, evaluator_address: str, tmp_path: Path
) -> None:
    metrics = tmp_path / "metrics"
    metrics.mkdir()
    gateway = GunicornGateway(
        redis_url,
        evaluator_address,
        tmp_path / "gunicorn.log",
        workers=2,
        CLOCK="false",
        HOST_COPIES="4096",
        PROMETHEUS_MULTIPROC_DIR=str(metrics),
    )
    gateway.start()
    http = gateway.http
    try:
        table_id = http.create(turn_seconds=600, deal_pause_seconds=0)
        players = {
            seated.seat: seated for seated in (http.sit(table_id, f"p{i}", 500) for i in range(3))
        }
        answer = http.act(table_id, players[min(players)], action="start")
        assert answer.status_code == 200, answer.text()
        version = int(answer.headers["etag"].strip('"'))
        used = 0.0
        for _ in range(60):  # each move on a connection of its own: either worker takes it
            pending = answer.get_json()["table"]["pending"]
            if pending is None:  # the game ended: the next one
                answer = http.act(table_id, players[min(players)], action="start")
            else:
                assert pending["action"] == "declare"  # the next deal is dealt at once
                player = players[pending["seats"][0]]
                answer = http.act(table_id, player, action="declare", choice="in")
            assert answer.status_code == 200, answer.text()
            version += 1
            assert answer.headers["etag"] == f'"{version}"'  # no move lost or repeated
            page = http.call("GET", "/metrics").text()
            used = counted(page, "used")
            if used >= 3:
                break
        assert used >= 3
        assert counted(page, "missing") == 0
    finally:
        gateway.stop()
    assert "Traceback" not in (tmp_path / "gunicorn.log").read_text()
