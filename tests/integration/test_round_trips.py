"""Redis round trips per kind of request, counted on the wire of a real Redis.

The gateway's store client is given a connection class that counts what it sends:
each `send_packed_command` is one request to Redis (a pipeline is sent in one), and
the command names are read back from the RESP it carries. The clock is off, so only
the request under test talks to Redis.

A move on a table this process changed last is one round trip (the commit: api.adapters.warm);
on any other table it is two (a read, then the commit).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from typing import Any

import pytest
import redis
import redis.cluster

from api.adapters import host_commits
from api.adapters.evaluator import EvaluatorClient
from api.app import create_app
from api.bootstrap import bootstrap
from api.settings import Settings
from tests.support.gateway import EVALUATOR_TIMEOUT, Gateway, gateway_settings
from tests.support.redis_wire import Wire, counting_client, counting_connection
from tests.support.tables_api import Player

# a move that ends a deal is no more round trips than any move: its commit writes the
# deal's copies for its players' recall (api.service.recall) and lists the table for
# the packer (api.service.packing), which the clock runs apart from the moves


def counted_gateway(
    redis_url: str, evaluator_address: str, wire: Wire, warm_tables: int = 1000
) -> Gateway:
    """A gateway (no clock, no rate limits) whose Redis traffic goes to `wire`."""
    evaluator = EvaluatorClient(evaluator_address, EVALUATOR_TIMEOUT)
    names = {item.name for item in dataclasses.fields(Settings)}
    overrides = {
        name: 0 for name in ("rate_limit_per_address", "rate_limit_per_token") if name in names
    }
    settings = gateway_settings(
        redis_url, evaluator_address, clock=False, warm_tables=warm_tables, **overrides
    )
    services = bootstrap(settings, client=counting_client(redis_url, wire), evaluator=evaluator)
    app = create_app(settings, services=services)
    app.testing = True
    return Gateway(app, app.test_client())


@pytest.fixture
def counted(redis_url: str, evaluator_address: str) -> Iterator[tuple[Gateway, Wire]]:
    """A gateway that reads every table before a move (WARM_TABLES=0), traffic counted."""
    wire = Wire()
    gateway = counted_gateway(redis_url, evaluator_address, wire, warm_tables=0)
    yield gateway, wire
    gateway.app.extensions["cardroom.service"].evaluator.close()


def _two_gateways(
    redis_url: str, evaluator_address: str
) -> Iterator[tuple[Gateway, Gateway, Wire]]:
    wire = Wire()
    first = counted_gateway(redis_url, evaluator_address, wire)
    second = counted_gateway(redis_url, evaluator_address, Wire())
    yield first, second, wire
    for gateway in (first, second):
        gateway.app.extensions["cardroom.service"].evaluator.close()


@pytest.fixture
def two_gateways(redis_url: str, evaluator_address: str) -> Iterator[tuple[Gateway, Gateway, Wire]]:
    """Two gateway processes' apps on one Redis, as deployed (warm tables on); the
    first one's traffic is counted."""
    yield from _two_gateways(redis_url, evaluator_address)


@pytest.fixture
def two_workers(
    redis_url: str, evaluator_address: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Gateway, Gateway, Wire]]:
    """Two workers of one gateway host: apps that share the memory gunicorn's master
    makes before it forks them (api.adapters.host_commits); the first one's traffic is
    counted."""
    monkeypatch.setattr(host_commits, "SHARED", host_commits.HostCommits.create())
    yield from _two_gateways(redis_url, evaluator_address)


def _settled_after_another(first: Gateway, second: Gateway, wire: Wire) -> list[list[str]]:
    """A started table the first gateway holds warm, changed by the second, then the
    first's declare that ends the deal: the first gateway's round trips for that move."""
    table_id, players = _three_players(first)
    assert first.act(table_id, players[0], action="start").status_code == 200
    assert first.act(table_id, players[0], action="declare", choice="in").status_code == 200
    response = second.act(table_id, players[1], action="declare", choice="in")
    assert response.status_code == 200, response.get_json()
    wire.take()
    response = first.act(table_id, players[2], action="declare", choice="in")
    assert response.status_code == 200, response.get_json()
    assert any(e["type"] == "deal_ended" for e in response.get_json()["events"])
    return wire.take()


