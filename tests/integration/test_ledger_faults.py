"""The ledger under faults: Redis killed and restarted, a Redis Cluster, racing copies.

docs/ledger.md promises that an acknowledged transfer survives what Redis's persistence
lets it survive, that every step is keyed by its transfer id (so a copy or a retry has
one effect) and that the sweeper finishes a transfer whose later step never ran. Here a
redis-server of the test's own is SIGKILLed and restarted on its files (with the
flags of deploy/compose.yaml, and with Redis's defaults), mid-flow too; a wallet and a
table sit on different masters of a real Redis Cluster; and fifty copies of one request
race. Each test ends with the sweeper run (its clock moved past every deadline) and
the audit over the whole store clean. The gateways run in this process with no clock
thread, so that the only sweeps are the tests' own.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import redis
import redis.cluster
from flask import Flask

from api.service import ledger
from api.service.wallets import Reservation, WalletService
from tests.support.deployment import deployed_redis_persistence
from tests.support.gateway import Gateway, close_app, make_app
from tests.support.problems import assert_problem
from tests.support.processes import DurableRedis, RedisProcess
from tests.support.tables_api import Account

OPERATOR_KEY = "op-ledger-faults-key-0123456789abcdef"
OPERATOR = {"Authorization": f"Bearer {OPERATOR_KEY}"}
GRANT = 10_000  # open mode's play-money grant
LATER = 3600.0  # seconds a sweeper's clock is moved on: whatever is in flight is due
RACERS = 50


# ---------------------------------------------------------------- fixtures and helpers


@pytest.fixture
def gateways(evaluator_address: str) -> Iterator[Callable[..., Gateway]]:
    """Start in-process gateways (open mode, an operator key, no clock thread, no rate
    limits) on a Redis URL; all closed after the test."""
    apps: list[Flask] = []

    def start(url: str, **overrides: Any) -> Gateway:
        app = make_app(
            url,
            evaluator_address,
            operator_keys=(OPERATOR_KEY,),
            clock=False,
            rate_limit_per_address=0,
            rate_limit_per_token=0,
            **overrides,
        )
        apps.append(app)
        return Gateway(app, app.test_client())

    yield start
    for app in apps:
        close_app(app)


@pytest.fixture
def durable(tmp_path: Path) -> Iterator[RedisProcess]:
    """A redis-server of this test's own, run as deploy/compose.yaml runs it."""
    server = DurableRedis(tmp_path)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def snapshotting(tmp_path: Path) -> Iterator[RedisProcess]:
    """A redis-server of this test's own with Redis's defaults: RDB snapshots, no AOF."""
    server = RedisProcess(tmp_path, flags=())
    server.start()
    yield server
    server.stop()


def raw(url: str) -> redis.Redis:
    """A client of its own on a Redis, outside any gateway."""
    return redis.Redis.from_url(url, decode_responses=True)


def dump(url: str) -> dict[str, tuple[str, Any]]:
    """Every key of a Redis with its type and value (TTLs left out)."""
    client = raw(url)
    found: dict[str, tuple[str, Any]] = {}
    try:
        for key in client.scan_iter(count=1000):
            kind = str(client.type(key))
            value: Any
            if kind == "string":
                value = client.get(key)
            elif kind == "hash":
                value = client.hgetall(key)
            elif kind == "list":
                value = client.lrange(key, 0, -1)
            elif kind == "set":
                value = sorted(client.smembers(key))
            elif kind == "zset":
                value = client.zrange(key, 0, -1, withscores=True)
            elif kind == "stream":
                value = client.xrange(key)
            else:
                raise AssertionError(f"{key}: a {kind} the test does not read")
            found[str(key)] = (kind, value)
    finally:
        client.close()
    return found


def wallets_of(gateway: Gateway) -> WalletService:
    """The gateway's wallets (the service the sweeper and the audit are on)."""
    wallets: WalletService = gateway.app.extensions["cardroom.service"].wallets
    return wallets


