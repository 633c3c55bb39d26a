"""A Redis primary dies under play and its replica takes over: what the gateway
acknowledged is still there when it waited for a replica, and may be gone when not.

On a Redis Cluster of three primaries with a replica each, and on a primary with one
replica under three Sentinels, players sit, start, declare, rebuy and leave at tables
through gunicorn (Idempotency-Keys on every change, sent again after a 503) while the
test cuts one primary off from its replica, lets play go on, kills the primary and
thaws the replica, which is promoted without what the primary wrote after the cut.
Then every event of every answer a player was given as done must be in its table's log
(with `REDIS_ACK_REPLICAS=1`); without waiting (`0`) the same scenario loses answers,
and the test counts them. The gateway and its clock ride the failover through: 503s
meanwhile, never a 500, every table's clock caught up afterwards, the ledger's audit
clean. The counts and the seconds of 503s go to var/reports (docs/deploy.md).
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import redis
import redis.cluster

from api.adapters.store import RedisClient, TableStore, connect
from api.adapters.wallets import WalletStore
from api.service.wallets import WalletService
from tests.support.failover import (
    Player,
    SentinelGroup,
    cut_off,
    kill_and_thaw,
    link_up,
    missing,
    play,
    unavailable_seconds,
)
from tests.support.processes import GunicornGateway, RedisCluster, RedisProcess, poll

pytestmark = [pytest.mark.slow, pytest.mark.ledger_unchecked]

PLAYERS = 6
TABLES = 8
REPORTS = Path(__file__).resolve().parents[2] / "var" / "reports"
GUTS = {"turn_seconds": 3, "deal_pause_seconds": 1, "min_buy_in": 20, "max_buy_in": 500}


def gateway_for(url: str, evaluator: str, logs: Path, ack: int, cluster: bool) -> GunicornGateway:
    """gunicorn over `url`, acknowledging writes once `ack` replicas have them."""
    return GunicornGateway(
        url,
        evaluator,
        logs,
        workers=2,
        threads=8,
        REDIS_CLUSTER="true" if cluster else "false",
        REDIS_ACK_REPLICAS=str(ack),
        REDIS_ACK_TIMEOUT="0.3",
        PENDING_TRANSFER_SECONDS="2",
        RATE_LIMIT_PER_ADDRESS="0",
        RATE_LIMIT_PER_TOKEN="0",
    )


def play_through(
    gateway: GunicornGateway,
    store_client: Callable[[], RedisClient],
    fail_over: Callable[[list[str]], None],
    report: str,
    ack: int,
) -> dict[str, Any]:
    """Players play; `fail_over(tables)` cuts, kills and waits out a failover meanwhile.
    What the players were told and the tables' logs afterwards, compared (`ack`: the
    replicas the gateway waited for)."""
    http = gateway.http
    accounts = [http.sign_up(f"p{n}") for n in range(PLAYERS)]
    tables = [http.create(accounts[n % PLAYERS], **GUTS) for n in range(TABLES)]
    players = [Player(account, random.Random(n)) for n, account in enumerate(accounts)]
    stop = threading.Event()
    threads = [
        threading.Thread(target=play, args=(http, player, tables, stop), daemon=True)
        for player in players
    ]
    for thread in threads:
        thread.start()
    try:
        time.sleep(2.0)
        started = time.monotonic()
        fail_over(tables)
        time.sleep(3.0)
    finally:
        stop.set()
        for thread in threads:
            thread.join(120)
    assert not any(thread.is_alive() for thread in threads)
    failures = [player.failure for player in players if player.failure is not None]
    assert not failures, failures
    client = store_client()
    store = TableStore(client)
    logs = {
        table_id: {item["id"]: dict(item) for item in store.events_after(table_id, 0, None)}
        for table_id in tables
    }
    told = [answer for player in players for answer in player.told]
    lost = missing(told, logs)
    outcomes = sum((player.outcomes for player in players), Counter())
    caught_up(store, tables)
    wallets = WalletService(WalletStore(client))
    audit, in_flight = settled_audit(wallets, [a.id for a in accounts], tables, ack > 0)
    figures = {
        "acknowledged_answers": len(told),
        "acknowledged_events": sum(len(answer.events) for answer in told),
        "lost_answers": len(lost),
        "lost_events": sum(len(lines) for lines in lost.values()),
        "unavailable_seconds": round(unavailable_seconds(players, started), 2),
        "outcomes": dict(outcomes),
        "audit_clean": audit.clean,
        "in_flight_after_the_sweeps": in_flight,
        "audit_discrepancies": audit.discrepancies[:5],
    }
    REPORTS.mkdir(parents=True, exist_ok=True)
    (REPORTS / f"failover_{report}.json").write_text(json.dumps(figures, indent=1))
    assert outcomes.get("500 internal_error", 0) == 0, outcomes
    return {"lost": lost, "figures": figures, "audit": audit}


def caught_up(store: TableStore, tables: list[str]) -> None:
    """Every table's clock caught up: no deadline left more than a few seconds behind."""

    def behind() -> list[str]:
        now = time.time()
        late = []
        for table_id in tables:
            record = store.load(table_id)
            assert record is not None
            deadline = record.state["deadline"]
            if deadline is not None and deadline < now - 5:
                (scheduled,) = store.schedules([table_id])
                late.append(f"{table_id} {record.state['phase']} {now - deadline:.0f}s {scheduled}")
        return late

    try:
        poll(lambda: not behind(), 60, "every table's clock caught up")
    except AssertionError:
        raise AssertionError(f"tables left behind: {behind()}") from None


