"""A stateful property test of the wallets and the ledger, on a real Redis and evaluator.

Hypothesis drives a gateway (Flask's test client over `create_app`) through random
sequences of: new players (the play-money grant), operator deposits and withdrawals
(bad amounts, amounts over the balance, Idempotency-Keys sent again with the same body
and with another), tables of Guts (2 and 3 cards, mostly `cap_mode: reserve`, so that
reserves build up) and Paiute, buy-ins (some over the balance: 409 insufficient_funds,
some under a key sent again), deals played to their end (players go broke: their
cash-out is 0 and moves nothing), rebuys by key and by seat token, leaves, idle tables
closed (cash-outs, the reserve to the house), a new UTC day (the daily top-up), crashes
between two steps of a transfer (the post skipped, the relay skipped, a reservation
made and never seated), and sweeps with the sweeper's clock moved past every timeout.

Two fake clocks, moved only by the test: the tables' (deadlines, idleness; moves are
applied with `Deadlines.run_deadline`) and the wallets' (reservations, relays, the
sweeper, the top-up's day). The wallets' clock runs a day ahead of Redis's, so that
every commit lands before its reservation's time whatever the machine's load, and it
moves only by jumps past every timeout: after one, every step in flight is due. The
tables' clock is never behind the wallets'. Decks are shuffled from seeds Hypothesis
draws.

The test keeps its own model of every wallet (what it holds with every buy-in posted,
the reservations a sweeper will void, the buy-ins a sweeper will post), of every
table's outbox (the cash-outs and reserves not relayed yet, which the next relay at that
table or a sweep credits) and of the house's account. After every step:
- `GET /v1/players/me` answers the model's balance (free to spend) and pending;
- each table holds its buy-ins and rebuys less its cash-outs and its reserve gone to
  the house (counted from the event log), and nothing once closed;
- the audit over the store (`WalletService.audit`) is clean, and its totals are the
  model's: wallets, tables, house, reserved on no table, cashed out and not relayed.
A sweep finishes exactly the steps the model says are in flight (its counts), and a
sweep before anything is due changes nothing. Each example ends with a sweep.

The run goes on in rounds of a few examples until EXAMPLES ran or BUDGET_SECONDS are
spent; what it did is written to var/reports/ledger_properties.json. Two tests at the
end pin properties the random runs stay clear of.
"""

from __future__ import annotations

import hashlib
import json
import random
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import redis
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from api.adapters.evaluator import EvaluatorClient
from api.adapters.store import connect
from api.app import create_app
from api.bootstrap import bootstrap
from api.errors import ApiError
from api.games.common import FULL_DECK, Deck
from api.games.state import TableState
from api.games.table import deal_of
from api.service.wallets import WalletService
from tests.support.games import declarations_of, paiute_deal_of
from tests.support.gateway import (
    EVALUATOR_TIMEOUT,
    SIGN_UP_ADDRESS,
    SignedInClient,
    gateway_settings,
)
from tests.support.strategies import PAIUTE_OPTIONS as PAIUTE_FIELDS
from tests.support.strategies import guts_options
from tests.support.tables_api import Account

pytestmark = pytest.mark.slow

OPERATOR_KEY = "op-ledger-properties-0123456789abcdef"
OPERATOR = {"Authorization": f"Bearer {OPERATOR_KEY}"}
# small wallets beside buy-ins of up to 40 chips: buy-ins over the balance come often
GRANT = 40
DAILY = 25
# long enough that no jump of the wallets' clock closes a table by itself
IDLE_SECONDS = 3 * 86_400.0
# the wallets' clock moves by one of these (seconds), each past every timeout
# (a reservation's 30 s and its 5 s margin; a relay's 10 s)
JUMPS = (40.0, 600.0, 3600.0)
MAX_PLAYERS = 7
MAX_TABLES = 3
# moves and deadlines one play rule applies at most
PLAY_LIMIT = 250
# deadlines an idle table's close takes at most (a Paiute deal in play times out turn by turn)
CLOSE_LIMIT = 500
EXAMPLES = 40
STEPS = 40
ROUND = 4
BUDGET_SECONDS = 40.0
# what the run did, by rule outcome and response (var/reports, as the other long suites)
REPORT = Path(__file__).resolve().parents[2] / "var" / "reports" / "ledger_properties.json"

GUTS_OPTIONS = guts_options(
    game=st.just("guts"),
    cap=st.one_of(st.integers(1, 6), st.integers(1, 6), st.none()),
    cap_mode=st.sampled_from(["reserve", "reserve", "reserve", "per_deal"]),
    max_players=st.integers(2, 4),
    max_buy_in=st.integers(6, 40),
    rebuy=st.sampled_from([True, True, False]),
)
# at most one reshuffle: a deal an idle close waits for times out turn by turn
PAIUTE_OPTIONS = st.tuples(PAIUTE_FIELDS, st.sampled_from([True, True, False])).map(
    lambda drawn: {
        "game": "paiute",
        **drawn[0],
        "rebuy": drawn[1],
        "max_reshuffles": min(drawn[0]["max_reshuffles"], 1),
    }
)
# Guts twice as often: its reserves are what a closed table gives the house
GAME_OPTIONS = st.one_of(GUTS_OPTIONS, GUTS_OPTIONS, PAIUTE_OPTIONS)


