"""Buy-ins, rebuys and leaves under fire: gunicorn workers SIGKILLed while they move chips.

The gateway as deployed (gunicorn, two gevent workers, each running the clock and so
the ledger's sweeper) on a Redis of the test's own, with reservations lasting 2 s
(`PENDING_TRANSFER_SECONDS`) so that the sweeper resolves them soon. Clients, one
thread per player, take seats (under Idempotency-Keys, sent again when an answer was
lost), rebuy and leave at three tables as fast as they can, while the test SIGKILLs a
worker (never the master) a few times: a worker dies between any two steps of a
transfer, or in the middle of one, or in the middle of a sweep.

Afterwards, once the sweeper has finished what the dead workers left (no reservation,
no cash-out waiting), and again once every seat has left:
- the audit over the store is clean, and its totals say no chip was made or lost;
- every seat a client was told it got, and every rebuy, is in its table's log, and
  every seat and rebuy in a table's log is paid for exactly once: one transfer in the
  table's ledger, posted once in its player's wallet;
- every cash-out is credited once; no game was played, so every wallet holds its grant.
"""

from __future__ import annotations

import http.client
import os
import random
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import redis

from api.adapters.store import TableStore, connect
from api.adapters.wallets import WalletStore
from api.service.wallets import WalletService
from tests.support.processes import GunicornGateway, HttpGateway, RedisProcess, poll
from tests.support.tables_api import Account

pytestmark = pytest.mark.slow

OPERATOR_KEY = "op-ledger-crashes-0123456789abcdef"
GRANT = 1_000
PLAYERS = 10
TABLES = 4
KILLS = 4
# how long the sweeper may take to finish (a reservation: 2 s and the 5 s margin; a
# cash-out: 10 s; a sweep every 2 s), with room for a loaded machine
SETTLE_SECONDS = 120.0


@pytest.fixture
def own_redis(tmp_path: Path) -> Iterator[RedisProcess]:
    """A Redis for this test alone."""
    server = RedisProcess(tmp_path / "redis")
    (tmp_path / "redis").mkdir()
    server.start()
    yield server
    server.stop()


@dataclass
class Client:
    """One player's view of what the gateway told it."""

    account: Account
    rng: random.Random
    # seats granted: (table, seat, buy-in), once per Idempotency-Key
    seats: dict[str, tuple[str, int, int]] = field(default_factory=dict)
    # rebuys granted: (table, amount), once per Idempotency-Key
    rebuys: dict[str, tuple[str, int]] = field(default_factory=dict)
    outcomes: Counter[str] = field(default_factory=Counter)
    keys: int = 0

    def new_key(self) -> str:
        self.keys += 1
        return f"{self.account.name}-{self.keys}"


LOST = (OSError, http.client.HTTPException)


def send(
    gateway: HttpGateway, client: Client, method: str, path: str, body: Any, key: str | None
) -> Any:
    """One request; sent again under the same key while its answer is lost (a dead
    worker); None if it never got one."""
    headers = {} if key is None else {"Idempotency-Key": key}
    for _ in range(20 if key is not None else 1):
        try:
            reply = gateway.call(method, path, client.account, body, headers=headers)
        except LOST:
            client.outcomes["lost"] += 1
            time.sleep(0.1)
            continue
        code = reply.get_json().get("code", "") if reply.status_code >= 400 else ""
        client.outcomes[f"{method} {reply.status_code} {code}".strip()] += 1
        assert reply.status_code < 500, reply.text()
        return reply
    return None


def play(gateway: HttpGateway, client: Client, tables: list[str], stop: threading.Event) -> None:
    """Sit, rebuy and leave at random tables until told to stop; now and then a move the
    gateway refuses (a second seat at a table, another player's seat)."""
    rng = client.rng
    held: dict[str, int] = {}  # the seat the client holds at a table, as far as it knows
    while not stop.is_set():
        free = [t for t in tables if t not in held]
        stray = rng.random() < 0.1
        if (free and (not held or rng.random() < 0.5)) or (stray and rng.random() < 0.5):
            table_id = rng.choice(free) if free and not stray else rng.choice(tables)
            key = client.new_key()
            buy_in = rng.randint(1, 150)
            body = {"name": client.account.name, "buy_in": buy_in}
            reply = send(gateway, client, "POST", f"/v1/tables/{table_id}/seats", body, key)
            if reply is not None and reply.status_code == 201:
                seat = int(reply.get_json()["seat"])
                client.seats[key] = (table_id, seat, buy_in)
                held[table_id] = seat
        elif held and rng.random() < 0.5:
            table_id = rng.choice(sorted(held))
            key = client.new_key()
            amount = rng.randint(1, 60)
            body = {"action": "rebuy", "amount": amount}
            reply = send(gateway, client, "POST", f"/v1/tables/{table_id}/actions", body, key)
            if reply is not None and reply.status_code == 200:
                client.rebuys[key] = (table_id, amount)
            elif reply is not None and reply.get_json()["code"] == "not_seated":
                held.pop(table_id)
        elif held:
            table_id = rng.choice(sorted(held))
            seat = rng.randint(1, 6) if stray else held[table_id]
            path = f"/v1/tables/{table_id}/seats/{seat}"
            reply = send(gateway, client, "DELETE", path, None, None)
            if reply is not None and (
                reply.status_code == 200 or reply.get_json()["code"] == "not_seated"
            ):
                held.pop(table_id)