def settled_audit(
    wallets: WalletService, players: list[str], tables: list[str], must_settle: bool
) -> tuple[Any, int]:
    """The ledger's audit once the sweepers finished what was in flight, and how many
    reservations and cash-outs were still in flight then.

    Unless replicas confirmed the writes (`must_settle`), a failover may keep a step (a
    reservation in a wallet) and lose the sweeper's pointer to it, written on another
    shard: the sweeper never finds that step, which stays in flight. The audit is then
    taken after a while all the same."""

    def in_flight() -> int:
        store = wallets.store
        pending = sum(len(store.pending(p)) for p in players)
        return pending + sum(len(store.outbox(t)) for t in tables)

    try:
        poll(lambda: in_flight() == 0, 240 if must_settle else 30, "the sweeper")
    except AssertionError:
        if must_settle:
            raise
    return wallets.audit(), in_flight()


# ---------------------------------------------------------------- a Redis Cluster


@pytest.fixture
def replicated_cluster(tmp_path: Path) -> Any:
    """Three primaries with a replica each, failing over after a second."""
    cluster = RedisCluster(tmp_path / "cluster", masters=3, replicas=1, node_timeout_ms=1000)
    (tmp_path / "cluster").mkdir()
    cluster.start()
    yield cluster
    cluster.stop()


def cluster_failover(cluster: RedisCluster) -> Callable[[list[str]], None]:
    """Cut off, then kill, the primary holding the most tables; wait for its replica."""

    def fail_over(tables: list[str]) -> None:
        client = redis.cluster.RedisCluster(host="127.0.0.1", port=cluster.nodes[0].port)
        try:
            homes = Counter(
                client.get_node_from_key(f"table:{{{t}}}").port  # type: ignore[no-untyped-call]
                for t in tables
            )
        finally:
            client.close()
        port = homes.most_common(1)[0][0]
        primary, replicas = next(shard for shard in cluster.shards() if shard[0].port == port)
        cut_off(primary, replicas[0])
        time.sleep(2.0)
        kill_and_thaw(primary, replicas[0])
        poll(cluster.healthy, 60, "the replica promoted, the cluster ok")
        # the dead node comes back (as its pod would) and serves as the new primary's
        # replica: until it does, that shard's writes have no replica to confirm them
        primary.start()
        poll(cluster.healthy, 180, "the old primary back as a replica")

    return fail_over


def live_client(cluster: RedisCluster) -> RedisClient:
    """A cluster client through a node still alive."""
    live = next(node for node in cluster.nodes if node.process is not None)
    return connect(f"redis+cluster://127.0.0.1:{live.port}", True)