def test_a_warm_copy_another_host_changed_is_refused_and_read_again(
    two_gateways: tuple[Gateway, Gateway, Wire],
) -> None:
    """Another host's commit is seen only by the compare-and-set: the move computed from
    the stale copy is refused, read and computed again."""
    trips = _settled_after_another(*two_gateways)
    assert trips == [["EVALSHA"], ["HMGET", "HGETALL"], ["EVALSHA"]]


def test_a_move_on_a_table_another_worker_of_the_host_changed_takes_that_workers_copy(
    two_workers: tuple[Gateway, Gateway, Wire],
) -> None:
    """A worker of the same host noted its commit and left a copy of it: the stale copy
    is not used, the move is computed from the other worker's and committed at once."""
    assert _settled_after_another(*two_workers) == [["EVALSHA"]]


@pytest.fixture
def two_workers_without_copies(
    redis_url: str, evaluator_address: str, monkeypatch: pytest.MonkeyPatch
) -> Iterator[tuple[Gateway, Gateway, Wire]]:
    """Two workers of a host whose master keeps no copies (HOST_COPIES=0), only versions."""
    monkeypatch.setattr(host_commits, "SHARED", host_commits.HostCommits.create(copies=0))
    yield from _two_gateways(redis_url, evaluator_address)


def test_without_a_copy_a_table_another_worker_of_the_host_changed_is_read(
    two_workers_without_copies: tuple[Gateway, Gateway, Wire],
) -> None:
    """Only the version noted: the stale copy is not used, and the move is read and
    committed once."""
    trips = _settled_after_another(*two_workers_without_copies)
    assert trips == [["HMGET", "HGETALL"], ["EVALSHA"]]


def test_workers_taking_turns_at_a_table_never_read_it(
    two_workers: tuple[Gateway, Gateway, Wire],
) -> None:
    """Moves that alternate between two workers of a host over whole deals (the next
    deal dealt at once), each computed from the other's copy: one round trip a move,
    and every move's version follows the last one's."""
    first, second, wire = two_workers
    table_id = first.create(turn_seconds=60, deal_pause_seconds=0)
    players = [first.sit(table_id, f"p{i}") for i in range(3)]
    response = first.act(table_id, players[0], action="start")
    assert response.status_code == 200, response.get_json()
    version = int(response.headers["ETag"].strip('"'))
    for move in range(9):  # three deals
        gateway = (second, first)[move % 2]
        wire.take()
        response = gateway.act(table_id, players[move % 3], action="declare", choice="in")
        assert response.status_code == 200, response.get_json()
        version += 1
        assert response.headers["ETag"] == f'"{version}"'
        if gateway is first:
            assert wire.take() == [["EVALSHA"]]
    table = first.table(table_id)
    assert table["hand_number"] == 4
    assert table == second.table(table_id)


def keyed_move(gateway: Gateway, table_id: str, player: Player, key: str, **action: Any) -> Any:
    """A move sent with an Idempotency-Key."""
    return gateway.call(
        "POST",
        f"/v1/tables/{table_id}/actions",
        player,
        json=action,
        headers={"Idempotency-Key": key},
    )


def _three_players(gateway: Gateway) -> tuple[str, list[Player]]:
    table_id = gateway.create(turn_seconds=60, deal_pause_seconds=60)
    return table_id, [gateway.sit(table_id, f"p{i}") for i in range(3)]