class FakeClock:
    """A clock moved only by the test."""

    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


class DeckSource:
    """Decks shuffled from the seed the current step drew."""

    def __init__(self) -> None:
        self.seed = 0

    def __call__(self) -> Deck:
        cards = list(FULL_DECK)
        if self.seed % 4:
            random.Random(self.seed).shuffle(cards)
        else:
            # a pack in rank order, cut: pairs, ties and Paiute combinations come often
            cut = self.seed // 4 % len(cards)
            cards = cards[cut:] + cards[:cut]
        return Deck(tuple(cards), hashlib.sha256(str(self.seed).encode()).hexdigest()[:16])


@contextmanager
def skipped(target: object, name: str) -> Iterator[None]:
    """`target.name` does nothing for a while: the process dies where it would run."""
    setattr(target, name, lambda *args: None)
    try:
        yield
    finally:
        delattr(target, name)


def day_of(now: float) -> str:
    """The UTC day a daily top-up counts by."""
    return datetime.fromtimestamp(now, UTC).strftime("%Y-%m-%d")


@dataclass
class Wallet:
    """The test's model of a player's wallet."""

    account: Account
    # what the wallet holds with every buy-in posted (the cash-outs not relayed apart)
    settled: int
    topped_day: str
    # reservations no table took (a crash before the seat): a sweeper voids them
    held: list[int] = field(default_factory=list)
    # buy-ins a table took whose post was skipped (a crash after the seat): a sweeper posts
    unposted: list[int] = field(default_factory=list)


@dataclass
class Seat:
    """A seat the test took: who holds it, its number and token."""

    wallet: Wallet
    seat: int
    token: str


@dataclass
class Table:
    """What the test knows of a table: its seats, and its chips from the event log."""

    table_id: str
    game: str
    options: dict[str, Any]
    seats: dict[int, Seat] = field(default_factory=dict)
    bought: int = 0
    cashed: int = 0
    to_house: int = 0
    cursor: int = 0
    closed: bool = False
    # cash-outs (and the reserve to the house) written to the outbox, not relayed yet:
    # (the wallet credited, None for the house; the amount)
    unrelayed: list[tuple[Wallet | None, int]] = field(default_factory=list)


@dataclass
class Keyed:
    """An operator's request sent with an Idempotency-Key, to be sent again."""

    wallet: Wallet
    kind: str
    body: dict[str, Any]
    key: str
    status: int
    reply: Any


@dataclass
class KeyedSeat:
    """A seat request under an Idempotency-Key that was granted, to be sent again."""

    table: Table
    wallet: Wallet
    body: dict[str, Any]
    key: str
    reply: Any


@pytest.fixture
def ledger_url(redis_url: str) -> str:
    """A database of the session's Redis for this module alone, emptied first."""
    url = redis_url.rsplit("/", 1)[0] + "/8"
    client = redis.Redis.from_url(url)
    client.flushdb()
    client.close()
    return url


@pytest.fixture
def evaluator(evaluator_address: str) -> Iterator[EvaluatorClient]:
    """A client of the session's evaluator."""
    client = EvaluatorClient(evaluator_address, EVALUATOR_TIMEOUT)
    yield client
    client.close()


