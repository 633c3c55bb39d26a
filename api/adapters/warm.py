"""Tables this process changed last: a move on one of them skips the read.

A move is read, computed, committed, and the commit is a compare-and-set on the
table's version and stamp (a random value each commit writes). When this process
made the table's last change, it already holds what the read would return, so the
move is computed from that and committed at once: one round trip instead of two. If
anyone changed the table since, the compare-and-set fails, nothing is written, the
entry is dropped and the move is read and computed again: a wrong guess costs one
round trip, never a wrong write. The stamp, not the version alone, is compared
because a Redis that lost its last writes (a failover to a replica that had not
received them) can bring a table back to a version number it already had, with
another state.

Before a move is computed from a copy, the host's note of each table's last commit
(`api.adapters.host_commits`, memory gunicorn's workers share) is read: when another
worker of the host committed the table since, the move is computed from the copy that
worker left in the host's memory, or, when the host holds none of that version, the copy
is dropped and the table read, instead of computing a move the compare-and-set would
refuse.

A seat token is taken as its holder's only if this process has seen its entry;
the state's own check that the holder still sits in that seat runs as on a read.
Entries are bounded (least recently used first out) and never shared between
processes. Each state is held encoded, as the bytes the commit wrote, and decoded
afresh for each move (a few microseconds): as objects, a thousand held states were
most of a worker's tracked objects, and every full garbage collection walked them all
(tens of milliseconds, during which the worker answered nothing).
"""

from __future__ import annotations

import struct
import threading
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from api import jsonio
from api.adapters.host_commits import HostCommits
from api.adapters.store import (
    Commit,
    MoveRead,
    TableRecord,
    TableStore,
    TokenEntry,
    deadline_field,
    token_digest,
)
from api.telemetry import HOST_COPIES

# a packed Committed's head: version, seq, first event and hand, the lengths of the
# scheduled deadline (_NONE: None) and of the stamp, which follow, then the state
_PACKED = struct.Struct("<qqqqHH")
_NONE = 0xFFFF


@dataclass(frozen=True)
class Committed:
    """A table's record as this process committed it, its state encoded (decoded anew
    for each change, which then owns its copy)."""

    table_id: str
    state: bytes
    version: int
    seq: int
    first_event: int
    first_hand: int
    scheduled: str | None
    stamp: str

    @classmethod
    def of(cls, record: TableRecord, state: bytes) -> Committed:
        """What is kept of `record`, whose state `state` encodes."""
        return cls(
            record.table_id,
            state,
            record.version,
            record.seq,
            record.first_event,
            record.first_hand,
            record.scheduled,
            record.stamp,
        )

    def pack(self) -> bytes:
        """The record as bytes another process of the host reads back (`unpack`)."""
        scheduled = None if self.scheduled is None else self.scheduled.encode()
        stamp = self.stamp.encode()
        head = _PACKED.pack(
            self.version,
            self.seq,
            self.first_event,
            self.first_hand,
            _NONE if scheduled is None else len(scheduled),
            len(stamp),
        )
        return b"".join((head, scheduled or b"", stamp, self.state))

    @classmethod
    def unpack(cls, table_id: str, data: bytes) -> Committed:
        """The record `pack` made of the table `table_id`."""
        version, seq, first_event, first_hand, scheduled_length, stamp_length = _PACKED.unpack_from(
            data
        )
        at = _PACKED.size
        scheduled = None
        if scheduled_length != _NONE:
            scheduled = data[at : at + scheduled_length].decode()
            at += scheduled_length
        stamp = data[at : at + stamp_length].decode()
        at += stamp_length
        return cls(table_id, data[at:], version, seq, first_event, first_hand, scheduled, stamp)

    def record(self) -> TableRecord:
        """The record, with a state of its own."""
        return TableRecord(
            self.table_id,
            jsonio.loads(self.state),
            self.version,
            self.seq,
            self.first_event,
            self.first_hand,
            self.scheduled,
            False,
            self.stamp,
        )


@dataclass
class WarmTable:
    """A table as this process last committed it (None once forgotten), and the token
    entries it has seen."""

    committed: Committed | None
    players: dict[str, TokenEntry] = field(default_factory=dict)