def run_on_cluster(
    cluster: RedisCluster, evaluator_address: str, tmp_path: Path, ack: int
) -> dict[str, Any]:
    """The failover played on the cluster, acknowledging after `ack` replicas."""
    url = "redis+cluster://127.0.0.1:" + str(cluster.nodes[0].port)
    gateway = gateway_for(url, evaluator_address, tmp_path / "gunicorn.log", ack, True)
    gateway.start()
    try:
        return play_through(
            gateway,
            lambda: live_client(cluster),
            cluster_failover(cluster),
            f"cluster_ack{ack}",
            ack,
        )
    finally:
        gateway.stop()


@pytest.mark.timeout(700)
def test_a_cluster_failover_loses_nothing_acknowledged_once_a_replica_confirms(
    replicated_cluster: RedisCluster, evaluator_address: str, tmp_path: Path
) -> None:
    result = run_on_cluster(replicated_cluster, evaluator_address, tmp_path, ack=1)
    assert result["lost"] == {}, result["lost"]
    assert result["audit"].clean, result["audit"].discrepancies
    outcomes = result["figures"]["outcomes"]
    # writes on the cut primary were refused as not replicated, never acknowledged
    assert outcomes.get("503 not_replicated", 0) > 0, outcomes


@pytest.mark.timeout(700)
def test_a_cluster_failover_loses_acknowledged_answers_when_none_waits(
    replicated_cluster: RedisCluster, evaluator_address: str, tmp_path: Path
) -> None:
    result = run_on_cluster(replicated_cluster, evaluator_address, tmp_path, ack=0)
    # the same scenario without waiting: what the primary acknowledged after the cut is gone
    assert result["lost"], result["figures"]
    assert result["figures"]["outcomes"].get("503 not_replicated", 0) == 0


# ---------------------------------------------------------------- Sentinels


@pytest.fixture
def sentinel_group(tmp_path: Path) -> Any:
    """A primary, its replica and three Sentinels that fail over after a second."""
    group = SentinelGroup.build(tmp_path / "sentinel")
    group.start()
    yield group
    group.stop()


def sentinel_failover(group: SentinelGroup) -> Callable[[list[str]], None]:
    """Cut off, then kill, the primary; wait until the Sentinels name the replica."""

    def fail_over(tables: list[str]) -> None:
        cut_off(group.primary, group.replica)
        time.sleep(2.0)
        kill_and_thaw(group.primary, group.replica)
        poll(group.promoted, 60, "the Sentinels promote the replica")
        # the old primary comes back; the Sentinels make it the new primary's replica
        group.primary.start()
        poll(lambda: link_up(group.primary), 180, "the old primary back as a replica")

    return fail_over


def run_under_sentinels(
    group: SentinelGroup, evaluator_address: str, tmp_path: Path, ack: int
) -> dict[str, Any]:
    """The failover played under Sentinels, acknowledging after `ack` replicas."""
    gateway = gateway_for(group.url, evaluator_address, tmp_path / "gunicorn.log", ack, False)
    gateway.start()
    replica: RedisProcess = group.replica
    try:
        return play_through(
            gateway,
            lambda: redis.Redis(port=replica.port, decode_responses=True),
            sentinel_failover(group),
            f"sentinel_ack{ack}",
            ack,
        )
    finally:
        gateway.stop()


@pytest.mark.timeout(700)
def test_a_sentinel_failover_loses_nothing_acknowledged_once_a_replica_confirms(
    sentinel_group: SentinelGroup, evaluator_address: str, tmp_path: Path
) -> None:
    result = run_under_sentinels(sentinel_group, evaluator_address, tmp_path, ack=1)
    assert result["lost"] == {}, result["lost"]
    assert result["audit"].clean, result["audit"].discrepancies


@pytest.mark.timeout(700)
def test_a_sentinel_failover_loses_acknowledged_answers_when_none_waits(
    sentinel_group: SentinelGroup, evaluator_address: str, tmp_path: Path
) -> None:
    result = run_under_sentinels(sentinel_group, evaluator_address, tmp_path, ack=0)
    assert result["lost"], result["figures"]
