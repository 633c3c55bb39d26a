"""A finished deal's history in compact form, with the events it holds.

A deal's hand history (`table:{id}:hand:<n>`) is first written as JSON, like every
record; when the next deal ends, its commit replaces it with this form and takes the
events it holds out of the table's stream:

    H<dictionary> <from> <first_event> <last_event>\\n<zstd frame>

an ASCII header (the Lua scripts read `first_event` there), then one zstd frame,
compressed with the dictionary numbered `<dictionary>`, of the hand record's JSON and,
one a line, the JSON of every event from `from` to `last_event` exactly as the stream
held it: the deal's own events and every event since the previous compact record (a
seat taken or left between deals, a start), so that the records and the stream
together always hold every kept event once.

The dictionaries are trained on deals of both games (`make history-dictionary`) and
shipped in `dictionaries/`; each record names the one it was written with, so a newer
dictionary can be shipped beside the older ones, which stay to read older records.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import zstandard

# the dictionary new records are written with; older ones stay to read older records
DICTIONARY = 1
# zstd's level: higher ones take ten times the time for no smaller deal
LEVEL = 9
MAGIC = b"H"
FOLDER = Path(__file__).parent / "dictionaries"


def dictionary_path(number: int) -> Path:
    """Where dictionary `number` is shipped."""
    return FOLDER / f"deals-{number}.zdict"


@cache
def _dictionary(number: int) -> zstandard.ZstdCompressionDict | None:
    """Dictionary `number` (0: none, plain zstd)."""
    if number == 0:
        return None
    data = zstandard.ZstdCompressionDict(dictionary_path(number).read_bytes())
    data.precompute_compress(level=LEVEL)
    return data


@cache
def writing() -> int:
    """The dictionary new records are written with: `DICTIONARY`, or none (0) in a tree
    where it was not trained yet."""
    return DICTIONARY if dictionary_path(DICTIONARY).exists() else 0


# each thread's compressor: one made per record cost as much as compressing a small one,
# and a compressor may not be used by two threads at once
_local = threading.local()


def _compressor() -> zstandard.ZstdCompressor:
    compressor: zstandard.ZstdCompressor | None = getattr(_local, "compressor", None)
    if compressor is None:
        compressor = zstandard.ZstdCompressor(
            level=LEVEL, dict_data=_dictionary(writing()), write_dict_id=False
        )
        _local.compressor = compressor
    return compressor


@dataclass(frozen=True)
class Packed:
    """A compact record read back: its hand record's JSON and its events' JSON, by id."""

    first: int  # the first event it holds (`from`)
    first_event: int
    last_event: int
    record: bytes
    events: list[bytes]


def is_packed(raw: bytes) -> bool:
    """Whether a stored hand history is in compact form (else it is JSON)."""
    return raw[:1] == MAGIC


def pack(
    record: bytes, first: int, first_event: int, last_event: int, events: list[bytes]
) -> bytes:
    """The compact form of a hand record (its JSON) holding `events` (`first` to
    `last_event`, the JSON of each as the stream held it)."""
    body = b"\n".join([record, *events])
    header = b"%s%d %d %d %d\n" % (MAGIC, writing(), first, first_event, last_event)
    return header + _compressor().compress(body)


def unpack(raw: bytes) -> Packed:
    """A compact record's hand record and events."""
    header, _, frame = raw.partition(b"\n")
    number, first, first_event, last_event = (int(part) for part in header[1:].split(b" "))
    body = zstandard.ZstdDecompressor(dict_data=_dictionary(number)).decompress(frame)
    record, *events = body.split(b"\n")
    return Packed(first, first_event, last_event, record, events)


def header_of(raw: bytes) -> tuple[int, int] | None:
    """The first and last event a compact record holds, from its header (None: JSON)."""
    if not is_packed(raw):
        return None
    parts = raw.partition(b"\n")[0][1:].split(b" ")
    return int(parts[1]), int(parts[3])
