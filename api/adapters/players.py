"""Players in Redis: their records, the digests of their keys, their quotas, stream tickets.

Every key of a player carries the player id as a hash tag, so a player lives on one
Redis Cluster slot; a key's digest is looked up under a tag of its own:

    player:{<id>}            hash: name, created_at, origin (open | operator | jwt), subject
    player:{<id>}:keys       hash: key id -> JSON {digest, created_at}
    player:{<id>}:tables     set: ids of the open tables the player created (the quota)
    player:{<id>}:seats      set: ids of the tables where the player took a seat
    player:{<id>}:streams    sorted set: the player's event streams, by when their lease ends
    address:{<address>}:streams   the same, for the streams of one client address
    credential:{<sha256>}    JSON {player, key_id}: what a player key's digest stands for
    table:{<id>}:ticket:<sha256>   JSON, expiring: a stream ticket, on its table's slot

A player key and a stream ticket are stored only as digests. A key is revoked by
deleting its digest first, then its entry: a revocation cut short leaves an entry
without a digest (listed, useless), never a digest that still works.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Literal, NotRequired, TypedDict, cast

from api import jsonio
from api.adapters.store import RedisClient, lua_script

_RESERVE = lua_script("reserve.lua")
_LEASE = lua_script("lease.lua")


class PlayerRecord(TypedDict):
    """A player's record (`player:{<id>}`): a Redis hash, so every value is text."""

    name: str
    created_at: str  # Unix seconds, as repr() writes a float
    origin: NotRequired[str]  # open, operator or jwt (read as open when missing)
    subject: NotRequired[str]  # an identity provider's player: its issuer and subject, hashed


class KeyEntry(TypedDict):
    """One of a player's keys: its digest and when it was made."""

    digest: str
    created_at: float


class KeyOwner(TypedDict):
    """What a player key's digest stands for."""

    player: str
    key_id: str


class PlayerTicket(TypedDict):
    """A stream ticket of a player."""

    kind: Literal["player"]
    player: str


class SeatTicket(TypedDict):
    """A stream ticket of a seat: its number and the table's player id for it."""

    kind: Literal["seat"]
    seat: list[int]


Ticket = PlayerTicket | SeatTicket


def digest(secret: str) -> str:
    """What is stored of a player key or a stream ticket: its SHA-256."""
    return hashlib.sha256(secret.encode("utf-8", "surrogateescape")).hexdigest()


def player_key(player: str) -> str:
    """The hash of a player's record."""
    return f"player:{{{player}}}"


def keys_key(player: str) -> str:
    """The hash of a player's keys (their digests)."""
    return f"player:{{{player}}}:keys"


def tables_key(player: str) -> str:
    """The set of open tables a player created."""
    return f"player:{{{player}}}:tables"


def seats_key(player: str) -> str:
    """The set of tables where a player took a seat."""
    return f"player:{{{player}}}:seats"


def streams_key(player: str) -> str:
    """The sorted set of a player's open event streams."""
    return f"player:{{{player}}}:streams"


def address_streams_key(address: str) -> str:
    """The sorted set of the waiting requests (long polls and event streams) one client
    address holds."""
    return f"address:{{{address}}}:streams"


def waiting_key(holder: str) -> str:
    """The sorted set of the waiting requests one credential holds (`holder`: a player's,
    a seat token's digest, a ticket's seat)."""
    return f"waiting:{{{holder}}}"


def credential_key(key_digest: str) -> str:
    """What a player key's digest stands for."""
    return f"credential:{{{key_digest}}}"


def ticket_key(table_id: str, ticket_digest: str) -> str:
    """A stream ticket for a table, on the table's slot."""
    return f"table:{{{table_id}}}:ticket:{ticket_digest}"


