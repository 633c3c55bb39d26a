"""api.jsonio: the gateway's JSON text, as the standard library would read it."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from api import jsonio

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**64 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@given(JSON_VALUES)
def test_what_it_writes_reads_back_the_same_everywhere(value: object) -> None:
    text = jsonio.dumps(value)
    assert json.loads(text) == value
    assert jsonio.loads(text) == value
    assert jsonio.loads(text.encode()) == value


def test_integer_keys_become_strings_as_with_the_standard_library() -> None:
    assert json.loads(jsonio.dumps({1: "a", "2": "b"})) == json.loads(
        json.dumps({1: "a", "2": "b"})
    )


def test_an_integer_beyond_64_bits_falls_back_to_the_standard_library() -> None:
    assert json.loads(jsonio.dumps({"n": 2**70, "name": "é"})) == {"n": 2**70, "name": "é"}


def test_the_output_is_compact_utf8() -> None:
    assert jsonio.dumps({"a": [1, 2], "name": "Zoë"}) == '{"a":[1,2],"name":"Zoë"}'
    assert jsonio.dumps_bytes({"name": "Zoë"}) == '{"name":"Zoë"}'.encode()
