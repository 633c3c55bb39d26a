"""`copy_state`: the rules' deep copy of a JSON-shaped state."""

from __future__ import annotations

from typing import Any

from api.games.common import copy_state


def _state() -> dict[str, Any]:
    return {
        "game": "guts",
        "version": 7,
        "deadline": 1_790_000_000.125,
        "closed_at": None,
        "flags": [True, False],
        "seats": {"1": {"name": "Ann", "stack": 990, "cards": ["Ah", "Kd"]}},
        "deal": {"players": [1, 2], "declarations": {}, "flow": [{"seat": 1, "amount": -1}]},
        "name": "Zoë ♠",
        "negative_zero": -0.0,
    }


def test_a_copy_is_equal_and_shares_nothing_mutable() -> None:
    state = _state()
    copied = copy_state(state)
    assert copied == state
    copied["seats"]["1"]["cards"].append("2c")
    copied["deal"]["declarations"]["1"] = "in"
    copied["flags"][0] = False
    assert state == _state()


def test_scalars_keep_their_types_and_values() -> None:
    copied = copy_state(_state())
    assert type(copied["version"]) is int
    assert type(copied["deadline"]) is float
    assert copied["deadline"] == 1_790_000_000.125
    assert str(copied["negative_zero"]) == "-0.0"
    assert copied["flags"] == [True, False]
    assert type(copied["flags"][0]) is bool


def test_values_beyond_json_encoders_are_copied_by_walking_the_tree() -> None:
    big: dict[str, Any] = {"amount": 2**70, "nested": [{"amount": -(2**80)}]}
    copied = copy_state(big)
    assert copied == big
    assert copied["nested"][0] is not big["nested"][0]
    keyed = {1: ["a"], 2: {"b": 3}}
    copied_keys = copy_state(keyed)
    assert copied_keys == keyed
    assert list(copied_keys) == [1, 2]
    assert copied_keys[1] is not keyed[1]


def test_a_copy_is_what_the_store_gives_back() -> None:
    # JSON holds no tuple: a copy, like a read from the store, has a list there
    copied: dict[str, Any] = copy_state({"pair": (1, 2)})
    assert copied == {"pair": [1, 2]}