def test_a_move_is_one_read_and_one_commit(counted: tuple[Gateway, Wire]) -> None:
    """Start, declare and the showdown-settling declare: two round trips each."""
    gateway, wire = counted
    table_id, players = _three_players(gateway)

    wire.take()
    response = gateway.act(table_id, players[0], action="start")
    assert response.status_code == 200, response.get_json()
    assert wire.take() == [["HMGET", "HGET"], ["EVALSHA"]]

    response = gateway.act(table_id, players[0], action="declare", choice="in")
    assert response.status_code == 200, response.get_json()
    assert wire.take() == [["HMGET", "HGET"], ["EVALSHA"]]

    gateway.act(table_id, players[1], action="declare", choice="in")
    wire.take()
    # the last declaration brings the showdown: ranked by the evaluator (gRPC, not Redis),
    # settled and its hand history and its players' copies written, all in the same commit
    response = gateway.act(table_id, players[2], action="declare", choice="in")
    assert response.status_code == 200, response.get_json()
    assert any(e["type"] == "deal_ended" for e in response.get_json()["events"])
    assert wire.take() == [["HMGET", "HGET"], ["EVALSHA"]]
    assert gateway.call("GET", f"/v1/tables/{table_id}/hands/1").status_code == 200


def test_an_idempotent_warm_move_refuses_to_overwrite_its_record(
    two_gateways: tuple[Gateway, Gateway, Wire],
) -> None:
    """Warm, a keyed move commits only if its record does not exist; a replay reads it."""
    gateway, _, wire = two_gateways
    table_id, players = _three_players(gateway)
    assert gateway.act(table_id, players[0], action="start").status_code == 200
    wire.take()

    def declare() -> Any:
        return keyed_move(gateway, table_id, players[0], "in-1", action="declare", choice="in")

    first = declare()
    assert first.status_code == 200, first.get_json()
    assert wire.take() == [["EVALSHA"]]  # warm: the commit, which checks the record's absence
    # the copy refuses the declare made already; only a fresh read refuses, and it finds
    # the record and replays it
    replay = declare()
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.get_json() == first.get_json()
    assert wire.take() == [["HMGET", "HGETALL", "GET"]]


def test_a_keyed_rebuy_reads_its_record_before_it_reserves_chips(
    two_gateways: tuple[Gateway, Gateway, Wire],
) -> None:
    """A keyed move paid from a wallet (a rebuy) reads the table from Redis, its record
    included, before it reserves any chip, warm or not: its replay reserves nothing."""
    gateway, _, wire = two_gateways
    table_id, players = _three_players(gateway)
    wire.take()

    def rebuy() -> Any:
        return keyed_move(gateway, table_id, players[0], "rebuy-1", action="rebuy", amount=5)

    first = rebuy()
    assert first.status_code == 200, first.get_json()
    # the read (with the record); the chips: the sweeper's pointer, the wallet's
    # reservation; the commit; the post
    read = ["HMGET", "HGETALL", "GET"]
    assert wire.take() == [read, ["ZADD"], ["EVALSHA"], ["EVALSHA"], ["EVALSHA"]]
    # the same read finds the record and replays it: no chip moves
    replay = rebuy()
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.get_json() == first.get_json()
    assert wire.take() == [read]
    assert (
        gateway.table(table_id, players[0])["seats"][str(players[0].seat)]["stack"]
        == (first.get_json()["table"]["seats"][str(players[0].seat)]["stack"])
    )


def test_an_idempotent_move_reads_its_record_in_the_same_round_trip(
    counted: tuple[Gateway, Wire],
) -> None:
    """With an Idempotency-Key the record is read in the same pipeline; a replay is one trip."""
    gateway, wire = counted
    table_id, players = _three_players(gateway)
    wire.take()

    def start() -> Any:
        return keyed_move(gateway, table_id, players[0], "start-1", action="start")

    first = start()
    assert first.status_code == 200, first.get_json()
    assert wire.take() == [["HMGET", "HGET", "GET"], ["EVALSHA"]]
    replay = start()
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert replay.get_json() == first.get_json()
    assert wire.take() == [["HMGET", "HGET", "GET"]]