def in_flight(wallets: WalletService, players: list[str], tables: list[str]) -> int:
    """Reservations and cash-outs a sweeper has yet to finish."""
    store = wallets.store
    return sum(len(store.pending(p)) for p in players) + sum(len(store.outbox(t)) for t in tables)


def settled_audit(wallets: WalletService, players: list[str], tables: list[str]) -> Any:
    """The audit, once the sweepers finished everything in flight."""
    poll(lambda: in_flight(wallets, players, tables) == 0, SETTLE_SECONDS, "the sweeper")
    report = wallets.audit()
    assert report.clean, report.discrepancies
    totals = report.totals
    assert totals["reserved"] == totals["unrelayed"] == 0, totals
    assert totals["wallets"] + totals["tables"] + totals["house"] == 0, totals
    return report


@pytest.mark.timeout(400)
def test_killed_workers_neither_make_nor_lose_a_chip(
    own_redis: RedisProcess, evaluator_address: str, tmp_path: Path
) -> None:
    gateway = GunicornGateway(
        own_redis.url,
        evaluator_address,
        tmp_path / "gunicorn.log",
        workers=2,
        threads=8,
        OPERATOR_KEYS=OPERATOR_KEY,
        PLAY_MONEY_GRANT=str(GRANT),
        PLAY_MONEY_DAILY="0",
        PENDING_TRANSFER_SECONDS="2",
        RATE_LIMIT_PER_ADDRESS="0",
        RATE_LIMIT_PER_TOKEN="0",
    )
    gateway.start()
    client = redis.Redis.from_url(own_redis.url, decode_responses=True)
    wallets = WalletService(WalletStore(client))
    store = TableStore(connect(own_redis.url, False))
    try:
        http = gateway.http
        accounts = [http.sign_up(f"c{n}") for n in range(PLAYERS)]
        tables = [
            http.create(accounts[0], max_players=6, min_buy_in=1, max_buy_in=500, rebuy=True)
            for _ in range(TABLES)
        ]
        clients = [Client(a, random.Random(n)) for n, a in enumerate(accounts)]
        stop = threading.Event()
        threads = [
            threading.Thread(target=play, args=(http, c, tables, stop), daemon=True)
            for c in clients
        ]
        for thread in threads:
            thread.start()
        victims = []
        left_over: list[int] = []  # in flight after each kill
        try:
            rng = random.Random(1187)
            for number in range(KILLS):
                time.sleep(rng.uniform(0.5, 1.5))
                victim = rng.choice(gateway.workers())
                held = number % 2 == 1
                if held:
                    # Redis holds every script for a moment: the victim's requests pile up
                    # at their next step and die between two steps of their transfers
                    client.client_pause(5000, all=False)
                    time.sleep(0.3)
                os.kill(victim, signal.SIGKILL)
                victims.append(victim)
                if held:

                    def dead(pid: int = victim) -> bool:
                        return pid not in gateway.workers()

                    poll(dead, 30, "the victim dies")
                    time.sleep(0.2)
                    client.client_unpause()
                gateway.wait_for_replacement(victim)
                left_over.append(in_flight(wallets, [a.id for a in accounts], tables))
            time.sleep(1.0)
        finally:
            stop.set()
            for thread in threads:
                thread.join(120)
        assert not any(thread.is_alive() for thread in threads)
        assert gateway.process is not None
        assert gateway.process.poll() is None, "the master survives"
        outcomes = sum((c.outcomes for c in clients), Counter())
        assert outcomes["POST 201"] > 0, outcomes
        assert outcomes["POST 200"] > 0, outcomes
        assert outcomes["DELETE 200"] > 0, outcomes

        players = [a.id for a in accounts]
        settled_audit(wallets, players, tables)
        check_paid_once(wallets, store, clients, tables)

        # everyone leaves (by key: a seat whose answer was lost has no token client-side)
        for table_id in tables:
            record = store.load(table_id)
            assert record is not None
            state = record.state
            for account in accounts:
                sat_under = (state.get("accounts") or {}).get(account.id)
                local = [] if sat_under is None else sat_under["players"]
                for key, seat in state["seats"].items():
                    if seat["player_id"] in local:
                        left = http.call("DELETE", f"/v1/tables/{table_id}/seats/{key}", account)
                        assert left.status_code == 200, left.text()
                        assert left.get_json()["left"] is True
        report = settled_audit(wallets, players, tables)
        check_paid_once(wallets, store, clients, tables)
        totals = report.totals
        assert totals["reserved"] == totals["unrelayed"] == totals["tables"] == 0, totals
        assert totals["wallets"] + totals["tables"] + totals["house"] == 0, totals
        assert totals["house"] == -PLAYERS * GRANT, totals
        for account in accounts:
            me = http.call("GET", "/v1/players/me", account).get_json()
            assert (me["balance"], me["pending"]) == (GRANT, 0), (account.name, me)
    finally:
        client.close()
        gateway.stop()
    print(f"\n{KILLS} workers killed, {left_over} transfers left in flight;", dict(outcomes))


