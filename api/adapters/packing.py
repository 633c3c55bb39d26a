"""The packer's side of the tables in Redis (`api.service.packing`): the tables whose
finished deals wait to be packed, what it reads of them and the packs it writes.

    tables:packing  sorted set: table id by when it has a finished deal to pack (the
                    commit that ends a deal lists it: `api.adapters.store`), claimed
                    as the clock claims deadlines

A table's keys and what they hold are `api.adapters.store`'s; a pack is one script on
the table's slot (`lua/pack.lua`), written only if nothing changed the table's packing
since the packer read it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from api.adapters import store as tables
from api.adapters.store import (
    PACKING_KEY,
    Pack,
    RedisClient,
    events_key,
    hand_key,
    lua_script,
    raw_command,
    table_key,
)

_CLAIM = lua_script("claim.lua")
_READ = lua_script("pack_read.lua")
_PACK = lua_script("pack.lua")
_DROP_POINTER = lua_script("drop_pointer.lua")


@dataclass
class PackingRead:
    """What the packer reads of a table with deal `hand` to pack: the last packed event,
    the deal's history as stored, the stream's first events up to the deal's last (id,
    JSON) and the newest finished deal."""

    table_id: str
    hand: int
    packed: int
    history: bytes
    stream: list[tuple[int, bytes]]
    ended: int


class PackingStore:
    """The packer's work list and its reads and writes of the tables."""

    def __init__(self, client: RedisClient) -> None:
        """Use `client`, the tables' client."""
        self.client = client
        self._claim = client.register_script(_CLAIM)

    def claim(self, now: float, limit: int, until: float) -> list[str]:
        """Tables with a deal to pack by `now`, each held for this caller until `until`
        (as `TableStore.claim_due` holds deadlines)."""
        rows = self._claim(keys=[PACKING_KEY], args=[repr(now), limit, repr(until)])
        return [str(table_id) for table_id in rows]

    def reads(self, table_ids: Sequence[str]) -> list[PackingRead | None]:
        """What the packer needs of each table, None for a table with nothing to pack
        (closed, or no finished deal but the newest unpacked, or packed meanwhile by
        another packer): two round trips for all, the second one script a table
        (`lua/pack_read.lua`) that reads the stream only up to the deal's last event."""
        pipe = self.client.pipeline(transaction=False)
        for table_id in table_ids:
            pipe.hmget(
                table_key(table_id), ["packed", "packed_hand", "first_hand", "ended", "closed"]
            )
        todo: list[tuple[str, int, int, int]] = []
        for table_id, fields in zip(table_ids, pipe.execute(), strict=True):
            last_packed, packed_hand, first_hand, ended, closed = fields
            hand = max(int(packed_hand or 0) + 1, int(first_hand or 1))
            if closed is None and ended is not None and hand < int(ended):
                todo.append((table_id, hand, int(last_packed or 0), int(ended)))
        pipe = self.client.pipeline(transaction=False)
        for table_id, hand, _, _ in todo:
            keys = [hand_key(table_id, hand), events_key(table_id)]
            raw_command(pipe, "EVAL", _READ, len(keys), *keys, tables.STREAM_READ)
        replies = pipe.execute() if todo else []
        found: dict[str, PackingRead] = {}
        for (table_id, hand, last_packed, ended), reply in zip(todo, replies, strict=True):
            if reply:
                stream = list(zip(reply[1::2], reply[2::2], strict=True))
                found[table_id] = PackingRead(table_id, hand, last_packed, reply[0], stream, ended)
        return [found.get(table_id) for table_id in table_ids]

    def pack(self, packs: Sequence[tuple[Pack, int, str]]) -> list[bool]:
        """Write each (pack, the last packed event read, table id) unless its table's
        packing changed since it was read (`lua/pack.lua`); one round trip."""
        pipe = self.client.pipeline(transaction=False)
        for pack, last_packed, table_id in packs:
            keys = [table_key(table_id), events_key(table_id), hand_key(table_id, pack.hand)]
            args = [last_packed, pack.value, pack.first, pack.last, pack.hand]
            pipe.execute_command("EVAL", _PACK, len(keys), *keys, *args)
        replies = pipe.execute() if packs else []
        return [bool(reply) for reply in replies]

    def done(self, table_ids: Sequence[str], claimed: float) -> None:
        """Take the tables off the work list, unless a commit listed one again since they
        were claimed (held until `claimed`)."""
        pipe = self.client.pipeline(transaction=False)
        for table_id in table_ids:
            pipe.execute_command("EVAL", _DROP_POINTER, 1, PACKING_KEY, table_id, repr(claimed), "")
        pipe.execute()
