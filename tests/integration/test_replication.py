"""Acknowledged means replicated (`REDIS_ACK_REPLICAS`): a primary and its replica.

With the setting at 1, an answer goes out once the replica has the change: the replica
holds the table's new version the moment the answer arrives. With the replica frozen,
a change stands on the primary unacknowledged: 503 `not_replicated` with Retry-After,
and the same request under its Idempotency-Key gets the change's answer once the replica
has it, without making the change twice; before that, it is refused again. Through
gunicorn's gevent workers, where the commands of concurrent requests go as one batch
(`api.adapters.batching`), and in process alike.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
import redis.sentinel

from api.adapters.replication import READ_ONLY, Replication, acknowledging, is_write
from api.adapters.store import connect, table_key
from api.settings import Settings
from tests.support.failover import ReplicaOf, link_up
from tests.support.processes import GunicornGateway, RedisProcess, poll
from tests.support.tables_api import Player, TableCalls


@pytest.fixture
def pair(tmp_path: Path) -> Iterator[tuple[RedisProcess, RedisProcess]]:
    """A primary and its replica, in sync."""
    (tmp_path / "redis").mkdir()
    primary = RedisProcess(tmp_path / "redis")
    replica = ReplicaOf(tmp_path / "redis", primary)
    primary.start()
    replica.start()
    poll(lambda: link_up(replica), 30, "the replica in sync")
    yield primary, replica
    replica.stop()
    primary.stop()


def replicated_version(replica: RedisProcess, table_id: str) -> int:
    """The version of a table that the replica holds."""
    with redis.Redis(port=replica.port, decode_responses=True) as client:
        return int(client.hget(table_key(table_id), "version") or 0)


def started_table(calls: TableCalls) -> tuple[str, list[Player]]:
    """A started Guts table of two, and its two players."""
    table_id = calls.create(turn_seconds=3600)
    players = [calls.sit(table_id, name) for name in ("ann", "bo")]
    started = calls.act(table_id, players[0], action="start")
    assert started.status_code == 200, started.get_data(as_text=True)
    return table_id, players


def test_an_answer_goes_out_once_the_replica_has_the_change(
    pair: tuple[RedisProcess, RedisProcess], evaluator_address: str, tmp_path: Path
) -> None:
    primary, replica = pair
    gateway = GunicornGateway(
        primary.url, evaluator_address, tmp_path / "gunicorn.log", REDIS_ACK_REPLICAS="1"
    )
    gateway.start()
    try:
        table_id, players = started_table(gateway.http)
        declared = gateway.http.act(table_id, players[0], action="declare", choice="in")
        assert declared.status_code == 200
        version = int(declared.headers["etag"].strip('"').split("-")[0])
        # the answer came after the replica had the change: it holds that version already
        assert replicated_version(replica, table_id) == version
    finally:
        gateway.stop()


def test_a_change_no_replica_confirms_is_refused_and_its_retry_answered_once_it_has(
    pair: tuple[RedisProcess, RedisProcess], evaluator_address: str, tmp_path: Path
) -> None:
    primary, replica = pair
    gateway = GunicornGateway(
        primary.url,
        evaluator_address,
        tmp_path / "gunicorn.log",
        REDIS_ACK_REPLICAS="1",
        REDIS_ACK_TIMEOUT="0.2",
    )
    gateway.start()
    assert replica.process is not None
    try:
        table_id, players = started_table(gateway.http)
        headers = {"Idempotency-Key": "declare-once"}
        body = {"action": "declare", "choice": "in"}
        path = f"/v1/tables/{table_id}/actions"
        os.kill(replica.process.pid, signal.SIGSTOP)
        try:
            refused = gateway.http.call("POST", path, players[0], body, headers=headers)
            assert refused.status_code == 503, refused.get_data(as_text=True)
            assert refused.get_json()["code"] == "not_replicated"
            assert refused.headers["retry-after"] == "1"
            # the retry is refused too while no replica has the change
            again = gateway.http.call("POST", path, players[0], body, headers=headers)
            assert again.status_code == 503
            assert again.get_json()["code"] == "not_replicated"
        finally:
            os.kill(replica.process.pid, signal.SIGCONT)
        poll(lambda: link_up(replica), 30, "the replica back in sync")

        def replay() -> Any:
            answer = gateway.http.call("POST", path, players[0], body, headers=headers)
            return answer if answer.status_code != 503 else None

        # on a busy machine the replica may still be catching up: the retry is refused
        # as not replicated until it has, then answered
        replayed = poll(replay, 30, "the replayed answer")
        assert replayed.status_code == 200, replayed.get_data(as_text=True)
        assert replayed.headers["idempotent-replayed"] == "true"
        events = gateway.http.call("GET", f"/v1/tables/{table_id}/events?after=0").get_json()
        declared = [e for e in events["events"] if e["type"] == "declared"]
        assert [e["data"]["seat"] for e in declared] == [1]  # made once
    finally:
        gateway.stop()


def test_what_counts_as_a_write() -> None:
    assert not is_write(("GET", "k"))
    assert not is_write((b"HMGET", "k", "f"))
    assert not is_write(("xread", "BLOCK", 5))
    assert is_write(("EVALSHA", "sha", 1, "k"))
    assert is_write(("SET", "k", "v"))
    assert is_write(("ZADD", "k", 1, "m"))
    assert is_write(("SOMENEWCOMMAND", "k"))  # unknown: waited for, to be safe
    assert "WAIT" in READ_ONLY


def test_a_connection_waits_for_no_replica_unless_asked() -> None:
    assert acknowledging(redis.Connection, Replication(0)) is redis.Connection
    waiting = acknowledging(redis.Connection, Replication(2, 0.5))
    assert issubclass(waiting, redis.Connection)
    attributes = vars(waiting)
    assert (attributes["replicas"], attributes["timeout_ms"]) == (2, 500)


def test_the_settings_say_how_many_replicas_acknowledge_a_write() -> None:
    assert (Settings.from_env({}).redis_ack_replicas, Settings.from_env({}).redis_ack_timeout) == (
        0,
        1.0,
    )
    chosen = Settings.from_env({"REDIS_ACK_REPLICAS": "2", "REDIS_ACK_TIMEOUT": "0.25"})
    assert (chosen.redis_ack_replicas, chosen.redis_ack_timeout) == (2, 0.25)
    for wrong in ({"REDIS_ACK_REPLICAS": "-1"}, {"REDIS_ACK_TIMEOUT": "0"}):
        with pytest.raises(ValueError, match="REDIS_ACK"):
            Settings.from_env(wrong)


def test_a_sentinel_url_names_its_sentinels_service_database_and_password() -> None:
    client = connect("redis+sentinel://:secret@127.0.0.1:26379,10.0.0.2:26380/tables/3", False)
    assert isinstance(client, redis.Redis)
    pool = client.connection_pool
    assert isinstance(pool, redis.sentinel.SentinelConnectionPool)
    assert pool.service_name == "tables"
    assert (pool.connection_kwargs["db"], pool.connection_kwargs["password"]) == (3, "secret")
    sentinels = pool.sentinel_manager.sentinels
    assert [
        (s.connection_pool.connection_kwargs["host"], s.connection_pool.connection_kwargs["port"])
        for s in sentinels
    ] == [("127.0.0.1", 26379), ("10.0.0.2", 26380)]
    with pytest.raises(ValueError, match="Sentinel"):
        connect("redis+sentinel://127.0.0.1:26379", False)
