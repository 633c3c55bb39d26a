"""Packing a finished deal's history: once the next deal ends, the history of the deal
before it is rewritten in compact form together with every event since the last one
packed (`api.adapters.packed`), and those events leave the table's stream.

A deal's history stays JSON, and its events in the stream, for as long as it is the
newest: watchers and long polls a little behind read the stream as before. The packed
events are every event after the last packed one up to the deal's last, those of no
deal (a seat taken or left between deals, a start) included, so the stream and the
packed histories together hold every kept event exactly once; `TableStore.events_log`
reads them back in order.
"""

from __future__ import annotations

from typing import cast

from api import jsonio
from api.adapters import packed
from api.adapters.store import DealEnd, HandRecord, Pack, TableRecord, TableStore
from api.games.events import Event


def pack_previous(
    store: TableStore, record: TableRecord, read: DealEnd, finished: int
) -> Pack | None:
    """The compact form of the history of the deal before deal `finished` (which the
    change from `record` ends, having read `read`), holding the events since the last
    packed one; None when there is nothing to pack (no such history, or packed already).
    A round trip more only when the stream holds more than `read` brought."""
    previous = finished - 1
    if previous < 1 or read.previous is None or packed.is_packed(read.previous):
        return None
    history = cast(HandRecord, jsonio.loads(read.previous))
    last = history["last_event"]
    stream = {number: event for number, event in read.stream if number <= record.seq}
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
        stream.update(store.raw_events(record.table_id, first, last))
    missing = [number for number in range(first, last + 1) if number not in stream]
    if missing:
        first = max(missing) + 1  # trimmed already: the history holds what is left
    events = [stream[number] for number in range(first, last + 1)]
    value = packed.pack(read.previous, first, history["first_event"], last, events)
    return Pack(previous, value, first, last)


def deal_events(
    store: TableStore, record: TableRecord, read: DealEnd, history: HandRecord, stored: list[Event]
) -> list[Event]:
    """The events of the deal `history` tells of, which the change from `record` ends
    (its own events `stored`): the stream's, as `read` brought them (or read again when
    it brought too few), then the change's."""
    first, last = history["first_event"], history["last_event"]
    earlier = {number: event for number, event in read.stream if first <= number <= record.seq}
    if len(earlier) < record.seq - first + 1:
        earlier.update(store.raw_events(record.table_id, first, record.seq))
    events = [cast(Event, jsonio.loads(earlier[number])) for number in sorted(earlier)]
    return events + [item for item in stored if first <= item["id"] <= last]