@contextmanager
def later(wallets: WalletService) -> Iterator[None]:
    """The wallets' clock moved past every deadline (for sweeps and audits), then back."""
    clock = wallets.clock
    wallets.clock = lambda: clock() + LATER
    try:
        yield
    finally:
        wallets.clock = clock


def sweep_later(gateway: Gateway) -> dict[str, int]:
    """One sweep with the sweeper's clock past every deadline; what it did."""
    wallets = wallets_of(gateway)
    with later(wallets):
        return wallets.sweep()


def audit_clean_later(gateway: Gateway) -> ledger.Report:
    """Sweep with the clock moved on, then the audit over the whole store: clean."""
    wallets = wallets_of(gateway)
    with later(wallets):
        wallets.sweep()
        report = wallets.audit()
    assert report.clean, report.discrepancies
    return report


def move(gateway: Gateway, player: str, kind: str, amount: int, key: str | None = None) -> Any:
    """An operator's deposit or withdrawal (kind: "deposits" or "withdrawals")."""
    headers = dict(OPERATOR)
    if key is not None:
        headers["Idempotency-Key"] = key
    return gateway.call(
        "POST",
        f"/v1/operator/players/{player}/{kind}",
        None,
        json={"amount": amount, "reference": f"ref-{amount}"},
        headers=headers,
    )


def acked(response: Any) -> dict[str, Any]:
    """The entry of an acknowledged (201) deposit or withdrawal."""
    assert response.status_code == 201, response.get_json()
    return dict(response.get_json())


def wallet(gateway: Gateway, player: str) -> dict[str, Any]:
    """A player's balance, pending and entries (newest first), as the operator reads them."""
    response = gateway.call(
        "GET", f"/v1/operator/players/{player}/ledger?limit=500", None, headers=OPERATOR
    )
    assert response.status_code == 200, response.get_json()
    return dict(response.get_json())


def kinds(gateway: Gateway, player: str) -> list[tuple[str, int]]:
    """A wallet's entries, newest first: (kind, amount)."""
    return [(e["kind"], e["amount"]) for e in wallet(gateway, player)["entries"]]


def money(gateway: Gateway, player: str) -> tuple[int, int]:
    """A wallet's (balance, pending)."""
    found = wallet(gateway, player)
    return found["balance"], found["pending"]


def seats(gateway: Gateway, table_id: str) -> dict[str, tuple[str, int]]:
    """A table's seats: number -> (name, stack)."""
    table = gateway.table(table_id)
    return {number: (seat["name"], seat["stack"]) for number, seat in table["seats"].items()}


def leave(gateway: Gateway, table_id: str, seated: Any) -> Any:
    """A seat leaves the table; the answer."""
    return gateway.call("DELETE", f"/v1/tables/{table_id}/seats/{seated.seat}", seated)