class PlayerStore:
    """The Redis side of players; every method is one or a few round trips."""

    def __init__(self, client: RedisClient) -> None:
        """Use `client` (decode_responses=True), the tables' client."""
        self.client = client
        self._reserve = client.register_script(_RESERVE)
        self._lease = client.register_script(_LEASE)

    def create(self, player: str, record: PlayerRecord) -> bool:
        """Write a new player's record; False if the id is taken (nothing written)."""
        created = self.client.hsetnx(player_key(player), "created_at", record["created_at"])
        if not created:
            return False
        # every value is text already: str() only says so
        self.client.hset(
            player_key(player), mapping={name: str(value) for name, value in record.items()}
        )
        return True

    def record(self, player: str) -> PlayerRecord | None:
        """The player's record, None if there is no such player."""
        found = cast(PlayerRecord, self.client.hgetall(player_key(player)))
        return found or None

    def add_key(self, player: str, key_id: str, key_digest: str, created_at: float) -> None:
        """Make a key work for the player: its entry first, then its digest."""
        entry: KeyEntry = {"digest": key_digest, "created_at": created_at}
        owner: KeyOwner = {"player": player, "key_id": key_id}
        self.client.hset(keys_key(player), key_id, jsonio.dumps(entry))
        self.client.set(credential_key(key_digest), jsonio.dumps(owner))

    def keys(self, player: str) -> dict[str, KeyEntry]:
        """The player's keys by key id: each with its digest and creation time."""
        raw = cast(dict[str, str], self.client.hgetall(keys_key(player)))
        return {key_id: jsonio.loads(value) for key_id, value in raw.items()}

    def revoke_key(self, player: str, key_id: str) -> bool:
        """Stop a key from working: its digest first, then its entry; False if unknown."""
        raw = self.client.hget(keys_key(player), key_id)
        if raw is None:
            return False
        entry: KeyEntry = jsonio.loads(raw)
        self.client.delete(credential_key(entry["digest"]))
        self.client.hdel(keys_key(player), key_id)
        return True

    def key_owner(self, key_digest: str) -> KeyOwner | None:
        """{player, key_id} of the key with this digest, None for an unknown key."""
        raw = self.client.get(credential_key(key_digest))
        return None if raw is None else cast(KeyOwner, jsonio.loads(raw))

    def reserve_table(self, player: str, table_id: str, limit: int) -> bool:
        """Count a new table against the player's quota; False when it is full."""
        return bool(self._reserve(keys=[tables_key(player)], args=[limit, table_id]))

    def created_tables(self, player: str) -> list[str]:
        """The tables counted against the player's quota."""
        return sorted(cast(set[str], self.client.smembers(tables_key(player))))

    def release_tables(self, player: str, table_ids: Sequence[str]) -> None:
        """Stop counting these tables (closed, or never created)."""
        if table_ids:
            self.client.srem(tables_key(player), *table_ids)

    def note_seat(self, player: str, table_id: str) -> bool:
        """Remember that the player sat at this table (before the seat is committed);
        False if it was remembered already."""
        return bool(self.client.sadd(seats_key(player), table_id))

    def seat_tables(self, player: str) -> list[str]:
        """The tables where the player may hold a seat."""
        return sorted(cast(set[str], self.client.smembers(seats_key(player))))

    def forget_seats(self, player: str, table_ids: Sequence[str]) -> None:
        """Stop listing these tables among the player's seats."""
        if table_ids:
            self.client.srem(seats_key(player), *table_ids)

    def lease_stream(self, player: str, stream: str, limit: int, seconds: float) -> bool:
        """Hold one of the player's `limit` streams for up to `seconds`; False when all are held."""
        return self.lease(streams_key(player), stream, limit, seconds)

    def lease(self, key: str, stream: str, limit: int, seconds: float) -> bool:
        """Hold one of `limit` streams counted in `key` for up to `seconds`; False when all are."""
        ms = max(1, round(seconds * 1000))
        return bool(self._lease(keys=[key], args=[limit, stream, ms]))

    def end_stream(self, player: str, stream: str) -> None:
        """Give a stream's lease back."""
        self.client.zrem(streams_key(player), stream)

    def end_lease(self, key: str, stream: str) -> None:
        """Give a lease counted in `key` back."""
        self.client.zrem(key, stream)

    def put_ticket(self, table_id: str, ticket_digest: str, value: Ticket, ttl: int) -> None:
        """Keep a stream ticket for `ttl` seconds."""
        self.client.set(ticket_key(table_id, ticket_digest), jsonio.dumps(value), ex=ttl)

    def take_ticket(self, table_id: str, ticket_digest: str) -> Ticket | None:
        """The ticket, deleted in the same command (a ticket opens one stream), or None."""
        raw = self.client.getdel(ticket_key(table_id, ticket_digest))
        return None if raw is None else cast(Ticket, jsonio.loads(cast(str, raw)))
