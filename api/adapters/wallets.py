"""Wallets and the ledger in Redis: every step one Lua script, once per transfer id.

A wallet lives on its player's slot (the player id is the hash tag):

    player:{<id>}:wallet      hash: posted (the sum of its entries), pending (reserved
                              for buy-ins not posted yet), issued (chips from the house,
                              net), topped_day (the last day of a play-money top-up)
    player:{<id>}:ledger      list: the wallet's entries, oldest first, each a transfer
                              with the balance after it
    player:{<id>}:transfers   hash: transfer id -> "<state> <fingerprint> <position of
                              its entry>" (pending, posted, voided, credited, debited):
                              at most one transfer per id
    player:{<id>}:pending     hash: transfer id -> JSON {amount, table, expires}
    player:{<id>}:flows       sorted set: "<transfer id> <d|b|c> <amount>" by time, the
                              deposits, buy-ins and cash-outs of the last 30 days, which
                              the player's limits count
    player:{<id>}:limits      hash: doc (JSON: the player's and the operator's limits,
                              increases waiting), effective (JSON: the limits that apply,
                              which the wallet's script enforces), version

A table's side is on the table's slot, written by the table's own commit:

    table:{<id>}:ledger       hash: transfer id -> JSON transfer (buy-ins, rebuys,
                              cash-outs, the reserve to the house)
    table:{<id>}:outbox       hash: transfer id -> JSON cash-out not relayed yet

An operator's Idempotency-Key is tied to the one request it came with by
`ledger:{key:<digest prefix>}:<sha256 of operator and key>` (its fingerprint), whichever
wallet the request is for. The house's credits (a closed table's reserve) are a ledger of their own,
`house:{ledger}:*`, kept like a wallet's. Three keys shared by all let a sweeper find
work without a scan: `ledger:wallets` (every wallet, by creation), `ledger:pending`
(every reservation, "<player> <transfer id>", by when it may be resolved) and
`ledger:outbox` (tables with a cash-out to relay, by when it is due). Each is written
before the step it points at, which must land before the pointer's time (its script
checks Redis's clock), so a crash leaves a pointer to nothing (dropped by the sweeper),
never a step without a pointer, and a sweeper never drops a pointer to a step still on
its way.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import NotRequired, TypedDict, cast

from api import jsonio
from api.adapters.store import RedisClient, lua_script

_WALLET = lua_script("wallet.lua")
_DROP_POINTER = lua_script("drop_pointer.lua")
_LIMITS = lua_script("limits.lua")

WALLETS_KEY = "ledger:wallets"
PENDING_KEY = "ledger:pending"
OUTBOX_KEY = "ledger:outbox"
HOUSE_WALLET = "house"
# the players whose time-out or self-exclusion runs, by when it ends (+inf: for good)
EXCLUSIONS_KEY = "ledger:exclusions"


def _tag(player: str) -> str:
    return "house:{ledger}" if player == HOUSE_WALLET else f"player:{{{player}}}"


def wallet_keys(player: str) -> list[str]:
    """The six keys of a wallet (the house's too), in the order wallet.lua takes them."""
    tag = _tag(player)
    return [
        f"{tag}:wallet",
        f"{tag}:ledger",
        f"{tag}:transfers",
        f"{tag}:pending",
        f"{tag}:flows",
        f"{tag}:limits",
    ]


class Cause(TypedDict):
    """What caused a transfer: the members that apply to its kind (docs/api.md)."""

    table: NotRequired[str]
    seat: NotRequired[int]
    hand: NotRequired[int]
    operator: NotRequired[str]
    reference: NotRequired[str]
    reason: NotRequired[str]
    day: NotRequired[str]


class Transfer(TypedDict):
    """A transfer as the ledger keeps it: in a table's ledger and outbox as it is, in a
    wallet's ledger as an `Entry`."""

    id: str
    kind: str
    amount: int
    debit: str
    credit: str
    at: float
    cause: Cause


class Entry(Transfer):
    """A wallet's entry: its transfer, with the wallet's balance after it."""

    balance: int


class Held(TypedDict):
    """A reservation the wallet holds for a buy-in or rebuy not posted yet."""

    amount: int
    table: str
    expires: float


class Sums(TypedDict):
    """What a wallet's hash counts: its entries' sum, what is reserved, what was issued."""

    posted: int
    pending: int
    issued: int


def table_ledger_key(table_id: str) -> str:
    """The hash of a table's transfers."""
    return f"table:{{{table_id}}}:ledger"


def table_outbox_key(table_id: str) -> str:
    """The hash of a table's cash-outs not yet relayed to their wallets."""
    return f"table:{{{table_id}}}:outbox"


@dataclass(frozen=True)
class Step:
    """What a wallet step did, and the wallet after it."""

    outcome: str
    posted: int
    pending: int
    # where the transfer's entry is in the wallet's ledger (1: the oldest), if it has one
    position: int | None = None
    # the player's limit an "over_limit" step would have passed (wallet.lua says how)
    refused: str = ""

    @property
    def available(self) -> int:
        """What the wallet may still spend."""
        return self.posted - self.pending


def entry_head(entry: Transfer) -> str:
    """An entry's JSON up to its balance, which the script appends (and the brace)."""
    text = jsonio.dumps({key: value for key, value in entry.items() if key != "balance"})
    return text[:-1] + ',"balance":'


class WalletStore:
    """The Redis side of wallets and of the tables' ledgers and outboxes."""

    def __init__(self, client: RedisClient) -> None:
        """Use `client` (decode_responses=True), the tables' client."""
        self.client = client
        self._wallet = client.register_script(_WALLET)
        self._drop = client.register_script(_DROP_POINTER)
        self._limits = client.register_script(_LIMITS)

    def step(
        self,
        player: str,
        op: str,
        transfer_id: str,
        amount: int,
        fingerprint: str,
        entry: Transfer | None = None,
        extra: str = "0",
        limit: float = 0,
        flow: str = "",
    ) -> Step:
        """One wallet step (wallet.lua says which): its outcome and the wallet after it;
        `flow` is what the player's limits count of it, checked first for a deposit or
        a buy-in."""
        head = "" if entry is None else entry_head(entry)
        reply = self._wallet(
            keys=wallet_keys(player),
            args=[op, transfer_id, amount, fingerprint, head, extra, limit, flow],
        )
        outcome, posted, pending, position, refused = cast(list[str], reply)
        return Step(
            outcome, int(posted), int(pending), int(position) if position else None, refused
        )

    def flows(self, player: str, since: float) -> list[tuple[str, float]]:
        """The flows the player's limits count since `since`: (member, time), oldest first."""
        rows = self.client.zrangebyscore(wallet_keys(player)[4], since, "+inf", withscores=True)
        return [(str(member), float(at)) for member, at in cast(list[tuple[str, float]], rows)]

    def limits(self, player: str) -> tuple[int, str | None, str | None]:
        """The player's limits hash: its version, the limits document and the exclusion
        (JSON; None where there is none)."""
        raw = self.client.hmget(wallet_keys(player)[5], "version", "doc", "exclusion")
        version, doc, exclusion = cast(list[str | None], raw)
        return int(version or 0), doc, exclusion

    def fields(self, player: str, *names: str) -> list[str | None]:
        """Fields of the player's limits hash (None where absent)."""
        return cast(list[str | None], self.client.hmget(wallet_keys(player)[5], list(names)))

    def write_limits(self, player: str, version: int, fields: dict[str, str]) -> bool:
        """Write these fields of the limits hash if it is still at `version` (the one
        read); False if another change came first."""
        args: list[str | int] = [version]
        for name, value in fields.items():
            args += [name, value]
        return bool(self._limits(keys=[wallet_keys(player)[5]], args=args))

    def note_excluded(self, player: str, until: float | None) -> None:
        """List the player among those excluded, by when their exclusion ends."""
        self.client.zadd(EXCLUSIONS_KEY, {player: math.inf if until is None else until})

    def excluded_players(self, now: float, limit: int) -> list[str]:
        """Players whose time-out or self-exclusion runs at `now`, soonest to end first."""
        rows = self.client.zrangebyscore(EXCLUSIONS_KEY, f"({now!r}", "+inf", start=0, num=limit)
        return [str(member) for member in cast(list[str], rows)]

    def mark_topped(self, player: str, day: str) -> None:
        """Count `day`'s play-money top-up as given (a new player's grant is that day's)."""
        self.client.hset(wallet_keys(player)[0], "topped_day", day)

    def note_wallet(self, player: str, at: float) -> None:
        """List the wallet among all wallets (once; its first time kept)."""
        self.client.zadd(WALLETS_KEY, {player: at}, nx=True)

    def wallet(self, player: str) -> Sums:
        """posted, pending and issued of a wallet (zeros for a wallet never used)."""
        raw = cast(dict[str, str], self.client.hgetall(wallet_keys(player)[0]))
        return {
            "posted": int(raw.get("posted") or 0),
            "pending": int(raw.get("pending") or 0),
            "issued": int(raw.get("issued") or 0),
        }

    def entry_count(self, player: str) -> int:
        """How many entries the wallet's ledger holds."""
        return int(self.client.llen(wallet_keys(player)[1]))

    def entries(self, player: str, start: int, stop: int) -> list[Entry]:
        """Entries `start` to `stop` (0-based, inclusive), oldest first."""
        if stop < start:
            return []
        raw = cast(list[str], self.client.lrange(wallet_keys(player)[1], start, stop))
        return [jsonio.loads(item) for item in raw]

    def pending(self, player: str) -> dict[str, Held]:
        """The wallet's reservations, by transfer id."""
        raw = cast(dict[str, str], self.client.hgetall(wallet_keys(player)[3]))
        return {key: jsonio.loads(value) for key, value in raw.items()}

    def point(self, key: str, member: str, due: float) -> None:
        """Point a sweeper at `member` from `due` on (a later time already set is kept).

        The step pointed at must land before `due` (its script checks Redis's clock),
        so a sweeper that finds the pointer due finds every step it points at done.
        """
        self.client.zadd(key, {member: due}, gt=True)

    def claim_key(self, key_digest: str, fingerprint: str) -> bool:
        """Tie an operator's Idempotency-Key to one request (its fingerprint): True if it
        is this request's (now or already), False if another request holds it."""
        key = f"ledger:{{key:{key_digest[:4]}}}:{key_digest}"
        if self.client.set(key, fingerprint, nx=True):
            return True
        return self.client.get(key) == fingerprint

    def point_at(self, key: str, member: str, due: float) -> None:
        """Point a sweeper at `member`, a step of its own, from `due` on."""
        self.client.zadd(key, {member: due})

    def drop(self, key: str, member: str) -> None:
        """Take a pointer whose step is done out of its set."""
        self.client.zrem(key, member)

    def reservation(self, player: str, transfer_id: str) -> Held | None:
        """One of the wallet's reservations, None once it is posted or voided."""
        raw = self.client.hget(wallet_keys(player)[3], transfer_id)
        return None if raw is None else cast(Held, jsonio.loads(cast(str, raw)))

    def due(self, key: str, now: float, limit: int) -> list[tuple[str, float]]:
        """Members of a pointer set due by `now`, with their scores."""
        rows = self.client.zrangebyscore(key, "-inf", now, start=0, num=limit, withscores=True)
        pairs = cast(list[tuple[str, float]], rows)
        return [(str(member), float(score)) for member, score in pairs]

    def repoint(self, key: str, member: str, seen: float, then: float | None) -> None:
        """Move a pointer read at score `seen` to `then` (None: drop it), unless it moved."""
        self._drop(keys=[key], args=[member, repr(seen), "" if then is None else repr(then)])

    def server_time(self) -> float:
        """Redis's clock (the one the scripts check due times against)."""
        seconds, micros = self.client.time()
        return seconds + micros / 1e6

    def wallets(self, after: tuple[float, str] | None, count: int) -> list[tuple[str, float]]:
        """Up to `count` wallets by creation, after the (time, player) cursor `after`."""
        low = "-inf" if after is None else repr(after[0])
        rows = cast(
            list[tuple[str, float]],
            self.client.zrangebyscore(
                WALLETS_KEY, low, "+inf", start=0, num=count + 64, withscores=True
            ),
        )
        found = []
        for member, score in rows:
            if after is not None and (float(score), str(member)) <= after:
                continue
            found.append((str(member), float(score)))
        return found[:count]

    def table_ledger(self, table_id: str) -> dict[str, Transfer]:
        """A table's transfers, by id."""
        return self._transfers(table_ledger_key(table_id))

    def table_transfer(self, table_id: str, transfer_id: str) -> Transfer | None:
        """The transfer as the table's ledger holds it (its commit accepted it), or None."""
        raw = self.client.hget(table_ledger_key(table_id), transfer_id)
        return None if raw is None else cast(Transfer, jsonio.loads(cast(str, raw)))

    def outbox(self, table_id: str) -> dict[str, Transfer]:
        """A table's cash-outs waiting for their relay, by id."""
        return self._transfers(table_outbox_key(table_id))

    def _transfers(self, key: str) -> dict[str, Transfer]:
        """The transfers a table's ledger or outbox holds, by id."""
        raw = cast(dict[str, str], self.client.hgetall(key))
        return {transfer_id: jsonio.loads(value) for transfer_id, value in raw.items()}

    def relayed(self, table_id: str, transfer_ids: Iterable[str]) -> None:
        """Take relayed cash-outs out of the table's outbox."""
        ids = list(transfer_ids)
        if ids:
            self.client.hdel(table_outbox_key(table_id), *ids)

    def scan(self, pattern: str) -> list[str]:
        """Every key matching `pattern` (every master of a cluster): for the audit only."""
        return sorted({str(key) for key in self.client.scan_iter(match=pattern, count=1000)})