def test_seating_and_reading_round_trips(counted: tuple[Gateway, Wire]) -> None:
    """A seat: the player's key looked up once, their session settings read, the seat
    listed among the player's, one read, the buy-in reserved in the wallet, one commit,
    the buy-in posted; a table or events read: one trip plus the read."""
    gateway, wire = counted
    table_id = gateway.create()
    account = gateway.sign_up("solo")
    wire.take()
    player = gateway.sit(table_id, "solo", account=account)
    buy_in = [["ZADD"], ["EVALSHA"], ["EVALSHA"], ["EVALSHA"]]
    # the player's session settings (HMGET on their slot) go with the seat
    assert wire.take() == [["GET"], ["HMGET"], ["SADD"], ["HMGET"], *buy_in]
    # the key is held in the process now: the next seat does not look it up
    gateway.sit(gateway.create(), "solo", account=account)
    assert wire.take()[-6:] == [["SADD"], ["HMGET"], *buy_in]

    gateway.table(table_id, player)
    assert wire.take() == [["HMGET", "HGET"]]
    gateway.table(table_id)
    assert wire.take() == [["HMGET"]]
    gateway.events(table_id, player)
    assert wire.take() == [["HMGET", "HGET"], ["XRANGE"]]


def test_a_move_on_a_table_this_process_changed_last_is_one_round_trip(
    two_gateways: tuple[Gateway, Gateway, Wire],
) -> None:
    """The commit alone, when this process made the last change; a read too otherwise."""
    gateway, other, wire = two_gateways
    table_id, players = _three_players(gateway)
    wire.take()
    assert gateway.act(table_id, players[0], action="start").status_code == 200
    assert wire.take() == [["EVALSHA"]]
    assert gateway.act(table_id, players[0], action="declare", choice="in").status_code == 200
    assert wire.take() == [["EVALSHA"]]

    # another gateway moves: this one's commit finds the table changed, writes nothing,
    # and the move is read and computed again
    assert other.act(table_id, players[1], action="declare", choice="out").status_code == 200
    response = gateway.act(table_id, players[2], action="declare", choice="in")
    assert response.status_code == 200, response.get_json()
    assert any(e["type"] == "deal_ended" for e in response.get_json()["events"])
    assert wire.take() == [["EVALSHA"], ["HMGET", "HGETALL"], ["EVALSHA"]]
    assert response.get_json()["table"]["version"] == other.table(table_id)["version"]


def test_a_stamp_that_changed_makes_the_commit_read_again(
    two_gateways: tuple[Gateway, Gateway, Wire], redis_url: str
) -> None:
    """Same version, other stamp (a Redis that lost writes and took others): not written."""
    gateway, _, wire = two_gateways
    table_id, players = _three_players(gateway)
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    client.hset(f"table:{{{table_id}}}", "stamp", "0000000000000000")
    client.close()
    wire.take()
    assert gateway.act(table_id, players[0], action="start").status_code == 200
    assert wire.take() == [["EVALSHA"], ["HMGET", "HGETALL"], ["EVALSHA"]]


def test_a_read_learns_every_seat_token_of_the_table(
    two_gateways: tuple[Gateway, Gateway, Wire],
) -> None:
    """After a read, every seated player's move is warm; an unknown token reads first."""
    gateway, other, wire = two_gateways
    table_id, players = _three_players(gateway)
    newcomer = other.sit(table_id, "newcomer")
    wire.take()
    # the table changed at the other gateway: the start is read again, with every token
    assert gateway.act(table_id, players[0], action="start").status_code == 200
    assert wire.take() == [["EVALSHA"], ["HMGET", "HGETALL"], ["EVALSHA"]]
    response = gateway.act(table_id, newcomer, action="declare", choice="in")
    assert response.status_code == 200, response.get_json()
    assert wire.take() == [["EVALSHA"]]
    # a token nobody holds is never taken on trust: read, then refused
    stranger = Player("stranger", 9, "ab" * 32)
    response = gateway.act(table_id, stranger, action="declare", choice="in")
    assert response.status_code == 401
    assert wire.take() == [["HMGET", "HGETALL"]]
    # what has no credential's form is refused before any read
    response = gateway.act(table_id, Player("stranger", 9, "not-a-token"), action="start")
    assert response.status_code == 401
    assert wire.take() == []


