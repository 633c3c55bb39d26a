"""Players' own deals in Redis, on each player's slot (the player id is the hash tag):

    player:{<id>}:deals    sorted set: "<table id>:<deal>" by when the deal ended, the
                           deals the player played (the newest `INDEX_MAX` kept)
    player:{<id>}:copies   list: JSON copies of the deals (their histories and events,
                           with the player's ids there, read as the player saw them by
                           `api.service.recall.seen`), newest first, the newest few kept
                           (`LTRIM`) whatever the tables' own retention; each names its
                           deal ("recall_of")

A player's keys sit on another slot than the table's, so the commit that ends a deal
writes its notes to the table's recall outbox, on the table's slot, atomically with the
deal (`table:{id}:recall`, a hash: "<player> <table id>:<deal>" -> note JSON); they are
delivered to the players right after the commit, and by a sweeper when the process
that committed died first (`OUTBOX_KEY` points it at the table before the commit).
Delivering a note twice changes nothing (`lua/recall_keep.lua`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict, cast

from api import jsonio
from api.adapters.store import RedisClient, lua_script

# the deals a player's index lists at most
INDEX_MAX = 1000
# sorted set: table id by when a sweeper should deliver what its recall outbox holds
OUTBOX_KEY = "recall:outbox"

_KEEP = lua_script("recall_keep.lua")
_DROP_POINTER = lua_script("drop_pointer.lua")


class RecallNote(TypedDict):
    """A deal to note for one of its players: its member, when it ended, their copy, and
    when the sweeper was pointed at its table for it."""

    player: str
    member: str
    at: float
    copy: str
    due: float


def deals_key(player: str) -> str:
    """The index of a player's deals."""
    return f"player:{{{player}}}:deals"


def copies_key(player: str) -> str:
    """A player's kept copies of their newest deals."""
    return f"player:{{{player}}}:copies"


def outbox_key(table_id: str) -> str:
    """A table's recall outbox: the notes its commits wrote, not delivered yet."""
    return f"table:{{{table_id}}}:recall"


def note_field(note: RecallNote) -> str:
    """A note's field in its table's outbox."""
    return f"{note['player']} {note['member']}"


class RecallStore:
    """The players' deal indexes and kept copies, and the tables' recall outboxes."""

    def __init__(self, client: RedisClient) -> None:
        """Use `client` (decode_responses=True), the tables' client."""
        self.client = client
        self._drop = client.register_script(_DROP_POINTER)

    def deliver(
        self, table_id: str, notes: Mapping[str, RecallNote], copies: int, unpoint: bool = False
    ) -> None:
        """List each note's deal for its player and keep its copy among the player's
        newest `copies`, then take the notes out of the table's outbox: one pipeline.
        With `unpoint`, the sweeper's pointer at the table goes too, unless a later
        commit pointed at it again."""
        if not notes:
            return
        pipe = self.client.pipeline(transaction=False)
        for note in notes.values():
            player = note["player"]
            pipe.execute_command(
                "EVAL",
                _KEEP,
                2,
                deals_key(player),
                copies_key(player),
                note["member"],
                repr(note["at"]),
                note["copy"],
                copies,
                INDEX_MAX,
            )
        pipe.hdel(outbox_key(table_id), *notes)
        if unpoint:
            due = max(note["due"] for note in notes.values())
            pipe.execute_command("EVAL", _DROP_POINTER, 1, OUTBOX_KEY, table_id, repr(due), "")
        pipe.execute()

    def pending(self, table_id: str) -> dict[str, RecallNote]:
        """The notes a table's outbox holds, by field."""
        raw = cast(dict[str, str], self.client.hgetall(outbox_key(table_id)))
        return {name: cast(RecallNote, jsonio.loads(value)) for name, value in raw.items()}

    def due(self, now: float, limit: int) -> list[tuple[str, float]]:
        """Tables whose outbox a sweeper should look at by `now`, with their scores."""
        rows = self.client.zrangebyscore(
            OUTBOX_KEY, "-inf", now, start=0, num=limit, withscores=True
        )
        return [
            (str(member), float(score)) for member, score in cast(list[tuple[str, float]], rows)
        ]

    def looked(self, table_id: str, seen: float) -> None:
        """Drop the table's pointer read at `seen`, unless a commit pointed at it since."""
        self._drop(keys=[OUTBOX_KEY], args=[table_id, repr(seen), ""])

    def page(self, player: str, before: float | None, limit: int) -> list[tuple[str, float]]:
        """Up to `limit` deals, newest first, that ended before `before` (None: any)."""
        high = "+inf" if before is None else f"({before!r}"
        rows = self.client.zrevrangebyscore(
            deals_key(player), high, "-inf", start=0, num=limit, withscores=True
        )
        return [(str(member), float(at)) for member, at in cast(list[tuple[str, float]], rows)]

    def copies(self, player: str) -> list[dict[str, object]]:
        """The player's kept copies, newest first."""
        raw = cast(list[str], self.client.lrange(copies_key(player), 0, -1))
        return [jsonio.loads(item) for item in raw]
