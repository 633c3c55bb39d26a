"""The lobby: the tables one may join, filtered and in the order to join them.

A table is listed once somebody sits at it, until it is closed: a table nobody sits at
is found by its creator (`mine`), not by everyone. The order puts first the tables
with seated players and a free seat, the fullest first (where a deal starts soonest:
a deal needs `min_players`), then the full ones. Each game variant (`guts-2`,
`guts-3`, `paiute`) is a shard of the index (`api.adapters.lobby`), whose member for a
table this module computes and every commit keeps up to date; a page reads the shards
its filters name and merges them. What a page shows of each table is read from the
table itself, so an index entry a moment behind its table never shows a wrong table.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from api.adapters.lobby import MEMBER, SHARDS, LobbyEntry, LobbyIndex, member_table
from api.adapters.store import TableRecord, TableStore
from api.errors import ApiError
from api.games.options import MAX_ANTE
from api.games.state import TableState
from api.service.decks import TABLE_ID

# at most this many seats at a table (two digits of a member)
MAX_SEATS = 99
# the most seats a table of either game has (Guts' max_players)
MAX_PLAYERS = 10


@dataclass(frozen=True)
class Filters:
    """What a lobby page is filtered on: a game, its cards, an ante range, free seats."""

    game: str | None = None
    cards: int | None = None
    ante_min: int = 1
    ante_max: int = MAX_ANTE
    free_seats: int = 0

    def shards(self) -> list[str]:
        """The shards a page with these filters reads."""
        return [shard for shard in SHARDS if self._names(shard)]

    def _names(self, shard: str) -> bool:
        game, _, cards = shard.partition("-")
        if self.game is not None and self.game != game:
            return False
        return self.cards is None or cards == str(self.cards)

    def admits(self, state: TableState) -> bool:
        """Whether a table, as it is now, belongs on a page with these filters."""
        seated = len(state["seats"])
        free = state["options"]["max_players"] - seated
        return (
            self._names(shard_of(state))
            and self.ante_min <= state["options"]["ante"] <= self.ante_max
            and seated > 0
            and free >= self.free_seats
            and not state.get("closed_at")
            and "close_requested" not in state
        )


def shard_of(state: TableState) -> str:
    """The lobby shard of a table: its game and, for Guts, its cards."""
    if state["game"] == "guts":
        return f"guts-{state['options']['cards']}"
    return str(state["game"])


def entry_of(state: TableState, closing: bool = False) -> LobbyEntry:
    """A table's place in the lobby: none when nobody sits at it or it closes (or is
    asked to close: it leaves the lobby at once).

    The member sorts the tables to join first (seated players and a free seat), the
    fullest first, then the full ones; it carries the ante and the free seats that a
    page filters on, and the table's id.
    """
    seated = len(state["seats"])
    if closing or seated == 0 or state.get("closed_at") or "close_requested" in state:
        return LobbyEntry(shard_of(state), "")
    free = max(state["options"]["max_players"] - seated, 0)
    joinable = "0" if free > 0 else "1"
    fullness = MAX_SEATS - min(seated, MAX_SEATS)
    ante = state["options"]["ante"]
    member = f"{joinable}{fullness:02d}.{ante:07d}.{min(free, MAX_SEATS):02d}.{state['table_id']}"
    return LobbyEntry(shard_of(state), member)


def summary(table_id: str, state: TableState, created_at: float) -> dict[str, object]:
    """A table as a lobby page shows it."""
    maximum = state["options"]["max_players"]
    return {
        "id": table_id,
        "name": state.get("name"),
        "game": state["game"],
        "options": state["options"],
        "seats_taken": len(state["seats"]),
        "computer_players": sum("computer" in seat for seat in state["seats"].values()),
        "seats_free": maximum - len(state["seats"]),
        "max_players": maximum,
        "phase": state["phase"],
        "created_at": created_at,
    }


def invalid_cursor() -> ApiError:
    """400 invalid_cursor: a lobby cursor this service did not give out."""
    return ApiError(
        400,
        "invalid_cursor",
        "Invalid cursor",
        "The cursor is not one this service gave out.",
        field="cursor",
    )


class LobbyQueries:
    """Pages of the lobby, read from the index in `store` and the tables themselves."""

    def __init__(self, store: TableStore) -> None:
        """Read the lobby from `store`."""
        self.store = store
        self.index: LobbyIndex = store.lobby

    def page(self, filters: Filters, limit: int, cursor: str | None) -> dict[str, object]:
        """A page of the tables to join that pass `filters`, after `cursor`."""
        if cursor is not None and not MEMBER.fullmatch(cursor):
            return self.page_by_creation(filters, limit, cursor)
        members, next_cursor = self._members(filters, limit, cursor or "")
        table_ids = [member_table(member) for member in members]
        tables: list[dict[str, object]] = []
        for table_id, record in zip(table_ids, self.store.load_many(table_ids), strict=True):
            if record is None or record.closed:
                self.index.forget(table_id)  # gone since: the index catches up
                continue
            if filters.admits(record.state):
                tables.append(summary(table_id, record.state, record.state["created_at"]))
        return _page(tables, next_cursor)

    def _members(self, filters: Filters, limit: int, after: str) -> tuple[list[str], str | None]:
        """Up to `limit` members after `after` over the filters' shards, merged in order,
        and the cursor of the next page (None: no more).

        A shard whose script stopped before its end says how far it walked: the page
        holds nothing past the nearest such point, which is then the next cursor.
        """
        ante = (filters.ante_min, filters.ante_max)
        pages = [
            self.index.page(shard, after, limit, ante, filters.free_seats)
            for shard in filters.shards()
        ]
        bound = min((page.last for page in pages if not page.done), default=None)
        merged = sorted(
            member for page in pages for member in page.members if bound is None or member <= bound
        )
        taken = merged[:limit]
        if len(taken) == limit and (bound is not None or len(merged) > limit):
            return taken, taken[-1]
        return taken, bound

    def page_by_creation(self, filters: Filters, limit: int, cursor: str) -> dict[str, object]:
        """A page in the lobby's former order, newest first, after a cursor it gave out
        ("<created_at>:<table id>", "<created_at>:" or "<created_at>"): a client paging
        through it goes on to its end; 400 invalid_cursor for a cursor of neither order."""
        try:
            score, _colon, last = cursor.partition(":")
            after = (float(score), last or None)
            if not math.isfinite(after[0]) or (last and not TABLE_ID.fullmatch(last)):
                raise ValueError(cursor)
        except ValueError:
            raise invalid_cursor() from None
        rows = self.store.lobby_page(after, limit)
        records = self.store.load_many([table_id for table_id, _ in rows])
        tables = [
            summary(table_id, record.state, created)
            for (table_id, created), record in zip(rows, records, strict=True)
            if record is not None and not record.closed and filters.admits(record.state)
        ]
        next_cursor = f"{rows[-1][1]!r}:{rows[-1][0]}" if len(rows) == limit else None
        return _page(tables, next_cursor)

    def owned(self, filters: Filters, table_ids: Sequence[str]) -> dict[str, object]:
        """The open tables of `table_ids` (a player's own), newest first, empty ones too."""
        records = self.store.load_many(list(table_ids))
        found: list[TableRecord] = [
            record
            for record in records
            if record is not None
            and not record.closed
            and filters.ante_min <= record.state["options"]["ante"] <= filters.ante_max
            and shard_of(record.state) in filters.shards()
        ]
        found.sort(key=lambda record: (-record.state["created_at"], record.table_id))
        tables = [
            summary(record.table_id, record.state, record.state["created_at"]) for record in found
        ]
        return _page(tables, None)

    def repair(self, table_ids: Sequence[str]) -> int:
        """Put each of `table_ids` where its last commit placed it in the lobby (a table
        no commit placed yet, or gone, where its state says); how many entries changed.

        One round trip whatever the number of tables (the tables' `listing` fields and
        the shards' rows), a write per fix, and for tables no commit placed yet (stored
        before the lobby had shards) a read and a write of their place, once.
        """
        places, listed = self.store.lobby_places(table_ids)
        unplaced = [
            table_id for table_id, place in zip(table_ids, places, strict=True) if not place
        ]
        records = dict(zip(unplaced, self.store.load_many(unplaced), strict=True))
        computed = {
            table_id: entry_of(record.state, record.closed) if record else LobbyEntry("", "")
            for table_id, record in records.items()
        }
        # recorded, so that the next pass need not read these tables again
        self.store.place_tables(
            {table_id: computed[table_id].place for table_id, record in records.items() if record}
        )
        fixed = 0
        for table_id, place in zip(table_ids, places, strict=True):
            entry = LobbyEntry.of_place(place) if place else computed[table_id]
            for shard in SHARDS:
                wanted = entry.member if shard == entry.shard else ""
                if (listed[shard].get(table_id) or "") != wanted:
                    self.index.write(table_id, LobbyEntry(shard, wanted))
                    fixed += 1
        return fixed


def _page(tables: list[dict[str, object]], following: str | None) -> dict[str, object]:
    """A lobby page: its tables, and `next`, the cursor of the page after it, as every
    page of the API names it (`next_cursor`, its former name, is kept beside it for a
    release, deprecated)."""
    return {"tables": tables, "next": following, "next_cursor": following}
