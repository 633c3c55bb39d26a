"""Packing finished deals' histories: the packer, run by the clock, rewrites the history
of every finished deal but the newest in compact form together with every event since
the last one packed (`api.adapters.packed`), and those events leave the table's stream.

The commit that ends a deal only notes it and puts its table in the packer's work list
(`TableStore.commit`); packing is no work of the move's. A deal's history stays JSON,
and its events in the stream, for as long as it is the newest: watchers and long polls
a little behind read the stream as before. The packed events are every event after the
last packed one up to the deal's last, those of no deal (a seat taken or left between
deals, a start) included, so the stream and the packed histories together hold every
kept event exactly once; `TableStore.events_log` reads them back in order. A pack is
written only if nothing changed the table's packing since it was read (`lua/pack.lua`),
so any number of packers may run at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import cast

from api import jsonio
from api.adapters import packed
from api.adapters.packing import PackingRead, PackingStore
from api.adapters.store import HandRecord, Pack, TableStore

# the tables a page claims at most (its reads and writes one pipeline each), the pages
# a run goes through at most, and how long a page's tables are held for its packer
PAGE = 100
PAGES = 20
HOLD_SECONDS = 5.0
# on a cluster the packer is pointed at a table before the commit ending a deal, for
# this long after it: by then the commit has landed
POINT_AHEAD = 1.0
# the deals a run packs at most at one table (a table further behind goes on next run)
ROUNDS = 8


class Packer:
    """Packs the finished deals of the tables the commits listed for it."""

    def __init__(self, store: TableStore, clock: Callable[[], float] = time.time) -> None:
        """Pack the tables of `store`; `clock` gives the time."""
        self.store = store
        self.packing = PackingStore(store.client)
        self.clock = clock

    def run(self, limit: int = PAGE, pages: int = PAGES) -> int:
        """Pack what the listed tables have to pack, `limit` tables a page, while pages
        come full (at most `pages`); how many deals it packed. Each table leaves the list
        once nothing but its newest deal is unpacked."""
        done = 0
        for _ in range(pages):
            claimed, packed = self._page(limit)
            done += packed
            if claimed < limit:
                break
        return done

    def _page(self, limit: int) -> tuple[int, int]:
        """Claim up to `limit` listed tables and pack them: how many it claimed, and the
        deals it packed."""
        now = self.clock()
        until = now + HOLD_SECONDS
        tables = self.packing.claim(now, limit, until)
        done = 0
        pending = tables
        for _ in range(ROUNDS):
            if not pending:
                break
            reads = [read for read in self.packing.reads(pending) if read is not None]
            ended = {read.table_id: read.ended for read in reads}
            packs = [(pack_of(self.store, read), read) for read in reads]
            writes = [(pack, read.packed, read.table_id) for pack, read in packs if pack]
            results = self.packing.pack(writes)
            done += sum(results)
            pending = [
                table_id
                for (pack, _, table_id), wrote in zip(writes, results, strict=True)
                if wrote and pack.hand + 1 < ended[table_id]
            ]
        # a table still behind stays held, and comes due again when the hold ends
        finished = [table_id for table_id in tables if table_id not in pending]
        if finished:
            self.packing.done(finished, until)
        return len(tables), done


def pack_of(store: TableStore, read: PackingRead) -> Pack | None:
    """The compact form of the history `read` brought, holding the events since the
    last packed one; None when there is nothing to pack. A round trip more only when the
    stream holds more than `read` brought."""
    history = cast(HandRecord, jsonio.loads(read.history))
    last = history["last_event"]
    stream = dict(read.stream)
    first = read.packed + 1
    if not read.packed:
        # the table's first packed history: from the stream's first event when the read
        # brought all of them up to the deal's end; else older events stay in the stream
        head = min(stream, default=history["first_event"])
        whole = all(number in stream for number in range(head, last + 1))
        first = head if whole else history["first_event"]
    if first > last:
        return None
    if any(number not in stream for number in range(first, last + 1)):
        stream.update(store.raw_events(read.table_id, first, last))
    missing = [number for number in range(first, last + 1) if number not in stream]
    if missing:
        first = max(missing) + 1  # trimmed already: the history holds what is left
    events = [stream[number] for number in range(first, last + 1)]
    value = packed.pack(read.history, first, history["first_event"], last, events)
    return Pack(read.hand, value, first, last)