def check_paid_once(
    wallets: WalletService, store: TableStore, clients: list[Client], tables: list[str]
) -> None:
    """Every seat and rebuy told to a client is in its table's log; every one in the
    log is one transfer in the table's ledger, posted once in its wallet; every
    cash-out is credited once."""
    ids = {c.account.name: c.account.id for c in clients}
    entries = {
        player: wallets.store.entries(player, 0, wallets.store.entry_count(player) - 1)
        for player in ids.values()
    }
    for player, found in entries.items():
        counted = Counter(entry["id"] for entry in found)
        assert max(counted.values()) == 1, (player, counted.most_common(3))
    wallet_entry = {
        entry["id"]: (player, entry) for player, found in entries.items() for entry in found
    }
    for table_id in tables:
        logged: Counter[tuple[str, str, int]] = Counter()  # (kind, player, amount)
        holder: dict[int, str] = {}
        seated: Counter[tuple[str, int, int]] = Counter()  # (player, seat, buy-in)
        cash_outs: list[tuple[int, str, int]] = []
        for item in store.events_after(table_id, 0, None):
            if item["type"] == "seated":
                sat = item["data"]
                holder[sat["seat"]] = ids[sat["name"]]
                seated[ids[sat["name"]], sat["seat"], sat["stack"]] += 1
                logged["buy_in", ids[sat["name"]], sat["stack"]] += 1
            elif item["type"] == "rebought":
                rebought = item["data"]
                logged["rebuy", holder[rebought["seat"]], rebought["amount"]] += 1
            elif item["type"] == "cashed_out":
                cashed = item["data"]
                cash_outs.append((item["id"], holder.pop(cashed["seat"]), cashed["amount"]))
        ledger = wallets.store.table_ledger(table_id)
        paid: Counter[tuple[str, str, int]] = Counter()
        for transfer_id, transfer in ledger.items():
            if transfer["kind"] in ("buy_in", "rebuy"):
                player = transfer["debit"].removeprefix("wallet:")
                paid[transfer["kind"], player, transfer["amount"]] += 1
                # posted once (the wallet's ids are unique, checked above)
                assert transfer_id in wallet_entry, transfer
                assert wallet_entry[transfer_id][0] == player
                assert wallet_entry[transfer_id][1]["amount"] == transfer["amount"]
        assert paid == logged, (table_id, paid - logged, logged - paid)
        for event_id, player, amount in cash_outs:
            transfer_id = f"co_{table_id}_{event_id}"
            if amount == 0:
                assert transfer_id not in ledger
                continue
            assert ledger[transfer_id]["amount"] == amount
            assert wallet_entry[transfer_id][0] == player
            assert wallet_entry[transfer_id][1]["amount"] == amount
        # what the clients were told is in the log
        told_seats: Counter[tuple[str, int, int]] = Counter()
        told_rebuys: Counter[tuple[str, str, int]] = Counter()
        for client in clients:
            for table, seat, buy_in in client.seats.values():
                if table == table_id:
                    told_seats[client.account.id, seat, buy_in] += 1
            for table, amount in client.rebuys.values():
                if table == table_id:
                    told_rebuys["rebuy", client.account.id, amount] += 1
        assert not told_seats - seated, (table_id, told_seats - seated)
        assert not told_rebuys - logged, (table_id, told_rebuys - logged)
    # no buy-in, rebuy or cash-out in a wallet that no table holds
    held = {tid for table_id in tables for tid in wallets.store.table_ledger(table_id)}
    for transfer_id, (_player, entry) in wallet_entry.items():
        if entry["kind"] in ("buy_in", "rebuy", "cash_out"):
            assert transfer_id in held, entry
