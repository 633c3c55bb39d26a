"""The warm-table cache (api.adapters.warm): what it hands out, keeps and drops."""

from __future__ import annotations

from typing import Any

from api.adapters.store import TableRecord
from api.adapters.warm import Committed, WarmTables
from tests.support.games import stored_state


def record(table_id: str, version: int) -> TableRecord:
    state = stored_state({"version": version})  # partial: the cache reads no more of it
    return TableRecord(table_id, state, version, version, stamp=f"s{version}")


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
    warm.put(TableRecord("t", stored_state(state), 3, 3, stamp="s3"), {}, [])
    state["seats"]["1"]["chips"] = 0  # the caller's copy changes after the commit
    first = warm.get("t", None)
    assert first is not None
    assert first[0].state == {"version": 3, "seats": {"1": {"chips": 100}}}
    # Any: the state is partial JSON, whose seat is no Seat
    handed: Any = first[0].state
    handed["seats"]["1"]["chips"] = 5  # a move changing what it was handed
    second = warm.get("t", None)
    assert second is not None
    kept: Any = second[0].state
    assert kept["seats"]["1"]["chips"] == 100
    assert first[0].state is not second[0].state


def test_the_state_is_kept_as_the_bytes_the_commit_wrote() -> None:
    warm = WarmTables(10)
    written = b'{"version":4,"seats":{}}'
    state = stored_state({"version": 4, "seats": {}})
    warm.put(TableRecord("t", state, 4, 4, stamp="s4"), {}, [], written)
    got = warm.get("t", None)
    assert got is not None
    assert got[0].state == {"version": 4, "seats": {}}
    committed = warm._tables["t"].committed
    assert committed is not None
    assert committed.state is written  # held as given, not encoded again


def test_a_commit_packed_for_the_hosts_other_workers_unpacks_as_it_was() -> None:
    for scheduled in (None, "", "1796495899.9"):
        for stamp in ("", "s-é-7"):
            committed = Committed("t", b'{"version":9}', 9, 41, 3, 2, scheduled, stamp)
            assert Committed.unpack("t", committed.pack()) == committed
