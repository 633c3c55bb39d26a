"""The lobby's index in Redis: the tables one may join, a sorted set per game variant.

Each variant (a game with its cards, `guts-2`, `guts-3`, `paiute`) is a shard of its
own, on its own Redis Cluster slot (its name is the hash tag):

    lobby:{guts-3}        sorted set, every score 0, ordered by its members' text:
                          "<sort key>.<ante>.<free seats>.<table id>" (`LobbyEntry`)
    lobby:{guts-3}:rows   hash: table id -> its member, to find the member to replace

A table is listed once somebody sits at it and until it is closed. What a table's member
is, the service decides (`api.service.lobby`); each commit that changes it writes it
(`commit.lua`), and the table hash keeps it in its `listing` field (`LobbyEntry.place`),
the truth the clock's sweep repairs the index from. On a single Redis the commit script
writes the shard too; on a cluster, where the shard sits on another slot, the store
writes it right after the commit when it changed.

A page is one script a shard (`lobby_page.lua`): it walks the members after a cursor,
keeps those that pass the ante and free-seat filters, and stops at the page's size or
after a bounded number of members, saying where it stopped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import redis
import redis.cluster

RedisClient = redis.Redis | redis.cluster.RedisCluster

# every shard there is: a game and, for Guts, its cards
SHARDS = ("guts-2", "guts-3", "paiute")
# the members a page's script walks at most on one shard before it answers
PAGE_BUDGET = 2000
# what a member looks like: class and fullness, ante, free seats, table id
MEMBER = re.compile(r"[01][0-9]{2}\.[0-9]{7}\.[0-9]{2}\.[0-9a-f]{1,64}")

_PAGE = (Path(__file__).parent / "lua" / "lobby_page.lua").read_text(encoding="utf-8")
_WRITE = (Path(__file__).parent / "lua" / "lobby_write.lua").read_text(encoding="utf-8")


def member_table(member: str) -> str:
    """The table a shard's member names (its last part)."""
    return member.rsplit(".", 1)[-1]


def shard_key(shard: str) -> str:
    """The sorted set of a shard's listed tables."""
    return f"lobby:{{{shard}}}"


def rows_key(shard: str) -> str:
    """The hash of a shard's members by table id."""
    return f"lobby:{{{shard}}}:rows"


@dataclass(frozen=True)
class LobbyEntry:
    """A table's place in the lobby: its shard and member ("" when it is not listed)."""

    shard: str
    member: str

    @property
    def place(self) -> str:
        """The entry as a table's hash keeps it (its `listing` field): "<shard>:<member>"."""
        return f"{self.shard}:{self.member}"

    @classmethod
    def of_place(cls, place: str) -> LobbyEntry:
        """The entry a table's `listing` field holds."""
        shard, _, member = place.partition(":")
        return cls(shard, member)

    @property
    def table_id(self) -> str:
        """The table the member names."""
        return member_table(self.member)


@dataclass(frozen=True)
class ShardPage:
    """What a shard's page script found: the members that passed, where it stopped
    (the last member it walked), and whether the shard has nothing after that."""

    members: list[str]
    last: str
    done: bool


class LobbyIndex:
    """The lobby's shards in Redis: pages, writes and repairs."""

    def __init__(self, client: RedisClient) -> None:
        """Use `client` (decode_responses=True)."""
        self.client = client
        self._page = client.register_script(_PAGE)
        self._write = client.register_script(_WRITE)

    def page(
        self,
        shard: str,
        after: str,
        limit: int,
        ante: tuple[int, int],
        free: int,
        budget: int = PAGE_BUDGET,
    ) -> ShardPage:
        """Up to `limit` members of `shard` after `after` ("" from the start) whose ante
        is within `ante` and that have at least `free` seats free."""
        reply = cast(
            list[Any],
            self._page(
                keys=[shard_key(shard)], args=[after, limit, ante[0], ante[1], free, budget]
            ),
        )
        return ShardPage([str(member) for member in reply[0]], str(reply[1]), bool(reply[2]))

    def write(self, table_id: str, entry: LobbyEntry) -> None:
        """Put the table's member in its shard (or take it out, for "")."""
        self._write(
            keys=[shard_key(entry.shard), rows_key(entry.shard)], args=[table_id, entry.member]
        )

    def forget(self, table_id: str) -> None:
        """Take a table out of every shard (a table that no longer exists)."""
        for shard in SHARDS:
            self.write(table_id, LobbyEntry(shard, ""))

    def listed(self, shard: str) -> int:
        """How many tables a shard lists."""
        return int(self.client.zcard(shard_key(shard)))

    def scan(self, shard: str, after: str, count: int) -> list[str]:
        """Up to `count` members of a shard after `after`: a repair walks them."""
        start = "-" if not after else f"({after}"
        return [
            str(member)
            for member in cast(
                list[str], self.client.zrangebylex(shard_key(shard), start, "+", 0, count)
            )
        ]
