"""Accept-Encoding negotiation and entity-tag suffixes (`api.http.compression`)."""

from __future__ import annotations

import gzip

import brotli
from hypothesis import given
from hypothesis import strategies as st

from api.http.compression import (
    accepted_codings,
    choose_coding,
    compressor,
    plain_tags,
    suffixed_tag,
)

CODING_NAMES = st.sampled_from(["br", "gzip", "x-gzip", "identity", "*", "deflate", "zstd"])
QVALUES = st.sampled_from(["0", "0.0", "0.5", "0.001", "1", "1.0", "1.000", "0.999"])


@st.composite
def accept_encodings(draw: st.DrawFn) -> tuple[str, dict[str, float]]:
    """An Accept-Encoding header and the weight each first-named coding has in it."""
    elements: list[str] = []
    weights: dict[str, float] = {}
    for name in draw(st.lists(CODING_NAMES, max_size=6)):
        q = draw(st.none() | QVALUES)
        space = draw(st.sampled_from(["", " ", "\t"]))
        elements.append(name if q is None else f"{name}{space};{space}q={q}")
        weights.setdefault("gzip" if name == "x-gzip" else name, 1.0 if q is None else float(q))
    return ",".join(draw(st.sampled_from(["", " "])) + e for e in elements), weights


@given(accept_encodings())
def test_every_coding_named_gets_its_first_weight(case: tuple[str, dict[str, float]]) -> None:
    header, weights = case
    assert accepted_codings(header) == weights


@given(accept_encodings())
def test_the_coding_chosen_is_one_the_client_weighs_most(
    case: tuple[str, dict[str, float]],
) -> None:
    header, weights = case
    chosen = choose_coding(header)
    weight = {c: weights.get(c, weights.get("*", 0.0)) for c in ("br", "gzip")}
    if chosen == "identity":
        assert weight["br"] == 0
        assert weight["gzip"] == 0
    else:
        assert weight[chosen] > 0
        assert weight[chosen] == max(weight.values())
        if weight["br"] == weight["gzip"]:
            assert chosen == "br"


@given(st.text(max_size=40))
def test_any_header_is_read_without_failing(header: str) -> None:
    assert choose_coding(header) in ("br", "gzip", "identity")


def test_negotiation_examples() -> None:
    assert choose_coding(None) == "identity"
    assert choose_coding("") == "identity"
    assert choose_coding("gzip, br") == "br"
    assert choose_coding("gzip;q=1, br;q=0.5") == "gzip"
    assert choose_coding("br;q=0, gzip") == "gzip"
    assert choose_coding("*") == "br"
    assert choose_coding("*;q=0.5, br;q=0") == "gzip"
    assert choose_coding("identity") == "identity"
    assert choose_coding("gzip;q=0, br;q=0, identity;q=0") == "identity"
    assert choose_coding("x-gzip") == "gzip"
    assert choose_coding("GZIP;Q=0.5") == "gzip"
    assert choose_coding("gzip;q=2, br;q=abc") == "identity"  # invalid weights: skipped
    assert choose_coding("deflate, zstd") == "identity"


def test_a_compressed_representation_has_a_tag_of_its_own_and_loses_it_on_the_way_in() -> None:
    assert suffixed_tag('"7"', "br") == '"7-br"'
    assert suffixed_tag('W/"ab"', "gzip") == 'W/"ab-gzip"'
    assert plain_tags('"7-br"') == ('"7"', "br")
    assert plain_tags('"6", W/"7-gzip"') == ('"6", W/"7"', "gzip")
    assert plain_tags('"7"') == ('"7"', None)
    assert plain_tags("*") == ("*", None)


@given(st.binary(max_size=5000))
def test_both_codings_round_trip(body: bytes) -> None:
    assert gzip.decompress(compressor("gzip", 4, 6)(body)) == body
    assert brotli.decompress(compressor("br", 4, 6)(body)) == body
