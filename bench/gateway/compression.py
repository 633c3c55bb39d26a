"""`make bench-gateway ARGS=--compression`: what compressing an answer saves and costs.

The gateway's app runs in a process of its own (spawned; clock and rate limits off),
called as WSGI with no HTTP server around it, on the benchmark's Redis, with every
answer eligible (`COMPRESSION_MIN_BYTES=1`). For each answer measured (a 2-seat and a
10-seat table read as a seat, the lobby, a hand history; the lobby again at several
page sizes, for answers from a few hundred bytes up) it takes, in each round:

- the bytes of the body sent with `Accept-Encoding` absent (identity), `gzip` and `br`;
- the gateway's CPU per request for each (process CPU over `calls` requests, the three
  codings interleaved), and so the CPU compression adds against identity;
- the CPU of the compression alone, on the identity body.

A settling move is measured by its body only (a move cannot be made twice): its bytes
in each coding and the CPU to compress it. Figures are medians over the rounds, in
bytes and microseconds of CPU.
"""

from __future__ import annotations

import functools
import multiprocessing
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from typing import Any

from bench.gateway.inprocess import started_table
from bench.gateway.tree import create_app, in_process_settings, settle_after_load

CODINGS = ("identity", "gzip", "br")
# the levels compared on the bodies of LEVEL_ANSWERS: brotli's quality, zlib's level
LEVELS = (
    ("br", 0), ("br", 1), ("br", 2), ("br", 4), ("br", 5), ("br", 6),
    ("gzip", 1), ("gzip", 6), ("gzip", 9),
)  # fmt: skip
LEVEL_ANSWERS = (
    "table read, 2 seats",
    "table read, 10 seats",
    "hand history",
    "lobby (20 tables)",
    "settling move's answer",
)
LOBBY_PAGES = (1, 3, 6, 12, 25, 50, 100)


def _cpu_per_call(call: Callable[[], object], calls: int) -> float:
    """Microseconds of this process's CPU per call."""
    started = time.process_time()
    for _ in range(calls):
        call()
    return (time.process_time() - started) / calls * 1e6


def _measure(redis_url: str, evaluator_address: str, rounds: int, calls: int) -> dict[str, Any]:
    """The rounds, in this (spawned) process."""
    import dataclasses

    from api.http.compression import compressor

    settings = dataclasses.replace(
        in_process_settings(redis_url, evaluator_address), compression_min_bytes=1
    )
    app = create_app(settings)
    http = app.test_client()
    settle_after_load(settings)
    quality, level = settings.compression_brotli_quality, settings.compression_gzip_level
    packers = {"gzip": compressor("gzip", quality, level), "br": compressor("br", quality, level)}
    options = {"ante": 1, "turn_seconds": 3600, "deal_pause_seconds": 60, "max_buy_in": 10_000}
    reads: dict[str, tuple[str, dict[str, str]]] = {}
    settling: bytes = b""
    for seats in (2, 10):
        table_id, tokens = started_table(http, {**options, "max_players": 10}, seats, 1000)
        path = f"/v1/tables/{table_id}"
        auth = {"Authorization": f"Bearer {tokens[0]}"}
        reads[f"table read, {seats} seats"] = (path, auth)
        if seats == 2:
            # a second table, played to its showdown: the hand history and a settling move
            done_id, done = started_table(http, options, 2, 1000)
            for token in done:
                answer = http.post(
                    f"/v1/tables/{done_id}/actions",
                    json={"action": "declare", "choice": "in"},
                    headers={"Authorization": f"Bearer {token}"},
                )
            settling = answer.get_data()
            reads["hand history"] = (
                f"/v1/tables/{done_id}/hands/1",
                {"Authorization": f"Bearer {done[0]}"},
            )
    for _ in range(max(LOBBY_PAGES)):  # enough tables for the longest lobby page
        started_table(http, options, 2, 1000)
    reads["lobby (20 tables)"] = ("/v1/tables", {})
    for page in LOBBY_PAGES:
        reads[f"lobby, limit={page}"] = (f"/v1/tables?limit={page}", {})

    figures: dict[str, dict[str, list[float]]] = {}
    levels: dict[str, dict[str, list[float]]] = {}
    plain: dict[str, bytes] = {"settling move's answer": settling}

    def note(name: str, key: str, value: float) -> None:
        figures.setdefault(name, {}).setdefault(key, []).append(value)

    try:
        for _ in range(rounds):
            for name, (path, auth) in reads.items():
                bodies = {}
                for coding in CODINGS:
                    headers = dict(auth)
                    if coding != "identity":
                        headers["Accept-Encoding"] = coding
                    response = http.get(path, headers=headers)
                    assert response.status_code == 200, (path, response.status_code)
                    bodies[coding] = response.get_data()
                    note(name, f"bytes_{coding}", len(bodies[coding]))
                plain[name] = bodies["identity"]

                for coding in CODINGS:
                    headers = dict(auth)
                    if coding != "identity":
                        headers["Accept-Encoding"] = coding
                    note(
                        name,
                        f"cpu_us_{coding}",
                        _cpu_per_call(functools.partial(http.get, path, headers=headers), calls),
                    )
                for coding, pack in packers.items():
                    body = bodies["identity"]
                    note(
                        name,
                        f"pack_us_{coding}",
                        _cpu_per_call(functools.partial(pack, body), calls),
                    )
            name = "settling move's answer"
            note(name, "bytes_identity", len(settling))
            for coding, pack in packers.items():
                note(name, f"bytes_{coding}", len(pack(settling)))
                note(
                    name,
                    f"pack_us_{coding}",
                    _cpu_per_call(functools.partial(pack, settling), calls),
                )
            for name in LEVEL_ANSWERS:
                for coding, setting in LEVELS:
                    pack = compressor(coding, setting, setting)
                    key = f"{coding} {setting}"
                    levels.setdefault(name, {}).setdefault(f"bytes {key}", []).append(
                        len(pack(plain[name]))
                    )
                    levels[name].setdefault(f"us {key}", []).append(
                        _cpu_per_call(functools.partial(pack, plain[name]), calls)
                    )
    finally:
        app.extensions["cardroom.service"].evaluator.close()
    return {"quality": quality, "level": level, "figures": figures, "levels": levels}