def race(count: int, send: Callable[[], Any]) -> list[Any]:
    """`count` copies of one request, from as many threads let go at once; the answers."""
    start = threading.Barrier(count, timeout=120)  # a guard against a hang, not a timing
    answers: list[Any] = []
    lock = threading.Lock()

    def one() -> None:
        start.wait()
        response = send()
        with lock:
            answers.append(response)

    threads = [threading.Thread(target=one) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(answers) == count
    return answers


# ---------------------------------------------------------------- 1. the durability promise


def test_with_the_deployed_flags_a_sigkill_loses_no_acknowledged_transfer(
    durable: RedisProcess, gateways: Callable[..., Gateway]
) -> None:
    flags = deployed_redis_persistence()
    assert flags[flags.index("--appendonly") + 1] == "yes"
    assert flags[flags.index("--appendfsync") + 1] == "always"
    assert tuple(durable.persistence()) == tuple(flags)
    gateway = gateways(durable.url)
    ann, bo = gateway.sign_up("ann"), gateway.sign_up("bo")
    table_id = gateway.create(min_buy_in=10, max_buy_in=500)
    first = acked(move(gateway, ann.id, "deposits", 500, key="order-1"))
    entries = [(ann.id, first), (bo.id, acked(move(gateway, bo.id, "deposits", 250)))]
    ann_seat = gateway.sit(table_id, "ann", 120, ann)
    entries.append((ann.id, acked(move(gateway, ann.id, "withdrawals", 80))))
    bo_seat = gateway.sit(table_id, "bo", 200, bo)  # the last acknowledgement
    before = dump(durable.url)  # reads only: nothing written since the answer
    durable.kill()
    durable.start()

    # the restarted server holds exactly what was acknowledged, nothing more or less
    assert dump(durable.url) == before
    assert money(gateway, ann.id) == (GRANT + 500 - 120 - 80, 0)
    assert money(gateway, bo.id) == (GRANT + 250 - 200, 0)
    assert kinds(gateway, ann.id) == [
        ("withdrawal", 80),
        ("buy_in", 120),
        ("deposit", 500),
        ("grant", GRANT),
    ]
    assert kinds(gateway, bo.id) == [("buy_in", 200), ("deposit", 250), ("grant", GRANT)]
    for player, entry in entries:
        assert entry in wallet(gateway, player)["entries"]
    assert seats(gateway, table_id) == {
        str(ann_seat.seat): ("ann", 120),
        str(bo_seat.seat): ("bo", 200),
    }
    # nothing was in flight: the sweeper finds nothing to finish, and the audit agrees
    assert sweep_later(gateway) == {"posted": 0, "voided": 0, "relayed": 0}
    report = audit_clean_later(gateway)
    issued = 3 * GRANT + 500 + 250 - 80  # grants to ann, bo and the table's owner
    assert report.totals == {
        "wallets": issued - 320,
        "tables": 320,
        "house": -issued,
        "reserved": 0,
        "unrelayed": 0,
    }
    # a keyed deposit's idempotency survived with it; the table plays on
    again = move(gateway, ann.id, "deposits", 500, key="order-1")
    assert again.status_code == 200, again.get_json()
    assert again.headers["Idempotent-Replayed"] == "true"
    assert again.get_json() == first
    assert leave(gateway, table_id, ann_seat).get_json()["cashed_out"] == 120
    assert money(gateway, ann.id) == (GRANT + 500 - 80, 0)
    audit_clean_later(gateway)


def test_with_redis_defaults_a_sigkill_loses_what_came_after_the_snapshot(
    snapshotting: RedisProcess, gateways: Callable[..., Gateway]
) -> None:
    client = raw(snapshotting.url)
    try:
        assert client.config_get("appendonly")["appendonly"] == "no"
        assert client.config_get("save")["save"] != ""  # RDB snapshots, the defaults
    finally:
        client.close()
    gateway = gateways(snapshotting.url)
    ann, bo = gateway.sign_up("ann"), gateway.sign_up("bo")
    table_id = gateway.create(min_buy_in=10, max_buy_in=500)
    acked(move(gateway, ann.id, "deposits", 500, key="order-1"))
    bo_seat = gateway.sit(table_id, "bo", 100, bo)
    client = raw(snapshotting.url)
    try:
        assert client.save()
    finally:
        client.close()
    at_save = dump(snapshotting.url)
    # acknowledged, and lost with the server
    acked(move(gateway, ann.id, "deposits", 40, key="order-2"))
    gateway.sit(table_id, "ann", 120, ann)
    acked(move(gateway, bo.id, "deposits", 9))
    assert money(gateway, ann.id) == (GRANT + 500 + 40 - 120, 0)
    snapshotting.kill()
    snapshotting.start()

    assert dump(snapshotting.url) == at_save
    assert money(gateway, ann.id) == (GRANT + 500, 0)
    assert money(gateway, bo.id) == (GRANT - 100, 0)
    assert kinds(gateway, ann.id) == [("deposit", 500), ("grant", GRANT)]
    assert kinds(gateway, bo.id) == [("buy_in", 100), ("grant", GRANT)]
    assert seats(gateway, table_id) == {str(bo_seat.seat): ("bo", 100)}
    assert sweep_later(gateway) == {"posted": 0, "voided": 0, "relayed": 0}
    audit_clean_later(gateway)
    # the lost deposit's key is free again (its retry is a new effect, as the promise
    # says), and the gateway's copy of the table, ahead of the store now, is not trusted
    acked(move(gateway, ann.id, "deposits", 40, key="order-2"))
    ann_seat = gateway.sit(table_id, "ann", 120, ann)
    assert seats(gateway, table_id) == {
        str(bo_seat.seat): ("bo", 100),
        str(ann_seat.seat): ("ann", 120),
    }
    assert money(gateway, ann.id) == (GRANT + 500 + 40 - 120, 0)
    audit_clean_later(gateway)


# ---------------------------------------------------------------- 2. Redis dies mid-flow


def test_redis_killed_between_a_leave_and_its_relay_the_sweeper_relays_it_once(
    durable: RedisProcess, gateways: Callable[..., Gateway]
) -> None:
    gateway = gateways(durable.url)
    wallets = wallets_of(gateway)
    ann = gateway.sign_up("ann")
    table_id = gateway.create(min_buy_in=10, max_buy_in=500)
    seated = gateway.sit(table_id, "ann", 150, ann)
    relay = wallets.relay_quietly

    def die_then_relay(table: str) -> None:
        durable.kill()  # after the leave's commit was acknowledged, before the relay
        relay(table)

    wallets.relay_quietly = die_then_relay  # type: ignore[method-assign,assignment]
    try:
        left = leave(gateway, table_id, seated)
    finally:
        wallets.relay_quietly = relay  # type: ignore[method-assign]
    # the commit landed: the leave is answered, its cash-out left to the sweeper
    assert left.status_code == 200, left.get_json()
    assert (left.get_json()["left"], left.get_json()["cashed_out"]) == (True, 150)
    durable.start()
    assert seats(gateway, table_id) == {}
    (waiting,) = wallets.store.outbox(table_id).values()
    assert (waiting["kind"], waiting["amount"]) == ("cash_out", 150)
    assert money(gateway, ann.id) == (GRANT - 150, 0)
    report = wallets.audit()  # in flight, within its time
    assert report.clean, report.discrepancies
    assert report.totals["unrelayed"] == 150

    # sweepers at once (as every clock runs one): one effect
    with later(wallets):
        counts = race(4, wallets.sweep)
        assert sum(count["relayed"] for count in counts) >= 1
        assert wallets.sweep()["relayed"] == 0
    assert wallets.store.outbox(table_id) == {}
    assert money(gateway, ann.id) == (GRANT, 0)
    assert kinds(gateway, ann.id) == [("cash_out", 150), ("buy_in", 150), ("grant", GRANT)]
    report = audit_clean_later(gateway)
    assert report.totals["unrelayed"] == 0
    assert report.totals["tables"] == 0


def test_redis_killed_before_a_buy_in_is_posted_the_seat_stands_and_the_sweeper_posts_it(
    durable: RedisProcess, gateways: Callable[..., Gateway]
) -> None:
    gateway = gateways(durable.url)
    wallets = wallets_of(gateway)
    ann = gateway.sign_up("ann")
    table_id = gateway.create(min_buy_in=10, max_buy_in=500)
    post = wallets.post

    def die_then_post(reservation: Reservation) -> None:
        durable.kill()  # after the table's commit was acknowledged, before the post
        post(reservation)

    wallets.post = die_then_post  # type: ignore[method-assign]
    try:
        seated = gateway.call(
            "POST", f"/v1/tables/{table_id}/seats", ann, json={"name": "ann", "buy_in": 200}
        )
    finally:
        wallets.post = post  # type: ignore[method-assign]
    # the table took the seat: it is answered, its post left to the sweeper
    assert seated.status_code == 201, seated.get_json()
    # Redis is down now: the gateway answers 503 until it is back
    assert_problem(gateway.call("GET", f"/v1/tables/{table_id}"), 503, "store_unavailable")
    durable.start()
    assert seats(gateway, table_id) == {str(seated.get_json()["seat"]): ("ann", 200)}
    assert money(gateway, ann.id) == (GRANT - 200, 200)  # reserved, not posted yet
    assert kinds(gateway, ann.id) == [("grant", GRANT)]
    report = wallets.audit()
    assert report.clean, report.discrepancies

    assert sweep_later(gateway)["posted"] == 1
    assert sweep_later(gateway)["posted"] == 0
    assert money(gateway, ann.id) == (GRANT - 200, 0)
    assert kinds(gateway, ann.id) == [("buy_in", 200), ("grant", GRANT)]
    report = audit_clean_later(gateway)
    assert report.totals["tables"] == 200
    assert report.totals["wallets"] + report.totals["tables"] + report.totals["house"] == 0


def test_a_buy_in_sent_while_redis_is_down_is_503_and_changes_nothing(
    durable: RedisProcess, gateways: Callable[..., Gateway]
) -> None:
    gateway = gateways(durable.url)
    ann = gateway.sign_up("ann")
    table_id = gateway.create(min_buy_in=10, max_buy_in=500)
    assert money(gateway, ann.id) == (GRANT, 0)  # the player's key is known to the gateway
    before = dump(durable.url)
    durable.kill()
    try:
        refused = gateway.call(
            "POST", f"/v1/tables/{table_id}/seats", ann, json={"name": "ann", "buy_in": 200}
        )
        assert_problem(refused, 503, "store_unavailable")
    finally:
        durable.start()
    assert dump(durable.url) == before
    assert seats(gateway, table_id) == {}
    audit_clean_later(gateway)


# ---------------------------------------------------------------- 3. a Redis Cluster


@pytest.fixture
def on_cluster(
    redis_cluster: str, gateways: Callable[..., Gateway]
) -> Iterator[tuple[Gateway, redis.cluster.RedisCluster]]:
    """A gateway on the module's Redis Cluster (emptied: no other module shares it) and a
    client of the test's own."""
    client = redis.cluster.RedisCluster.from_url(redis_cluster, decode_responses=True)
    client.flushall(target_nodes=redis.cluster.RedisCluster.PRIMARIES)
    try:
        yield gateways(redis_cluster, redis_cluster=True), client
    finally:
        client.close()


def node_of(client: redis.cluster.RedisCluster, key: str) -> str:
    """The master that holds a key."""
    untyped: Any = client  # redis-py leaves these methods unannotated
    node = untyped.get_node_from_key(key)
    assert node is not None
    return str(node.name)


def players_off_the_table(
    gateway: Gateway, client: redis.cluster.RedisCluster, table_id: str, count: int
) -> list[Account]:
    """`count` new players whose wallets are on another master than the table."""
    table_key = f"table:{{{table_id}}}"
    found: list[Account] = []
    for attempt in range(60):
        player = gateway.sign_up(f"p{attempt}")
        wallet_key = f"player:{{{player.id}}}:wallet"
        if node_of(client, wallet_key) != node_of(client, table_key):
            untyped: Any = client
            assert untyped.keyslot(wallet_key) != untyped.keyslot(table_key)
            found.append(player)
            if len(found) == count:
                return found
    raise AssertionError("no player's wallet landed off the table's master")


def test_on_a_cluster_chips_move_between_a_wallet_and_a_table_on_different_masters(
    on_cluster: tuple[Gateway, redis.cluster.RedisCluster],
) -> None:
    gateway, client = on_cluster
    table_id = gateway.create(min_buy_in=10, max_buy_in=500, rebuy=True)
    ann, bo = players_off_the_table(gateway, client, table_id, 2)
    # the operator's deposit and withdrawal
    first = acked(move(gateway, ann.id, "deposits", 500, key="order-1"))
    again = move(gateway, ann.id, "deposits", 500, key="order-1")
    assert (again.status_code, again.get_json()) == (200, first)
    acked(move(gateway, ann.id, "withdrawals", 300))
    assert money(gateway, ann.id) == (GRANT + 200, 0)
    # a seat, a rebuy and the leave
    seated = gateway.sit(table_id, "ann", 100, ann)
    rebuy = gateway.act(table_id, ann, action="rebuy", amount=30)
    assert rebuy.status_code == 200, rebuy.get_json()
    assert seats(gateway, table_id) == {str(seated.seat): ("ann", 130)}
    assert money(gateway, ann.id) == (GRANT + 200 - 130, 0)
    left = leave(gateway, table_id, seated)
    assert left.get_json()["cashed_out"] == 130, left.get_json()
    assert money(gateway, ann.id) == (GRANT + 200, 0)
    assert kinds(gateway, ann.id) == [
        ("cash_out", 130),
        ("rebuy", 30),
        ("buy_in", 100),
        ("withdrawal", 300),
        ("deposit", 500),
        ("grant", GRANT),
    ]
    # the gateway dies between the table's commit and the post: the sweeper posts it
    wallets = wallets_of(gateway)
    post = wallets.post
    wallets.post = lambda reservation: None  # type: ignore[method-assign]
    try:
        bo_seat = gateway.sit(table_id, "bo", 200, bo)
    finally:
        wallets.post = post  # type: ignore[method-assign]
    assert money(gateway, bo.id) == (GRANT - 200, 200)
    report = wallets.audit()  # in flight, within its time
    assert report.clean, report.discrepancies
    assert sweep_later(gateway)["posted"] == 1
    assert money(gateway, bo.id) == (GRANT - 200, 0)
    assert kinds(gateway, bo.id) == [("buy_in", 200), ("grant", GRANT)]
    assert seats(gateway, table_id) == {str(bo_seat.seat): ("bo", 200)}
    report = audit_clean_later(gateway)
    assert report.totals["tables"] == 200
    assert report.totals["reserved"] == report.totals["unrelayed"] == 0


# ---------------------------------------------------------------- 4. racing copies


def test_racing_copies_of_one_keyed_deposit_have_one_effect(
    redis_url: str, gateways: Callable[..., Gateway]
) -> None:
    gateway = gateways(redis_url)
    ann = gateway.sign_up("ann")

    def send() -> Any:
        return gateway.app.test_client().post(
            f"/v1/operator/players/{ann.id}/deposits",
            json={"amount": 700, "reference": "order-9"},
            headers={**OPERATOR, "Idempotency-Key": "one-deposit"},
        )

    answers = race(RACERS, send)
    assert sorted(a.status_code for a in answers) == [200] * (RACERS - 1) + [201]
    assert all(
        a.headers.get("Idempotent-Replayed") == "true" for a in answers if a.status_code == 200
    )
    assert len({a.get_data(as_text=True) for a in answers}) == 1  # the same entry
    assert money(gateway, ann.id) == (GRANT + 700, 0)
    assert kinds(gateway, ann.id) == [("deposit", 700), ("grant", GRANT)]
    audit_clean_later(gateway)


def test_racing_copies_of_one_keyed_rebuy_have_one_effect(
    redis_url: str, gateways: Callable[..., Gateway]
) -> None:
    gateway = gateways(redis_url)
    table_id = gateway.create(min_buy_in=10, max_buy_in=500, rebuy=True)
    ann = gateway.sign_up("ann")
    seated = gateway.sit(table_id, "ann", 100, ann)

    def send() -> Any:
        return gateway.app.test_client().post(
            f"/v1/tables/{table_id}/actions",
            json={"action": "rebuy", "amount": 30},
            headers={**ann.auth, "Idempotency-Key": "one-rebuy"},
        )

    answers = race(RACERS, send)
    statuses = sorted(a.status_code for a in answers)
    assert set(statuses) <= {200, 409}, statuses
    for answer in answers:
        if answer.status_code == 409:  # lost the race too often: try again, it says
            assert_problem(answer, 409, "conflict")
    first = [a for a in answers if a.status_code == 200 and "Idempotent-Replayed" not in a.headers]
    assert len(first) == 1, statuses
    replayed = [a for a in answers if a.headers.get("Idempotent-Replayed") == "true"]
    assert all(a.get_json() == first[0].get_json() for a in replayed)
    assert seats(gateway, table_id) == {str(seated.seat): ("ann", 130)}
    assert money(gateway, ann.id) == (GRANT - 130, 0)  # every copy's reservation released
    assert kinds(gateway, ann.id) == [("rebuy", 30), ("buy_in", 100), ("grant", GRANT)]
    audit_clean_later(gateway)
