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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, cast

from gateway import jsonio
from gateway.adapters.store import RedisClient, lua_script

_WALLET = lua_script("wallet.lua")
_DROP_POINTER = lua_script("drop_pointer.lua")

WALLETS_KEY = "ledger:wallets"
PENDING_KEY = "ledger:pending"
OUTBOX_KEY = "ledger:outbox"
HOUSE_WALLET = "house"


def _tag(player: str) -> str:
    return "house:{ledger}" if player == HOUSE_WALLET else f"player:{{{player}}}"


def wallet_keys(player: str) -> list[str]:
    """The four keys of a wallet (the house's too), in the order wallet.lua takes them."""
    tag = _tag(player)
    return [f"{tag}:wallet", f"{tag}:ledger", f"{tag}:transfers", f"{tag}:pending"]


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

    @property
    def available(self) -> int:
        """What the wallet may still spend."""
        return self.posted - self.pending


def entry_head(entry: Mapping[str, Any]) -> str:
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

    def step(
        self,
        player: str,
        op: str,
        transfer_id: str,
        amount: int,
        fingerprint: str,
        entry: Mapping[str, Any] | None = None,
        extra: str = "0",
        limit: float = 0,
    ) -> Step:
        """One wallet step (wallet.lua says which): its outcome and the wallet after it."""
        head = "" if entry is None else entry_head(entry)
        reply = self._wallet(
            keys=wallet_keys(player),
            args=[op, transfer_id, amount, fingerprint, head, extra, limit],
        )
        outcome, posted, pending, position = cast(list[str], reply)
        return Step(outcome, int(posted), int(pending), int(position) if position else None)

    def mark_topped(self, player: str, day: str) -> None:
        """Count `day`'s play-money top-up as given (a new player's grant is that day's)."""
        self.client.hset(wallet_keys(player)[0], "topped_day", day)

    def note_wallet(self, player: str, at: float) -> None:
        """List the wallet among all wallets (once; its first time kept)."""
        self.client.zadd(WALLETS_KEY, {player: at}, nx=True)

    def wallet(self, player: str) -> dict[str, int]:
        """posted, pending and issued of a wallet (zeros for a wallet never used)."""
        raw = cast(dict[str, str], self.client.hgetall(wallet_keys(player)[0]))
        return {name: int(raw.get(name) or 0) for name in ("posted", "pending", "issued")}

    def entry_count(self, player: str) -> int:
        """How many entries the wallet's ledger holds."""
        return int(self.client.llen(wallet_keys(player)[1]))

    def entries(self, player: str, start: int, stop: int) -> list[dict[str, Any]]:
        """Entries `start` to `stop` (0-based, inclusive), oldest first."""
        if stop < start:
            return []
        raw = cast(list[str], self.client.lrange(wallet_keys(player)[1], start, stop))
        return [dict(jsonio.loads(item)) for item in raw]

    def pending(self, player: str) -> dict[str, dict[str, Any]]:
        """The wallet's reservations, by transfer id."""
        raw = cast(dict[str, str], self.client.hgetall(wallet_keys(player)[3]))
        return {key: dict(jsonio.loads(value)) for key, value in raw.items()}

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

    def reservation(self, player: str, transfer_id: str) -> dict[str, Any] | None:
        """One of the wallet's reservations, None once it is posted or voided."""
        raw = self.client.hget(wallet_keys(player)[3], transfer_id)
        return None if raw is None else dict(jsonio.loads(cast(str, raw)))

    def due(self, key: str, now: float, limit: int) -> list[tuple[str, float]]:
        """Members of a pointer set due by `now`, with their scores."""
        rows = self.client.zrangebyscore(key, "-inf", now, start=0, num=limit, withscores=True)
        return [(str(member), float(score)) for member, score in cast(list[Any], rows)]

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
            list[Any],
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

    def table_ledger(self, table_id: str) -> dict[str, dict[str, Any]]:
        """A table's transfers, by id."""
        raw = cast(dict[str, str], self.client.hgetall(table_ledger_key(table_id)))
        return {key: dict(jsonio.loads(value)) for key, value in raw.items()}

    def table_transfer(self, table_id: str, transfer_id: str) -> dict[str, Any] | None:
        """The transfer as the table's ledger holds it (its commit accepted it), or None."""
        raw = self.client.hget(table_ledger_key(table_id), transfer_id)
        return None if raw is None else dict(jsonio.loads(cast(str, raw)))

    def outbox(self, table_id: str) -> dict[str, dict[str, Any]]:
        """A table's cash-outs waiting for their relay, by id."""
        raw = cast(dict[str, str], self.client.hgetall(table_outbox_key(table_id)))
        return {key: dict(jsonio.loads(value)) for key, value in raw.items()}

    def relayed(self, table_id: str, transfer_ids: Iterable[str]) -> None:
        """Take relayed cash-outs out of the table's outbox."""
        ids = list(transfer_ids)
        if ids:
            self.client.hdel(table_outbox_key(table_id), *ids)

    def scan(self, pattern: str) -> list[str]:
        """Every key matching `pattern` (every master of a cluster): for the audit only."""
        return sorted({str(key) for key in self.client.scan_iter(match=pattern, count=1000)})