def compression_costs(
    redis_url: str, evaluator_address: str, rounds: int, calls: int = 200
) -> dict[str, Any]:
    """Run the rounds in a spawned process; the median of every figure and its ratios."""
    import statistics

    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        raw = pool.submit(_measure, redis_url, evaluator_address, rounds, calls).result()
    answers: dict[str, dict[str, float]] = {}
    for name, values in raw["figures"].items():
        row = {key: statistics.median(series) for key, series in values.items()}
        for coding in ("gzip", "br"):
            row[f"ratio_{coding}"] = row[f"bytes_{coding}"] / row["bytes_identity"]
            if f"cpu_us_{coding}" in row:
                row[f"added_cpu_us_{coding}"] = row[f"cpu_us_{coding}"] - row["cpu_us_identity"]
            saved = row["bytes_identity"] - row[f"bytes_{coding}"]
            row[f"saved_bytes_per_cpu_us_{coding}"] = saved / max(row[f"pack_us_{coding}"], 1e-9)
        answers[name] = row
    levels = {
        name: {key: statistics.median(series) for key, series in values.items()}
        for name, values in raw["levels"].items()
    }
    return {
        "levels": levels,
        "rounds": rounds,
        "calls_per_figure": calls,
        "brotli_quality": raw["quality"],
        "gzip_level": raw["level"],
        "answers": answers,
    }


def report(results: dict[str, Any]) -> None:
    """Print the table of bytes and CPU per answer and coding."""
    print(
        f"\ncompression, in process (no HTTP server); medians of {results['rounds']} rounds;"
        f" br quality {results['brotli_quality']}, gzip level {results['gzip_level']}"
    )
    print(
        f"{'answer':26} {'bytes':>7} {'gzip':>6} {'br':>6} {'gz/id':>6} {'br/id':>6}"
        f" {'CPU id':>7} {'+gzip':>6} {'+br':>6} {'pack gz':>8} {'pack br':>8}"
    )
    for name, row in results["answers"].items():
        cpu = (
            f"{row['cpu_us_identity']:7.0f} {row['added_cpu_us_gzip']:6.0f}"
            f" {row['added_cpu_us_br']:6.0f}"
            if "cpu_us_identity" in row
            else f"{'-':>7} {'-':>6} {'-':>6}"
        )
        print(
            f"{name:26} {row['bytes_identity']:7.0f} {row['bytes_gzip']:6.0f}"
            f" {row['bytes_br']:6.0f} {row['ratio_gzip']:6.2f} {row['ratio_br']:6.2f} {cpu}"
            f" {row['pack_us_gzip']:8.1f} {row['pack_us_br']:8.1f}"
        )
    print("(bytes of the body; CPU in us per request: identity, and what gzip and br add;")
    print(" pack: the compression alone)", file=sys.stdout)
    print("\neach level on the same bodies: bytes / us of CPU to compress")
    keys = [f"{coding} {setting}" for coding, setting in LEVELS]
    print(f"{'answer':26} " + " ".join(f"{key:>12}" for key in keys))
    for name, row in results["levels"].items():
        cells = " ".join(f"{row['bytes ' + k]:6.0f}/{row['us ' + k]:5.1f}" for k in keys)
        print(f"{name:26} {cells}")