@pytest.mark.timeout(600)
def test_random_play_keeps_every_wallet_and_the_ledger_whole(
    ledger_url: str, evaluator_address: str, evaluator: EvaluatorClient
) -> None:
    started = time.monotonic()
    # the wallets' clock a day ahead of Redis's: every commit lands before its time
    wallet_clock = FakeClock(float(int(time.time())) + 86_400.0)
    table_clock = FakeClock(wallet_clock.now)
    decks = DeckSource()
    client = connect(ledger_url, False)
    configured = gateway_settings(
        ledger_url,
        evaluator_address,
        clock=False,
        rate_limit_per_address=0,
        rate_limit_per_token=0,
        operator_keys=(OPERATOR_KEY,),
        play_money_grant=GRANT,
        play_money_daily=DAILY,
        table_idle_seconds=IDLE_SECONDS,
    )
    services = bootstrap(
        configured, client=client, evaluator=evaluator, clock=table_clock, deck_source=decks
    )
    store, deadlines = services.store, services.deadlines
    app = create_app(configured, services=services)
    app.testing = True
    wallets: WalletService = services.wallets
    assert (wallets.policy.grant, wallets.policy.daily) == (GRANT, DAILY)
    wallets.clock = wallet_clock
    http = app.test_client()
    assert isinstance(http, SignedInClient)
    http.signs_in = False
    flush = redis.Redis.from_url(ledger_url)
    seen: Counter[str] = Counter()

    class LedgerMachine(RuleBasedStateMachine):
        """Random players, operators, tables, crashes and sweeps; the model of the docstring."""

        def __init__(self) -> None:
            super().__init__()
            flush.flushdb()
            seen["examples"] += 1
            self.wallets: list[Wallet] = []
            self.tables: list[Table] = []
            self.house = 0  # the house's account: minus what it issued, plus what it took
            self.relay_off = False
            self.keyed: Keyed | None = None
            self.keyed_seat: KeyedSeat | None = None
            self.keys = 0
            self.names = 0

        # ------------------------------------------------------------ requests

        def call(
            self,
            method: str,
            path: str,
            auth: dict[str, str] | None,
            body: Any = None,
            key: str | None = None,
        ) -> tuple[int, Any, Any]:
            headers = dict(auth or {})
            if key is not None:
                headers["Idempotency-Key"] = key
            response = http.open(path, method=method, headers=headers, json=body)
            reply: Any = response.get_json(silent=True)
            code = reply["code"] if response.status_code >= 400 else ""
            seen[f"{method} {path.split('/')[2]} {response.status_code} {code}".strip()] += 1
            assert response.status_code < 500, reply
            if response.status_code >= 400:
                assert response.mimetype == "application/problem+json", reply
            return response.status_code, reply, response.headers

        def new_key(self) -> str:
            self.keys += 1
            return f"key-{self.keys}"

        def free(self, wallet: Wallet) -> int:
            """What the wallet may spend now: its reservations apart."""
            return wallet.settled - sum(wallet.held)

        def top_up(self, wallet: Wallet) -> None:
            """The day's top-up, as the gateway gives it on a read or a short buy-in."""
            day = day_of(wallet_clock.now)
            if wallet.topped_day == day:
                return
            wallet.topped_day = day
            short = DAILY - self.free(wallet)
            if short > 0:
                wallet.settled += short
                self.house -= short
                seen["top_up"] += 1

        def pick_wallet(self, data: st.DataObject) -> Wallet:
            return data.draw(st.sampled_from(self.wallets), label="wallet")

        def open_tables(self) -> list[Table]:
            return [t for t in self.tables if not t.closed]

        def pick_table(self, data: st.DataObject) -> Table:
            tables = self.open_tables()
            # mostly an open table, sometimes a closed one
            if tables and data.draw(st.integers(0, 5), label="open") > 0:
                return data.draw(st.sampled_from(tables), label="table")
            return data.draw(st.sampled_from(self.tables), label="table")

        def pick_sitter(self, table: Table, data: st.DataObject) -> Wallet:
            """Mostly a player who holds no seat at the table."""
            holding = {id(seat.wallet) for seat in table.seats.values()}
            free = [w for w in self.wallets if id(w) not in holding]
            if free and data.draw(st.integers(0, 4), label="unseated") > 0:
                return data.draw(st.sampled_from(free), label="wallet")
            return self.pick_wallet(data)

        def state(self, table: Table) -> TableState | None:
            record = store.load(table.table_id)
            return None if record is None else record.state

        # ------------------------------------------------------------ players and operators

        @initialize(data=st.data())
        def first_table(self, data: st.DataObject) -> None:
            """Three players and a table with as many of them as it needs to start."""
            for _ in range(3):
                self.new_player()
            self.create_table(data)

        @precondition(lambda self: len(self.wallets) < MAX_PLAYERS)
        @rule()
        def new_player(self) -> None:
            """A player signs up: the grant."""
            self.names += 1
            response = http.open(
                "/v1/players",
                method="POST",
                json={"name": f"p{self.names}"},
                environ_overrides={"REMOTE_ADDR": SIGN_UP_ADDRESS},
            )
            assert response.status_code == 201, response.get_data(as_text=True)
            created = response.get_json()
            account = Account(created["id"], created["name"], created["key"])
            self.wallets.append(Wallet(account, GRANT, day_of(wallet_clock.now)))
            self.house -= GRANT

        def operator_move(self, wallet: Wallet, kind: str, body: Any, key: str | None) -> Any:
            path = f"/v1/operator/players/{wallet.account.id}/{kind}s"
            return self.call("POST", path, OPERATOR, body, key)

        @rule(
            data=st.data(),
            kind=st.sampled_from(["deposit", "withdrawal"]),
            keyed=st.booleans(),
        )
        def operator(self, data: st.DataObject, kind: str, keyed: bool) -> None:
            """A deposit or a withdrawal: at the balance, over it, or a bad amount."""
            if data.draw(st.integers(0, 9), label="nobody") == 0:
                status, reply, _ = self.call(
                    "POST", f"/v1/operator/players/p_nobody/{kind}s", OPERATOR, {"amount": 5}
                )
                assert (status, reply["code"]) == (404, "player_not_found"), reply
                return
            wallet = self.pick_wallet(data)
            free = self.free(wallet)
            amount: Any = data.draw(
                st.sampled_from([free, free + 1, 1, 0, -3, 10**13, 1.5, "7"]) | st.integers(1, 120),
                label="amount",
            )
            body = {"amount": amount, "reference": f"ref-{self.keys}"}
            key = self.new_key() if keyed else None
            status, reply, _ = self.operator_move(wallet, kind, body, key)
            if isinstance(amount, bool) or not isinstance(amount, int):
                assert (status, reply["code"]) == (422, "invalid_type"), reply
            elif not 1 <= amount <= 10**12:
                assert (status, reply["code"]) == (422, "invalid_amount"), reply
            elif kind == "withdrawal" and amount > free:
                assert (status, reply["code"]) == (409, "insufficient_funds"), reply
                assert reply["balance"] == free
            else:
                assert status == 201, reply
                assert (reply["kind"], reply["amount"]) == (kind, amount)
                sign = 1 if kind == "deposit" else -1
                wallet.settled += sign * amount
                self.house -= sign * amount
                # the entry's balance is the posted one: in-flight steps apart
                assert reply["balance"] == wallet.settled + sum(wallet.unposted)
            if key is not None:
                self.keyed = Keyed(wallet, kind, body, key, status, reply)

        @precondition(lambda self: self.keyed is not None)
        @rule(other=st.booleans())
        def operator_again(self, other: bool) -> None:
            """The last keyed deposit or withdrawal again: once, or 409 with another body."""
            sent = self.keyed
            assert sent is not None
            body = sent.body
            if other:
                body = {**body, "reference": body["reference"] + "-other"}
            status, reply, headers = self.operator_move(sent.wallet, sent.kind, body, sent.key)
            if sent.status == 201 and other:
                assert (status, reply["code"]) == (409, "idempotency_key_reused"), reply
            elif sent.status == 201:
                assert status == 200, reply
                assert headers.get("Idempotent-Replayed") == "true"
                assert reply == sent.reply
            elif sent.status == 422:
                assert (status, reply["code"]) == (sent.status, sent.reply["code"])
            elif other:
                # refused for the balance, but the key is the first request's all the same
                assert (status, reply["code"]) == (409, "idempotency_key_reused"), reply
            else:
                # refused for the balance: no transfer was made, the request is made afresh
                amount = body["amount"]
                if amount <= self.free(sent.wallet):
                    assert status == 201, reply
                    sent.wallet.settled -= amount
                    self.house += amount
                    self.keyed = Keyed(sent.wallet, sent.kind, body, sent.key, status, reply)
                else:
                    assert (status, reply["code"]) == (409, "insufficient_funds"), reply

        # ------------------------------------------------------------ tables and seats

        @precondition(lambda self: len(self.open_tables()) < MAX_TABLES)
        @rule(data=st.data())
        def create_table(self, data: st.DataObject) -> None:
            """A table of Guts or Paiute, with as many players as it needs to start."""
            options: dict[str, Any] = data.draw(GAME_OPTIONS, label="options")
            options["max_players"] = max(options["max_players"], options["min_players"])
            owner = self.pick_wallet(data)
            status, reply, _ = self.call("POST", "/v1/tables", owner.account.auth, options)
            assert status == 201, reply
            table = Table(reply["table"]["id"], options["game"], reply["table"]["options"])
            self.tables.append(table)
            seen[f"table {options['game']} {options.get('cards', '')}"] += 1
            # the richest players sit, with half their wallet within the table's limits
            low, high = table.options["min_buy_in"], table.options["max_buy_in"]
            richest = sorted(self.wallets, key=self.free, reverse=True)
            for wallet in richest[: table.options["min_players"]]:
                self.sit_down(table, wallet, max(low, min(high, self.free(wallet) // 2)), data)

        def sit_down(
            self,
            table: Table,
            wallet: Wallet,
            buy_in: int,
            data: st.DataObject,
            key: str | None = None,
            post: bool = True,
        ) -> int:
            """Ask for a seat; the status, checked against the rules and the wallet."""
            state = self.state(table)
            options = table.options
            seated = any(s.wallet is wallet for s in table.seats.values())
            refused = (
                table.closed
                or seated
                or not options["min_buy_in"] <= buy_in <= options["max_buy_in"]
                or state is None
                or len(state["seats"]) >= options["max_players"]
            )
            if not refused and self.free(wallet) < buy_in:
                self.top_up(wallet)  # a short buy-in tries the day's top-up first
            short = not refused and self.free(wallet) < buy_in
            body = {"name": wallet.account.name, "buy_in": buy_in}
            path = f"/v1/tables/{table.table_id}/seats"
            # without the post, the gateway dies after the table's commit
            with skipped(wallets, "post") if not post else nullcontext():
                status, reply, _ = self.call("POST", path, wallet.account.auth, body, key)
            if refused:
                assert status in (409, 410, 422), reply
                assert reply["code"] != "insufficient_funds", reply
            elif short:
                assert (status, reply["code"]) == (409, "insufficient_funds"), reply
                assert reply["balance"] == self.free(wallet)
            else:
                assert status == 201, reply
                table.seats[reply["seat"]] = Seat(wallet, reply["seat"], reply["token"])
                table.bought += buy_in
                wallet.settled -= buy_in
                if not post:
                    wallet.unposted.append(buy_in)
                    seen["buy-in not posted"] += 1
                if key is not None:
                    self.keyed_seat = KeyedSeat(table, wallet, body, key, reply)
            return status

        @rule(data=st.data(), keyed=st.booleans())
        def sit(self, data: st.DataObject, keyed: bool) -> None:
            """A buy-in: within the table's limits or not, within the wallet or over it."""
            table = self.pick_table(data)
            wallet = self.pick_sitter(table, data)
            low, high = table.options["min_buy_in"], table.options["max_buy_in"]
            free = self.free(wallet)
            buy_in = data.draw(
                st.sampled_from([free, free + 1, low, high]) | st.integers(low - 1, high + 1),
                label="buy_in",
            )
            self.sit_down(table, wallet, buy_in, data, self.new_key() if keyed else None)

        @precondition(lambda self: self.keyed_seat is not None)
        @rule()
        def sit_again(self) -> None:
            """The last keyed seat granted, asked again: the first answer, no chip moves."""
            sent = self.keyed_seat
            assert sent is not None
            path = f"/v1/tables/{sent.table.table_id}/seats"
            status, reply, headers = self.call(
                "POST", path, sent.wallet.account.auth, sent.body, sent.key
            )
            if sent.table.closed and status == 410:
                return  # or the first answer: its record outlives the table
            assert status == 201, reply
            assert headers.get("Idempotent-Replayed") == "true"
            assert reply["seat"] == sent.reply["seat"]
            assert reply["token"] == sent.reply["token"]

        def seat_of(self, table: Table, data: st.DataObject) -> Seat | None:
            if not table.seats:
                return None
            return data.draw(st.sampled_from(sorted(table.seats.values(), key=lambda s: s.seat)))

        @rule(data=st.data(), by_token=st.booleans())
        def rebuy(self, data: st.DataObject, by_token: bool) -> None:
            """A rebuy, with the player's key or the seat's token, maybe over the balance."""
            table = self.pick_table(data)
            self.rebuy_at(table, data, by_token)

        def rebuy_at(
            self, table: Table, data: st.DataObject, by_token: bool, post: bool = True
        ) -> None:
            seat = self.seat_of(table, data)
            if seat is None:
                return
            wallet = seat.wallet
            free = self.free(wallet)
            state = self.state(table)
            held = state["seats"].get(str(seat.seat)) if state is not None else None
            # the room the table's limit leaves the stack, the wallet's balance, around them
            room = max(1, table.options["max_buy_in"] - (held["stack"] if held else 0))
            amount = data.draw(
                st.sampled_from([free, free + 1, room, room + 1]) | st.integers(1, room),
                label="amount",
            )
            auth = {"Authorization": f"Bearer {seat.token}"} if by_token else wallet.account.auth
            before = self.free(wallet)
            with skipped(wallets, "post") if not post else nullcontext():
                status, reply, _ = self.call(
                    "POST",
                    f"/v1/tables/{table.table_id}/actions",
                    auth,
                    {"action": "rebuy", "amount": amount},
                )
            taken = status == 200 or (status == 409 and reply["code"] == "insufficient_funds")
            if taken and before < amount:
                self.top_up(wallet)  # the rules took it: a short one tries the top-up
            if status == 200:
                assert amount <= self.free(wallet), (amount, before)
                table.bought += amount
                wallet.settled -= amount
                if not post:
                    wallet.unposted.append(amount)
                    seen["rebuy not posted"] += 1
            elif reply["code"] == "insufficient_funds":
                assert amount > self.free(wallet)
                assert reply["balance"] == self.free(wallet)
            else:
                assert status in (401, 403, 409, 410, 422), reply

        @rule(data=st.data())
        def leave(self, data: st.DataObject) -> None:
            """A seat leaves: cashed out now, or at the end of its deal."""
            self.leave_at(self.pick_table(data), data)

        def leave_at(self, table: Table, data: st.DataObject) -> None:
            seat = self.seat_of(table, data)
            if seat is None:
                return
            status, reply, _ = self.call(
                "DELETE",
                f"/v1/tables/{table.table_id}/seats/{seat.seat}",
                {"Authorization": f"Bearer {seat.token}"},
            )
            if table.closed:
                assert status in (401, 410), reply
                return
            assert status in (200, 409), reply  # 409: it already leaves after this deal
            if status == 409:
                assert reply["code"] == "already_left", reply

        # ------------------------------------------------------------ play

        def pending(self, state: TableState) -> list[int]:
            """The seats whose move is due, before the deadline."""
            if state["phase"] not in ("declaring", "playing", "last_turns"):
                return []
            if state["deadline"] is None or table_clock.now >= state["deadline"]:
                return []
            deal = deal_of(state)
            if deal["turn"] is not None:
                return [deal["turn"]]
            declared = declarations_of(deal)
            return [s for s in deal.get("players", []) if str(s) not in declared]

        def act(self, table: Table, seat: Seat, body: dict[str, Any]) -> tuple[int, Any]:
            status, reply, _ = self.call(
                "POST",
                f"/v1/tables/{table.table_id}/actions",
                {"Authorization": f"Bearer {seat.token}"},
                body,
            )
            return status, reply

        def deadline(self, table: Table, state: TableState, rng: random.Random) -> bool:
            """Time reaches the table's deadline, which runs; False if there is none."""
            if state["deadline"] is None:
                return False
            table_clock.now = max(table_clock.now, float(state["deadline"]))
            decks.seed = rng.getrandbits(32)
            deadlines.run_deadline(table.table_id)
            return True

        def paiute_turn(
            self, table: Table, state: TableState, seat: Seat, rng: random.Random
        ) -> None:
            """One legal Paiute turn: draw, then call if the evaluator finds a combination."""
            deal = paiute_deal_of(state)
            if deal["drawn"] is None:
                source = "discard" if deal["discard_pile"] and rng.random() < 0.25 else "stock"
                status, reply = self.act(table, seat, {"action": "draw", "source": source})
                assert status == 200, reply
                after = self.state(table)
                if after is None or after["deal"] is None:
                    return  # the draw voided the deal
                deal = paiute_deal_of(after)
                if deal["turn"] != seat.seat or deal["drawn"] is None:
                    return  # the draw voided the deal
            hand = deal["hands"][str(seat.seat)]
            taken = deal["drawn"]
            ranked = evaluator.evaluate("paiute", [" ".join(hand)], deal["wild_rank"])[0]
            spare = ranked["leftover"]
            if (
                ranked["strength"]
                and not (taken["source"] == "discard" and spare == taken["card"])
                and rng.random() < 0.9
            ):
                body = {
                    "action": "call",
                    "cards": [card for card in hand if card != spare],
                    "discard": spare,
                }
            else:
                allowed = [c for c in hand if taken["source"] == "stock" or c != taken["card"]]
                body = {"action": "discard", "card": rng.choice(allowed)}
            status, reply = self.act(table, seat, body)
            assert status == 200, reply

        def play_out(self, table: Table, deals: int, rng: random.Random) -> None:
            """Play until `deals` deals ended (or the table waits): moves and deadlines."""
            first = None
            for _ in range(PLAY_LIMIT):
                state = self.state(table)
                if state is None or state.get("closed_at") is not None:
                    return
                if first is None:
                    first = state["hand_number"]
                phase = state["phase"]
                if phase in ("waiting", "between_deals") and state["hand_number"] >= first + deals:
                    return
                if phase == "waiting":
                    # seats away after missed deadlines come back first (`back`): the
                    # table deals again by itself once enough of them are
                    away = sorted(int(key) for key, s in state["seats"].items() if s.get("away"))
                    if away:
                        for number in away:
                            status, reply = self.act(table, table.seats[number], {"action": "back"})
                            assert status == 200, reply
                        continue
                    funded = [s for s in state["seats"].values() if s["stack"] > 0]
                    if len(funded) < table.options["min_players"]:
                        return
                    seat = table.seats[min(int(key) for key in state["seats"])]
                    decks.seed = rng.getrandbits(32)
                    status, reply = self.act(table, seat, {"action": "start"})
                    assert status == 200, reply
                    continue
                due = self.pending(state)
                if due and rng.random() < 0.9:
                    if table.game == "guts":
                        for number in due:
                            choice = rng.choice(["in", "out"])
                            body = {"action": "declare", "choice": choice}
                            status, reply = self.act(table, table.seats[number], body)
                            assert status == 200, reply
                            if deal_of(state)["turn"] is not None:
                                break
                    else:
                        self.paiute_turn(table, state, table.seats[due[0]], rng)
                    continue
                if not self.deadline(table, state, rng):
                    return

        @rule(data=st.data(), deals=st.integers(1, 6), seed=st.integers(0, 2**32))
        def play(self, data: st.DataObject, deals: int, seed: int) -> None:
            """Deals played to their end: pots won, reserves filled, players broke."""
            tables = self.open_tables()
            if tables:
                table = data.draw(st.sampled_from(tables), label="table")
                self.play_out(table, deals, random.Random(seed))

        @rule(seed=st.integers(0, 2**32))
        def play_everywhere(self, seed: int) -> None:
            """A deal or two at every open table."""
            rng = random.Random(seed)
            for table in self.open_tables():
                self.play_out(table, rng.randint(1, 2), rng)

        # ------------------------------------------------------------ time

        @rule(data=st.data(), seed=st.integers(0, 2**32))
        def idle_close(self, data: st.DataObject, seed: int) -> None:
            """Nobody moves for the idle time: the clock cashes every seat out and closes
            every table (drawn a third as often as the others: it ends all play)."""
            if data.draw(st.integers(0, 2), label="idle") > 0:
                return
            rng = random.Random(seed)
            for table in self.open_tables():
                if table.game == "guts":  # a last deal or two (quick ones): a reserve, often
                    self.play_out(table, rng.randint(1, 2), rng)
            table_clock.now += IDLE_SECONDS + 60
            for table in self.open_tables():
                self.close(table, rng)

        def close(self, table: Table, rng: random.Random) -> None:
            state = self.state(table)
            if state is not None and state["reserve"]:
                seen["closed with a reserve"] += 1
            for _ in range(CLOSE_LIMIT):
                state = self.state(table)
                if state is None or state.get("closed_at") is not None:
                    break
                deadline = deadlines.next_deadline(state, table_clock.now)
                assert deadline is not None
                table_clock.now = max(table_clock.now, deadline)
                decks.seed = rng.getrandbits(32)
                deadlines.run_deadline(table.table_id)
            state = self.state(table)
            assert state is not None
            assert state.get("closed_at") is not None

        def jump(self, seconds: float) -> None:
            """The wallets' clock moves past every timeout; the tables' never lags it."""
            wallet_clock.now += seconds
            table_clock.now = max(table_clock.now, wallet_clock.now)

        @rule(seconds=st.sampled_from((0.0, *JUMPS)), next_day=st.booleans())
        def sweep(self, seconds: float, next_day: bool) -> None:
            """The sweeper, once every step in flight is due: it finishes exactly those; or
            before anything is due: it finishes nothing."""
            if not seconds:
                assert wallets.sweep() == {"posted": 0, "voided": 0, "relayed": 0}
                return
            if next_day:
                midnight = (wallet_clock.now // 86_400 + 1) * 86_400
                seconds = max(seconds, midnight + 1 - wallet_clock.now)
            self.jump(seconds)
            done = wallets.sweep()
            seen.update(f"swept {name}" for name, count in done.items() if count)
            expected = {
                "posted": sum(len(w.unposted) for w in self.wallets),
                "voided": sum(len(w.held) for w in self.wallets),
                "relayed": sum(len(t.unrelayed) for t in self.tables),
            }
            assert done == expected
            for wallet in self.wallets:
                wallet.held.clear()
                wallet.unposted.clear()
            for table in self.tables:
                self.credit(table.unrelayed)
                table.unrelayed.clear()
            assert wallets.sweep() == {"posted": 0, "voided": 0, "relayed": 0}

        def credit(self, items: list[tuple[Wallet | None, int]]) -> None:
            for wallet, amount in items:
                if wallet is None:
                    self.house += amount
                else:
                    wallet.settled += amount

        def teardown(self) -> None:
            """At the end, whatever crashes left is finished by a sweep, and checked."""
            self.sweep(JUMPS[0], next_day=False)
            self.ledger_holds()

        # ------------------------------------------------------------ crashes

        @rule(data=st.data(), how=st.sampled_from(["post", "relay", "reserve"]))
        def crash(self, data: st.DataObject, how: str) -> None:
            """A gateway dies between two steps of a transfer."""
            seen[f"crash {how}"] += 1
            table = self.pick_table(data)
            if how == "post":
                # the table took the buy-in, the wallet never heard
                if data.draw(st.booleans(), label="rebuy"):
                    self.rebuy_at(table, data, data.draw(st.booleans()), post=False)
                else:
                    wallet = self.pick_sitter(table, data)
                    low, high = table.options["min_buy_in"], table.options["max_buy_in"]
                    buy_in = data.draw(st.integers(low, max(low, min(high, self.free(wallet)))))
                    self.sit_down(table, wallet, buy_in, data, post=False)
            elif how == "relay":
                # the table paid out, the wallets never heard
                self.relay_off = True
                try:
                    choice = data.draw(
                        st.sampled_from(["leave", "leave", "play", "play", "close"]), label="what"
                    )
                    rng = random.Random(data.draw(st.integers(0, 2**32), label="seed"))
                    with skipped(wallets, "relay_quietly"):
                        self.relay_step(table, choice, data, rng)
                finally:
                    self.fold_events()  # this step's cash-outs stay in the outbox
                    self.relay_off = False
            else:
                self.orphan(table, data)

        def relay_step(
            self, table: Table, choice: str, data: st.DataObject, rng: random.Random
        ) -> None:
            if choice == "leave":
                self.leave_at(table, data)
            elif choice == "play" and not table.closed:
                self.play_out(table, 2, rng)
            elif not table.closed:
                table_clock.now += IDLE_SECONDS + 60
                for idle in self.open_tables():
                    self.close(idle, rng)

        def orphan(self, table: Table, data: st.DataObject) -> None:
            """The chips reserved, the gateway gone before the table's commit."""
            wallet = self.pick_wallet(data)
            amount = data.draw(st.integers(1, 50), label="amount")
            if self.free(wallet) < amount:
                self.top_up(wallet)
            if amount > self.free(wallet):
                with pytest.raises(ApiError) as refused:
                    wallets.reserve(wallet.account.id, table.table_id, "buy_in", amount)
                assert refused.value.code == "insufficient_funds"
            else:
                wallets.reserve(wallet.account.id, table.table_id, "buy_in", amount)
                wallet.held.append(amount)
                seen["reserved, never seated"] += 1

        # ------------------------------------------------------------ invariants

        def fold_events(self) -> None:
            """The cash-outs, reserves to the house and closes in the tables' event logs."""
            for table in self.tables:
                leaving: list[tuple[Wallet | None, int]] = []
                for item in store.events_after(table.table_id, table.cursor, None):
                    table.cursor = item["id"]
                    kind = item["type"]
                    if item["type"] == "cashed_out":
                        data = item["data"]
                        seat = table.seats.pop(data["seat"])
                        table.cashed += data["amount"]
                        if data["amount"] > 0:
                            leaving.append((seat.wallet, data["amount"]))
                        else:
                            seen["cashed out broke"] += 1
                    elif item["type"] == "reserve_to_house":
                        amount = item["data"]["amount"]
                        table.to_house += amount
                        leaving.append((None, amount))
                        seen["reserve to the house"] += 1
                    elif kind in ("deal_ended", "reserve_opened", "rebought"):
                        seen[kind] += 1
                    elif kind == "table_closed":
                        table.closed = True
                        seen["table closed"] += 1
                if leaving and self.relay_off:
                    table.unrelayed += leaving
                    seen["cash-outs not relayed"] += len(leaving)
                elif leaving:
                    # the relay after the commit credits the whole outbox
                    self.credit(table.unrelayed + leaving)
                    table.unrelayed.clear()

        @invariant()
        def ledger_holds(self) -> None:
            """Every check of the module docstring."""
            seen["steps"] += 1
            self.fold_events()
            chips_on_tables = 0
            for table in self.tables:
                state = self.state(table)
                expected = table.bought - table.cashed - table.to_house
                if table.closed:
                    assert expected == 0, table
                    assert not table.seats
                if state is None:
                    continue
                chips = sum(s["stack"] for s in state["seats"].values())
                chips += state["pot"] + state["reserve"]
                assert chips == expected, (table.table_id, chips, expected)
                assert set(table.seats) == {int(s) for s in state["seats"]}
                chips_on_tables += chips
            for wallet in self.wallets:
                self.top_up(wallet)  # reading the balance tops the wallet up
                status, reply, _ = self.call("GET", "/v1/players/me", wallet.account.auth)
                assert status == 200, reply
                want = (self.free(wallet), sum(wallet.held) + sum(wallet.unposted))
                assert (reply["balance"], reply["pending"]) == want, wallet
            report = wallets.audit()
            assert report.clean, report.discrepancies
            totals = {
                "wallets": sum(self.free(w) for w in self.wallets),
                "tables": chips_on_tables,
                "house": self.house,
                "reserved": sum(sum(w.held) for w in self.wallets),
                "unrelayed": sum(amount for t in self.tables for _, amount in t.unrelayed),
            }
            assert {name: report.totals[name] for name in totals} == totals

    # rounds of a few examples, until EXAMPLES ran or the budget is spent (a busy machine
    # runs fewer, never for much longer)
    budget = time.monotonic() + BUDGET_SECONDS
    while seen["examples"] < EXAMPLES and (time.monotonic() < budget or not seen["examples"]):
        run_state_machine_as_test(
            LedgerMachine,
            settings=settings(
                max_examples=ROUND,
                stateful_step_count=STEPS,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
            ),
        )
    flush.close()
    client.close()
    REPORT.parent.mkdir(parents=True, exist_ok=True)
    figures = {"seconds": round(time.monotonic() - started, 1), **dict(sorted(seen.items()))}
    REPORT.write_text(json.dumps(figures, indent=2) + "\n")


# --------------------------------------------------------------------------- found by hand
#
# Two properties the random runs above stay clear of: each reservation is swept on its
# own time, and an operator's Idempotency-Key names one request whatever wallet it is for.


def test_a_reservation_is_resolved_in_time_though_its_player_reserves_again(
    ledger_url: str,
) -> None:
    from api.adapters.wallets import WalletStore
    from api.service.wallets import WalletPolicy

    client = redis.Redis.from_url(ledger_url, decode_responses=True)
    clock = FakeClock(float(int(time.time())) + 86_400.0)
    wallets = WalletService(WalletStore(client), WalletPolicy(grant=100), clock=clock)
    try:
        wallets.open("p_ann")
        orphan = wallets.reserve("p_ann", "t_gone", "buy_in", 10)  # never seated
        clock.now += 20
        refused = wallets.reserve("p_ann", "t_other", "buy_in", 10)
        wallets.void(refused)  # refused by the table at once
        # a sweeper every 2 s, as the clock runs it, until the audit's slack is spent
        while clock.now < orphan.expires + wallets.policy.margin + 5 * 2:
            clock.now += 2
            wallets.sweep()
        assert wallets.store.pending("p_ann") == {}
        report = wallets.audit()
        assert report.clean, report.discrepancies
    finally:
        clock.now += 3600
        wallets.sweep()
        client.close()


def test_an_operator_key_names_one_transfer_whoever_it_is_sent_for(
    ledger_url: str, evaluator_address: str
) -> None:
    from tests.support.gateway import close_app, make_app

    app = make_app(ledger_url, evaluator_address, clock=False, operator_keys=(OPERATOR_KEY,))
    client = app.test_client()
    try:
        players = []
        for name in ("ann", "bo"):
            created = client.post(
                "/v1/players",
                json={"name": name},
                environ_overrides={"REMOTE_ADDR": SIGN_UP_ADDRESS},
            ).get_json()
            players.append(created["id"])
        headers = {**OPERATOR, "Idempotency-Key": "order-1187"}
        first = client.post(
            f"/v1/operator/players/{players[0]}/deposits", json={"amount": 500}, headers=headers
        )
        assert first.status_code == 201, first.get_json()
        other = client.post(
            f"/v1/operator/players/{players[1]}/deposits", json={"amount": 500}, headers=headers
        )
        assert other.status_code == 409, other.get_json()
        assert other.get_json()["code"] == "idempotency_key_reused"
    finally:
        close_app(app)