def test_a_refused_move_writes_nothing(counted: tuple[Gateway, Wire]) -> None:
    """A move the rules refuse is one read and no write."""
    gateway, wire = counted
    table_id, players = _three_players(gateway)
    wire.take()
    response = gateway.act(table_id, players[0], action="declare", choice="in")
    assert response.status_code == 409
    assert wire.take() == [["HMGET", "HGET"]]


def test_a_redis_that_lost_its_scripts_loads_them_again(
    counted: tuple[Gateway, Wire], redis_url: str
) -> None:
    """After SCRIPT FLUSH (or a restart), the commit is refused NOSCRIPT, loaded, sent again."""
    gateway, wire = counted
    table_id, players = _three_players(gateway)
    redis.Redis.from_url(redis_url).script_flush()
    wire.take()
    response = gateway.act(table_id, players[0], action="start")
    assert response.status_code == 200, response.get_json()
    assert wire.take() == [["HMGET", "HGET"], ["EVALSHA"], ["SCRIPT"], ["EVALSHA"]]
    response = gateway.act(table_id, players[0], action="declare", choice="in")
    assert response.status_code == 200, response.get_json()
    assert wire.take() == [["HMGET", "HGET"], ["EVALSHA"]]


def test_on_a_redis_cluster_a_move_is_still_one_read_and_one_commit(
    redis_cluster: str,
    evaluator_address: str,
) -> None:
    """The table's keys share a slot; the clock's schedule, on another, only when it
    moves; a deal's end points the packer and the recall's sweeper at the table first."""
    wire = Wire()
    client = redis.cluster.RedisCluster.from_url(
        redis_cluster.replace("redis+cluster://", "redis://", 1),
        decode_responses=True,
        connection_class=counting_connection(wire),
    )
    client.flushall()
    evaluator = EvaluatorClient(evaluator_address, EVALUATOR_TIMEOUT)
    names = {item.name for item in dataclasses.fields(Settings)}
    overrides = {
        name: 0 for name in ("rate_limit_per_address", "rate_limit_per_token") if name in names
    }
    settings = gateway_settings(
        redis_cluster, evaluator_address, redis_cluster=True, clock=False, **overrides
    )
    app = create_app(settings, services=bootstrap(settings, client=client, evaluator=evaluator))
    app.testing = True
    gateway = Gateway(app, app.test_client())
    try:
        table_id, players = _three_players(gateway)
        wire.take()
        # the deal's timer starts: the schedule moves, one more round trip (the table
        # was seated through this process, so the move is not read first)
        assert gateway.act(table_id, players[0], action="start").status_code == 200
        assert wire.take() == [["EVALSHA"], ["ZADD"]]
        # a declaration leaves the timer as it was
        response = gateway.act(table_id, players[0], action="declare", choice="in")
        assert response.status_code == 200, response.get_json()
        assert wire.take() == [["EVALSHA"]]
        gateway.act(table_id, players[1], action="declare", choice="in")
        wire.take()
        # the deal's end: the packer (and the recall's sweeper) pointed at the table
        # first, since their sets sit on other slots; after the commit the next deal's
        # timer and the players' copies, delivered from the notes the commit wrote
        response = gateway.act(table_id, players[2], action="declare", choice="in")
        assert response.status_code == 200, response.get_json()
        # (a node this client had not talked to yet is greeted first: not counted)
        sent = [batch for batch in wire.take() if batch[0] not in ("COMMAND", "HELLO", "CLIENT")]
        assert sent[:4] == [["ZADD"], ["ZADD"], ["EVALSHA"], ["ZADD"]]
        # three players' copies kept, the sweeper's pointer taken back, the notes gone
        assert sorted(name for batch in sent[4:] for name in batch) == ["EVAL"] * 4 + ["HDEL"]
    finally:
        evaluator.close()
        client.close()
