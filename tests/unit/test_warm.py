"""The warm-table cache (gateway.adapters.warm): what it hands out, keeps and drops."""

from __future__ import annotations

from typing import Any

from gateway.adapters.store import TableRecord
from gateway.adapters.warm import WarmTables


def record(table_id: str, version: int) -> TableRecord:
    return TableRecord(table_id, {"version": version}, version, version, stamp=f"s{version}")


def test_a_table_is_handed_out_with_a_known_token_only() -> None:
    warm = WarmTables(10)
    warm.put(record("t", 2), {"d1": {"player": 1, "seat": 1}}, [])
    assert warm.get("t", None) == (record("t", 2), None)
    assert warm.get("t", "d1") == (record("t", 2), {"player": 1, "seat": 1})
    assert warm.get("t", "unknown") is None
    assert warm.get("other", None) is None


def test_an_older_commit_never_replaces_a_newer_one() -> None:
    warm = WarmTables(10)
    warm.put(record("t", 5), {}, [])
    warm.put(record("t", 4), {}, [])
    got = warm.get("t", None)
    assert got is not None
    assert got[0].version == 5


def test_forgetting_drops_the_record_and_keeps_the_tokens() -> None:
    warm = WarmTables(10)
    warm.put(record("t", 2), {"d1": {"player": 1, "seat": 1}}, [])
    warm.forget("t")
    assert warm.get("t", None) is None
    warm.put(record("t", 7), {"d2": {"player": 2, "seat": 2}}, [])
    assert warm.get("t", "d1") is not None
    assert warm.get("t", "d2") is not None


def test_departed_players_tokens_are_dropped() -> None:
    warm = WarmTables(10)
    warm.put(record("t", 2), {"d1": {"player": 1, "seat": 1}, "d2": {"player": 2, "seat": 2}}, [])
    warm.put(record("t", 3), {}, ["1"])
    assert warm.get("t", "d1") is None
    assert warm.get("t", "d2") is not None


def test_the_least_recently_used_table_goes_first() -> None:
    warm = WarmTables(2)
    warm.put(record("a", 1), {}, [])
    warm.put(record("b", 1), {}, [])
    assert warm.get("a", None) is not None  # a is now the most recent
    warm.put(record("c", 1), {}, [])
    assert len(warm) == 2
    assert warm.get("b", None) is None
    assert warm.get("a", None) is not None
    assert warm.get("c", None) is not None


def test_capacity_zero_keeps_nothing() -> None:
    warm = WarmTables(0)
    warm.put(record("t", 1), {}, [])
    assert warm.get("t", None) is None
    assert len(warm) == 0


def test_each_move_gets_a_state_of_its_own_and_none_is_held_as_objects() -> None:
    warm = WarmTables(10)
    state: dict[str, Any] = {"version": 3, "seats": {"1": {"chips": 100}}}
    warm.put(TableRecord("t", state, 3, 3, stamp="s3"), {}, [])
    state["seats"]["1"]["chips"] = 0  # the caller's copy changes after the commit
    first = warm.get("t", None)
    assert first is not None
    assert first[0].state == {"version": 3, "seats": {"1": {"chips": 100}}}
    first[0].state["seats"]["1"]["chips"] = 5  # a move changing what it was handed
    second = warm.get("t", None)
    assert second is not None
    assert second[0].state["seats"]["1"]["chips"] == 100
    assert first[0].state is not second[0].state


def test_the_state_is_kept_as_the_bytes_the_commit_wrote() -> None:
    warm = WarmTables(10)
    written = b'{"version":4,"seats":{}}'
    warm.put(TableRecord("t", {"version": 4, "seats": {}}, 4, 4, stamp="s4"), {}, [], written)
    got = warm.get("t", None)
    assert got is not None
    assert got[0].state == {"version": 4, "seats": {}}
    assert warm._tables["t"].state is written  # held as given, not encoded again
