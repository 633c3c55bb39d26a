"""Serialise `EvaluateResponse` straight from numpy arrays.

Building a protobuf message hand by hand costs a Python call per hand; a reply to
10,000 hands would spend more time in that than in ranking. This module writes the
same bytes the generated code would (fields 1-4 of `EvaluateResponse`, packed
where the proto packs them, and for a packed reply fields 4-8), from whole arrays at
once and from per-strength wire fragments that are computed once and cached. The tests
parse its output with the generated class and compare it field by field.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt

_STRENGTHS_TAG = b"\x0a"  # field 1, length-delimited (packed uint32)
_CATEGORIES_TAG = b"\x12"  # field 2, length-delimited (packed enum)
_DESCRIPTION_TAG = b"\x1a"  # field 3, length-delimited (string)
_LEFTOVERS_TAG = b"\x22"  # field 4, length-delimited (bytes)
_PACKED_STRENGTHS_TAG = b"\x2a"  # field 5, bytes
_PACKED_CATEGORIES_TAG = b"\x32"  # field 6, bytes
_TABLE_ENTRY_TAG = b"\x3a"  # field 7, length-delimited (string)
_DESCRIPTION_INDEXES_TAG = b"\x42"  # field 8, bytes

# strengths: uint32, or uint16 for Guts (every Guts strength is below 2**15)
U32 = npt.NDArray[np.uint32] | npt.NDArray[np.uint16]
U8 = npt.NDArray[np.uint8]


def encode_varint(value: int) -> bytes:
    """One unsigned varint, as protobuf encodes it."""
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def encode_varints(values: U32) -> bytes:
    """Unsigned varints of a whole uint32 array, back to back (a packed field's payload)."""
    v = values.astype(np.uint64, copy=False)
    groups = np.stack([(v >> np.uint64(7 * i)) & np.uint64(0x7F) for i in range(5)], axis=1)
    lengths = np.ones(len(v), dtype=np.int64)
    for i in range(1, 5):
        lengths += v >= np.uint64(1 << (7 * i))
    width = int(lengths.max()) if len(v) else 1
    body = groups[:, :width].astype(np.uint8)
    position = np.arange(width)
    # every byte but the last of a varint carries the continuation bit
    body |= ((position[None, :] < (lengths[:, None] - 1)) * 0x80).astype(np.uint8)
    return bytes(body[position[None, :] < lengths[:, None]].tobytes())


def _field(tag: bytes, payload: bytes) -> bytes:
    return tag + encode_varint(len(payload)) + payload if payload else b""


def _append_field(parts: list[bytes | memoryview], tag: bytes, array: npt.NDArray[Any]) -> None:
    """Add a bytes field holding a contiguous array's memory, without copying it."""
    if array.size:
        parts.append(tag + encode_varint(array.nbytes))
        parts.append(np.ascontiguousarray(array).data.cast("B"))


class ResponseEncoder:
    """Writes `EvaluateResponse` bytes for one game, caching per-strength fragments."""

    def __init__(
        self, describe: Callable[[int], str], category_of: Callable[[U32], U8], size: int
    ) -> None:
        """`size` bounds the strengths of the game; `describe` names one strength."""
        self._describe = describe
        self._category_of = category_of
        if size > 1 << 21:
            raise ValueError("strengths must stay below 2**21 (three varint bytes)")
        self._fragments: list[bytes] = [b""] * size
        # the same descriptions as entries of a packed reply's description_table
        self._table_entries: list[bytes] = [b""] * size
        self._known = np.zeros(size, dtype=bool)
        # strength -> (varint, category, description fragment), for replies to a few hands
        self._parts: dict[int, tuple[bytes, int, bytes]] = {}
        self._size = size
        self._varint_table: tuple[U8, npt.NDArray[np.bool_]] | None = None
        # (strength, describe) -> the whole reply to one hand of that strength
        self._one: dict[tuple[int, bool], bytes] = {}

    def _varints(self, strengths: U32) -> bytes:
        """Packed varints by table lookup: every strength's bytes are computed once."""
        if self._varint_table is None:
            values = np.arange(self._size, dtype=np.uint32)
            lengths = 1 + (values >= 1 << 7).astype(np.uint32) + (values >= 1 << 14)
            table = np.stack(
                [
                    (values & 0x7F) | ((lengths > 1) << 7),
                    ((values >> 7) & 0x7F) | ((lengths > 2) << 7),
                    values >> 14,
                ],
                axis=1,
            ).astype(np.uint8)
            self._varint_table = (table, np.arange(3)[None, :] < lengths[:, None])
        table, used = self._varint_table
        return bytes(table[strengths][used[strengths]].tobytes())

    def _learn(self, strengths: U32) -> None:
        unique: U32 = np.unique(strengths)  # type: ignore[assignment]
        categories = self._category_of(unique).tolist()
        for strength, category in zip(unique.tolist(), categories, strict=True):
            if not self._known[strength]:
                text = self._describe(strength).encode()
                fragment = _DESCRIPTION_TAG + encode_varint(len(text)) + text
                self._fragments[strength] = fragment
                self._table_entries[strength] = _TABLE_ENTRY_TAG + fragment[1:]
                self._parts[strength] = (encode_varint(strength), category, fragment)
                self._known[strength] = True

    def encode_few(self, strengths: list[int], leftovers: bytes | None, describe: bool) -> bytes:
        """The whole reply for a handful of hands, from cached fragments, without numpy."""
        if not strengths:
            return b""
        parts = self._parts
        if not all(strength in parts for strength in strengths):
            self._learn(np.array(strengths, dtype=np.uint32))
        entries = [parts[strength] for strength in strengths]
        out = [
            _field(_STRENGTHS_TAG, b"".join(entry[0] for entry in entries)),
            _field(_CATEGORIES_TAG, bytes(entry[1] for entry in entries)),
        ]
        if describe:
            out.append(b"".join(entry[2] for entry in entries))
        if leftovers is not None:
            out.append(_field(_LEFTOVERS_TAG, leftovers))
        return b"".join(out)

    def encode_one(self, strength: int, describe: bool) -> bytes:
        """The whole reply to one hand, made once for each strength and kept."""
        reply = self._one.get((strength, describe))
        if reply is None:
            reply = self._one[strength, describe] = self.encode_few([strength], None, describe)
        return reply

    def descriptions(self, strengths: U32) -> bytes:
        """The repeated `descriptions` field for these strengths."""
        if not self._known[strengths].all():
            self._learn(strengths)
        return b"".join(map(self._fragments.__getitem__, strengths.tolist()))

    def encode(self, strengths: U32, leftovers: U8 | None, describe: bool) -> bytes:
        """The whole serialised reply."""
        if len(strengths) == 0:
            return b""
        parts = [
            _field(_STRENGTHS_TAG, self._varints(strengths)),
            # every Category number is below 128, so each packed enum is one byte
            _field(_CATEGORIES_TAG, self._category_of(strengths).tobytes()),
        ]
        if describe:
            parts.append(self.descriptions(strengths))
        if leftovers is not None:
            parts.append(_field(_LEFTOVERS_TAG, leftovers.tobytes()))
        return b"".join(parts)

    def encode_packed(
        self,
        strengths: U32,
        leftovers: U8 | None,
        describe: bool,
        strength_bytes: int = 4,
        categories: bool = True,
    ) -> bytes:
        """The whole serialised packed reply: fixed-width strengths (`strength_bytes`, 4
        or 2 a hand), each hand's category unless `categories` is false, and with
        `describe` each distinct description once and every hand's index into that table.

        The arrays go into the reply as they are: the one copy is the join."""
        if len(strengths) == 0:
            return b""
        width = "<u4" if strength_bytes == 4 else "<u2"
        parts: list[bytes | memoryview] = []
        _append_field(parts, _PACKED_STRENGTHS_TAG, strengths.astype(width, copy=False))
        if categories:
            _append_field(parts, _PACKED_CATEGORIES_TAG, self._category_of(strengths))
        if leftovers is not None:
            _append_field(parts, _LEFTOVERS_TAG, leftovers)
        if describe:
            distinct, indexes = self._distinct(strengths)
            if not self._known[distinct].all():
                self._learn(distinct)
            parts.append(b"".join(map(self._table_entries.__getitem__, distinct.tolist())))
            _append_field(parts, _DESCRIPTION_INDEXES_TAG, indexes)
        return b"".join(parts)

    def _distinct(self, strengths: U32) -> tuple[U32, npt.NDArray[np.uint16]]:
        """The distinct strengths in order, and each strength's place among them.

        Marks over the game's whole strength range cost less than np.unique's sort.
        """
        marks = np.zeros(self._size, dtype=bool)
        marks[strengths] = True
        distinct = np.flatnonzero(marks).astype(np.uint32)
        if len(distinct) > 1 << 16:
            raise ValueError("a description table indexes at most 65,536 descriptions")
        places = np.empty(self._size, dtype="<u2")
        places[distinct] = np.arange(len(distinct), dtype="<u2")
        return distinct, places[strengths]