class WarmTables:
    """Up to `capacity` tables this process changed last, by table id."""

    def __init__(self, capacity: int) -> None:
        """Keep at most `capacity` tables (0 keeps none)."""
        self.capacity = capacity
        self._tables: OrderedDict[str, WarmTable] = OrderedDict()
        self._lock = threading.Lock()

    def get(
        self, table_id: str, digest: str | None
    ) -> tuple[TableRecord, TokenEntry | None] | None:
        """The record and the token's entry, if both are known; None otherwise."""
        held = self.held(table_id, digest)
        return None if held is None else (held[0].record(), held[1])

    def held(self, table_id: str, digest: str | None) -> tuple[Committed, TokenEntry | None] | None:
        """As `get`, the record's state still encoded."""
        with self._lock:
            warm = self._tables.get(table_id)
            if (
                warm is None
                or warm.committed is None
                or (digest is not None and digest not in warm.players)
            ):
                return None
            self._tables.move_to_end(table_id)
            held = warm.committed
            player = None if digest is None else warm.players[digest]
        return held, player

    def put(
        self,
        record: TableRecord,
        seen: Mapping[str, TokenEntry],
        departed: Iterable[str],
        encoded: bytes | None = None,
    ) -> Committed | None:
        """Remember `record` as committed, with token entries `seen`, minus departed
        players; what is kept of it (None: nothing, with no room or a later one kept).

        `encoded` is its state as the commit wrote it; without it, the state is encoded.
        """
        if self.capacity <= 0:
            return None
        gone = {str(player) for player in departed}
        state = jsonio.dumps_bytes(record.state) if encoded is None else encoded
        held = WarmTable(Committed.of(record, state))
        with self._lock:
            before = self._tables.get(record.table_id)
            if (
                before is not None
                and before.committed is not None
                and before.committed.version >= record.version
            ):
                return None  # a later commit of this process got here first
            players = {} if before is None else before.players
            if seen or gone:
                players = {
                    digest: entry
                    for digest, entry in {**players, **seen}.items()
                    if str(entry["player"]) not in gone
                }
            held.players = players
            self._tables[record.table_id] = held
            self._tables.move_to_end(record.table_id)
            while len(self._tables) > self.capacity:
                self._tables.popitem(last=False)
        return held.committed

    def forget(self, table_id: str) -> None:
        """Drop a table's record: the next move on it reads it first. The token entries
        stay: whoever holds one is still checked against the table's seats."""
        with self._lock:
            warm = self._tables.get(table_id)
            if warm is not None:
                warm.committed = None

    def __len__(self) -> int:
        """Tables held."""
        return len(self._tables)


_HOST_USED, _HOST_MISSING = (HOST_COPIES.labels(result) for result in ("used", "missing"))
# a table whose deadline is this close is not kept warm: a clock, likely another
# process's, changes it next, and a guess would be wasted work
WARM_DUE_MARGIN = 1.0


class TableReader:
    """Tables read for a change: this process's copy when it made the last change, else Redis.

    The caller is told which it got (`fresh`): a copy may be stale, so only the commit's
    compare-and-set says whether a change computed from it may be written, and a refusal
    must be confirmed by a fresh read.
    """

    def __init__(
        self, store: TableStore, warm: WarmTables, commits: HostCommits | None = None
    ) -> None:
        """Read from `store`, or from `warm` when it holds the table and `commits` (this
        host's workers' commits, `api.adapters.host_commits`) know of no later version."""
        self.store = store
        self.warm = warm
        self.commits = commits

    def read(
        self, table_id: str, token: str | None, replay_key: str | None, *, copy: bool
    ) -> tuple[MoveRead, bool]:
        """The table, the token's entry and the replay record, and whether from Redis.

        With `copy`, this process's copy is taken when it has one (its replay record is
        not known: the commit checks that it is absent).
        """
        digest = None if token is None else token_digest(token)
        held = self.warm.held(table_id, digest) if copy else None
        if held is not None:
            committed, player = held
            latest = self._latest(table_id, committed)
            if latest is not None:
                return MoveRead(latest.record(), player), False
        read = self.store.read(table_id, token, replay_key, all_players=self.warm.capacity > 0)
        return read, True

    def _latest(self, table_id: str, committed: Committed) -> Committed | None:
        """This process's copy of the table, or the later one another worker of the host
        left (`api.adapters.host_commits`); None, the copy forgotten, when another worker
        committed it since and the host holds no copy of that commit."""
        commits = self.commits
        if commits is None:
            return committed
        latest = commits.latest(table_id)
        if latest <= committed.version:
            return committed
        data = commits.copy_of(table_id, latest)
        if data is None:
            self.warm.forget(table_id)
            _HOST_MISSING.inc()
            return None
        _HOST_USED.inc()
        return Committed.unpack(table_id, data)

    def forget(self, table_id: str) -> None:
        """The next change of the table reads it from Redis."""
        self.warm.forget(table_id)

    def committed(self, change: Commit, read: MoveRead, now: float) -> None:
        """Keep the committed table, unless Redis now holds what this process does not.

        A trim moves the table's first kept event to a value only the script reads; a
        closed table takes no more moves; a table whose deadline is (nearly) due is
        changed next by a clock.
        """
        record = change.record
        commits = self.commits if self.warm.capacity > 0 else None
        due_soon = change.deadline is not None and change.deadline - now < WARM_DUE_MARGIN
        if change.trim is not None or change.close is not None or due_soon:
            if commits is not None:
                commits.committed(record.table_id, record.version + 1)
            self.warm.forget(record.table_id)
            return
        committed = TableRecord(
            record.table_id,
            change.state,
            record.version + 1,
            change.events[-1]["id"] if change.events else record.seq,
            record.first_event,
            record.first_hand,
            deadline_field(change.deadline),
            False,
            change.stamp,
        )
        seen = dict(read.players)
        for name, value in change.token_sets.items():
            if not name.startswith("player:"):
                seen[name] = jsonio.loads(value)
        departed = [name.split(":", 1)[1] for name in change.token_deletes]
        held = self.warm.put(committed, seen, departed, change.state_bytes)
        if commits is not None:
            copy = None if held is None else held.pack()
            commits.committed(record.table_id, committed.version, copy)
