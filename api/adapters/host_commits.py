"""What this host's gateway workers last committed, by table: each table's version, a
hint that a worker's warm copy of it is stale, and a copy of the commit itself, which
another worker of the host computes its next move from instead of reading Redis.

gunicorn forks its workers from one master, which makes anonymous shared memory maps
(`HostCommits.create`, from `api/runtime/gunicorn_conf.py`) before it forks: every
worker, each a child of that master, reads and writes the same bytes. A worker that
commits a change writes the table's new version in the table's slot, and the commit
(`api.adapters.warm.Committed`, encoded) in the table's copy slot; a worker about to
compute a move from its warm copy (`api.adapters.warm`) reads the version first, and
when another worker wrote a later one, takes that worker's copy, or reads the table from
Redis when the host holds no copy of that version. Players on connections of their own
reach any worker, so the move before theirs was often made by another one: a copy
computed from and refused by the commit's compare-and-set costs a move about half again
over reading the table first, and the read costs a round trip that the host's copy saves
(docs/performance.md).

Both are hints only. The versions: 65,536 slots of 16 bytes (1 MiB), each a 64-bit hash
of a table id and that table's version. The copies: `HOST_COPIES` slots (4,096 by
default) of 16 KiB, each a table's hash, version, a checksum and the encoded commit; a
commit that does not fit is not copied. Two tables of one slot take turns in it, and
writes race unlocked, so a version may be behind and a copy torn or overwritten: a copy
whose checksum (BLAKE2b over its table, version and bytes) does not match is not used.
A wrong hint costs a read too many, or a copy refused as without the hint; what is
written is decided by the commit's compare-and-set (version and stamp) alone. Commits
made on other hosts (other gateways, a clock or a bots runner of their own) are not seen
here.
"""

from __future__ import annotations

import hashlib
import mmap
import struct

SLOTS = 1 << 16
COPIES = 1 << 12
COPY_BYTES = 1 << 14
_SLOT = struct.Struct("<QQ")  # the table id's hash (never 0), its version
# a copy's head: the table id's hash, its version, the length of its bytes, then their
# checksum; the bytes follow
_HEAD = struct.Struct("<QQI")
_CHECK = 8


class HostCommits:
    """Table versions and copies of their commits, in memory shared by the processes
    forked after it was made."""

    def __init__(self, memory: mmap.mmap, copies: mmap.mmap | None = None) -> None:
        """Use `memory`, a whole number of version slots, and `copies` (None: no copies),
        a whole number of copy slots of COPY_BYTES."""
        self._memory = memory
        self.slots = len(memory) // _SLOT.size
        self._copies = copies
        self.copy_slots = 0 if copies is None else len(copies) // COPY_BYTES
        self.copy_capacity = COPY_BYTES - _HEAD.size - _CHECK

    @classmethod
    def create(cls, slots: int = SLOTS, copies: int = COPIES) -> HostCommits:
        """Empty slots in anonymous shared maps (shared with the children forked later);
        `copies` 0 keeps no copies. Pages take memory only once a slot in them is written."""
        return cls(
            mmap.mmap(-1, slots * _SLOT.size),
            mmap.mmap(-1, copies * COPY_BYTES) if copies > 0 else None,
        )

    def _place(self, table_id: str) -> tuple[int, int]:
        key = _key(table_id)
        return key, (key % self.slots) * _SLOT.size

    def committed(self, table_id: str, version: int, copy: bytes | None = None) -> None:
        """Note that the table was committed at `version`, unless a later one is noted;
        keep `copy` (its commit, encoded) as that version's when given and it fits."""
        key, offset = self._place(table_id)
        if copy is not None:
            self._keep(key, version, copy)
        held, known = _SLOT.unpack_from(self._memory, offset)
        if held != key or known < version:
            _SLOT.pack_into(self._memory, offset, key, version)

    def latest(self, table_id: str) -> int:
        """The latest version of the table noted (0: none)."""
        key, offset = self._place(table_id)
        held, known = _SLOT.unpack_from(self._memory, offset)
        return int(known) if held == key else 0

    def copy_of(self, table_id: str, version: int) -> bytes | None:
        """The copy kept of the table's commit at `version`, whole; None when the slot
        holds another table or version, or bytes a concurrent write tore."""
        copies = self._copies
        if copies is None:
            return None
        key = _key(table_id)
        offset = (key % self.copy_slots) * COPY_BYTES
        held, kept, length = _HEAD.unpack_from(copies, offset)
        if held != key or kept != version or length > self.copy_capacity:
            return None
        start = offset + _HEAD.size + _CHECK
        check = copies[start - _CHECK : start]
        data = copies[start : start + length]
        return data if _checksum(key, version, data) == check else None

    def _keep(self, key: int, version: int, data: bytes) -> None:
        copies = self._copies
        if copies is None or len(data) > self.copy_capacity:
            return
        offset = (key % self.copy_slots) * COPY_BYTES
        start = offset + _HEAD.size + _CHECK
        copies[start : start + len(data)] = data
        copies[start - _CHECK : start] = _checksum(key, version, data)
        _HEAD.pack_into(copies, offset, key, version, len(data))


def _key(table_id: str) -> int:
    digest = hashlib.blake2b(table_id.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") | 1


def _checksum(key: int, version: int, data: bytes) -> bytes:
    check = hashlib.blake2b(data, digest_size=_CHECK, salt=struct.pack("<QQ", key, version))
    return check.digest()


# the gateway process's: made by gunicorn's master before it forks the workers (None in
# any other process, which then reads no hint)
SHARED: HostCommits | None = None
