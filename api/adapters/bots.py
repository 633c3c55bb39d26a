"""The computer players' records and the runners' leases on them, in Redis.

    bots                  hash: bot id -> JSON `BotRecord` (its table, seat, token, strategy)
    bot:{<id>}:lease      the runner playing the bot: its token, expiring unless renewed

A runner (`python -m api.bots`) plays a bot only while it holds the bot's lease, renewed
each round; a runner that dies lets its leases run out, and another takes them over.
Each key is its own (single-slot) command, so the same code serves a Redis Cluster.
"""

from __future__ import annotations

import secrets
from typing import TypedDict, cast

from api import jsonio
from api.adapters.store import RedisClient, lua_script

BOTS_KEY = "bots"
_LEASE = lua_script("bot_lease.lua")


class BotRecord(TypedDict):
    """A seated computer player: where it sits, its seat token and how it plays."""

    bot_id: str
    table_id: str
    game: str
    seat: int
    token: str  # the seat's credential, as a player's client holds it
    strategy: str
    seated_at: float


def lease_key(bot_id: str) -> str:
    """The lease of the runner playing a bot."""
    return f"bot:{{{bot_id}}}:lease"


def new_bot_id() -> str:
    """A new bot's id."""
    return secrets.token_hex(8)


class BotStore:
    """Bots' records and leases."""

    def __init__(self, client: RedisClient) -> None:
        """Use `client` (decode_responses=True), the tables' client."""
        self.client = client
        self._lease = client.register_script(_LEASE)

    def add(self, record: BotRecord) -> None:
        """Keep a newly seated bot for the runners."""
        self.client.hset(BOTS_KEY, record["bot_id"], jsonio.dumps(record))

    def remove(self, bot_id: str) -> None:
        """Forget a bot whose seat is gone."""
        self.client.hdel(BOTS_KEY, bot_id)

    def all(self) -> list[BotRecord]:
        """Every seated bot."""
        raw = cast(dict[str, str], self.client.hgetall(BOTS_KEY))
        return [cast(BotRecord, jsonio.loads(value)) for value in raw.values()]

    def at_table(self, table_id: str) -> list[BotRecord]:
        """The bots seated at one table."""
        return [record for record in self.all() if record["table_id"] == table_id]

    def take(self, bot_id: str, token: str, seconds: float) -> bool:
        """Take a bot's lease for `seconds` unless another runner holds it."""
        return bool(self.client.set(lease_key(bot_id), token, nx=True, px=int(seconds * 1000)))

    def renew(self, bot_id: str, token: str, seconds: float) -> bool:
        """Extend a lease this runner holds; False if it ran out (another may hold it)."""
        args: list[str | int] = ["renew", token, int(seconds * 1000)]
        return bool(self._lease(keys=[lease_key(bot_id)], args=args))

    def release(self, bot_id: str, token: str) -> None:
        """Give a held lease back."""
        self._lease(keys=[lease_key(bot_id)], args=["release", token, 0])
