"""The versions this host's gateway workers last committed, by table: a hint that a
worker's warm copy of a table is stale, read before a move is computed from the copy.

gunicorn forks its workers from one master, which makes an anonymous shared memory map
(`HostCommits.create`, from `api/runtime/gunicorn_conf.py`) before it forks: every
worker, each a child of that master, reads and writes the same bytes. A worker that
commits a change writes the table's new version in the table's slot; a worker about to
compute a move from its warm copy (`api.adapters.warm`) reads the slot first, and reads
the table from Redis instead when another worker wrote a later version. Players on
connections of their own reach any worker, so the move before theirs was often made by
another one: a copy computed from and refused by the commit's compare-and-set costs a
move about half again over reading the table first (docs/performance.md).

It is a hint only. 65,536 slots of 16 bytes (1 MiB), each a 64-bit hash of a table id
and that table's version: two tables of one slot take turns in it, and writes race
unlocked, so a slot may be torn or behind. A wrong hint costs a read too many, or a copy
refused as without the hint; what is written is decided by the commit's compare-and-set
alone. Commits made on other hosts (other gateways, a clock or a bots runner of their
own) are not seen here.
"""

from __future__ import annotations

import hashlib
import mmap
import struct

SLOTS = 1 << 16
_SLOT = struct.Struct("<QQ")  # the table id's hash (never 0), its version


class HostCommits:
    """Table versions in memory shared by the processes forked after it was made."""

    def __init__(self, memory: mmap.mmap) -> None:
        """Use `memory`, a whole number of slots."""
        self._memory = memory
        self.slots = len(memory) // _SLOT.size

    @classmethod
    def create(cls, slots: int = SLOTS) -> HostCommits:
        """Empty slots in an anonymous shared map (shared with the children forked later)."""
        return cls(mmap.mmap(-1, slots * _SLOT.size))

    def _place(self, table_id: str) -> tuple[int, int]:
        digest = hashlib.blake2b(table_id.encode(), digest_size=8).digest()
        key = int.from_bytes(digest, "little") | 1
        return key, (key % self.slots) * _SLOT.size

    def committed(self, table_id: str, version: int) -> None:
        """Note that the table was committed at `version`, unless a later one is noted."""
        key, offset = self._place(table_id)
        held, known = _SLOT.unpack_from(self._memory, offset)
        if held != key or known < version:
            _SLOT.pack_into(self._memory, offset, key, version)

    def newer(self, table_id: str, version: int) -> bool:
        """Whether a version of the table later than `version` was noted."""
        key, offset = self._place(table_id)
        held, known = _SLOT.unpack_from(self._memory, offset)
        return bool(held == key and known > version)


# the gateway process's: made by gunicorn's master before it forks the workers (None in
# any other process, which then reads no hint)
SHARED: HostCommits | None = None
