"""`make bench-gateway ARGS=--sections` splits a gevent worker's CPU by request and
section: CPU spent while a request waits (another greenlet running) is not that
request's, a request is counted under the strongest kind it was marked with, a section
called outside any request is counted apart, and the counts written and read back give
µs a request between two readings.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

import gevent
import greenlet
import pytest

from bench.gateway.sections import (
    BACKGROUND,
    HTTP_SERVER,
    MARKS,
    PACKAGE,
    SECTIONS,
    UNTIMED,
    SectionMeter,
    per_request,
    read_counts,
)
from bench.gateway.steps import located

BURN_NS = 60_000_000


def _burn() -> None:
    """Spend about 60 ms of this thread's CPU."""
    started = time.thread_time_ns()
    while time.thread_time_ns() - started < BURN_NS:
        pass


@pytest.fixture
def meter(tmp_path: Path) -> Iterator[SectionMeter]:
    meter = SectionMeter(tmp_path)
    previous = greenlet.settrace(meter._switched)
    try:
        yield meter
    finally:
        greenlet.settrace(previous)


def _app(body: Callable[[], None]) -> Callable[..., Iterable[bytes]]:
    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        body()
        start_response("200 OK", [])
        return [b"ok"]

    return app


def test_a_request_is_not_charged_the_cpu_others_spend_while_it_waits(
    meter: SectionMeter,
) -> None:
    def waits() -> None:
        gevent.sleep(0.2)  # the burner runs meanwhile

    waiting = meter._section("waiting on the wire", lambda: waits())
    moved = meter._mark("move", lambda: None)

    def sleeper_body() -> None:
        moved()
        waiting()

    sleeper = meter.wsgi(_app(sleeper_body))
    burner = meter.wsgi(_app(meter._section("burning", _burn)))
    jobs = [
        gevent.spawn(sleeper, {}, lambda *args: None),
        gevent.spawn(lambda: (gevent.sleep(0.01), burner({}, lambda *args: None))),
    ]
    gevent.joinall(jobs, raise_error=True)
    assert meter.requests == {"move": 1, "other": 1}
    assert meter.cpu["other"]["burning"] >= BURN_NS
    # the sleeper's section held none of the burner's CPU
    assert meter.cpu["move"]["waiting on the wire"] < BURN_NS / 2
    assert meter.calls["move"]["waiting on the wire"] == 1


def test_the_strongest_mark_wins_and_unmarked_work_is_the_rest(meter: SectionMeter) -> None:
    settling = meter._mark("settling", lambda: None)
    moved = meter._mark("move", lambda: None)

    def body() -> None:
        settling()
        moved()  # weaker: the request stays a settling one
        _burn()

    meter.wsgi(_app(body))({}, lambda *args: None)
    assert meter.requests == {"settling": 1}
    assert meter.cpu["settling"][UNTIMED] >= BURN_NS


def test_a_section_outside_requests_is_counted_apart(meter: SectionMeter) -> None:
    packer = meter._section("packer", _burn)
    gevent.spawn(packer).join()
    assert meter.cpu[BACKGROUND]["packer"] >= BURN_NS
    assert meter.calls[BACKGROUND]["packer"] == 1
    assert not meter.requests


def test_counts_read_back_give_cpu_a_request_between_two_readings(
    meter: SectionMeter, tmp_path: Path
) -> None:
    meter.wsgi(_app(lambda: None))({}, lambda *args: None)
    meter.write()
    before = read_counts(tmp_path)
    settling = meter._mark("settling", lambda: None)
    showdown = meter._section("showdown", _burn)

    def body() -> None:
        settling()
        showdown()

    app = meter.wsgi(_app(body))
    for _ in range(2):
        app({}, lambda *args: None)
    meter.cpu[BACKGROUND][HTTP_SERVER] += 3_000_000  # gunicorn's own work: 1 ms a request
    meter.write()
    figures = per_request(before, read_counts(tmp_path))
    assert figures["requests"] == {"other": 0, "settling": 2}
    assert figures["kinds"]["settling"]["showdown"] >= BURN_NS / 1000
    assert figures["calls"]["settling"]["showdown"] == 1
    assert figures["http_server_us"] == pytest.approx(1500)
    assert "other" not in figures["kinds"]  # no request of that kind between the readings


def test_installing_wraps_the_gateways_sections_and_marks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from api.adapters.evaluator import EvaluatorClient
    from api.service.packing import Packer

    for place, _ in (*SECTIONS, *MARKS):
        found = located(PACKAGE, (place,))
        assert found is not None, place
        owner, name, _ = found
        monkeypatch.setattr(owner, name, getattr(owner, name))  # put back after
    spawned: list[Any] = []
    monkeypatch.setattr(gevent, "spawn", lambda *args: spawned.append(args))
    previous = greenlet.gettrace()
    try:
        SectionMeter(tmp_path).install(_app(lambda: None))
    finally:
        greenlet.settrace(previous)
    # a section and a mark around the showdown, a section around the packer's run
    assert EvaluatorClient.showdown.__wrapped__.__wrapped__  # type: ignore[attr-defined]
    assert Packer.run.__wrapped__  # type: ignore[attr-defined]
    assert spawned  # the writer of the counts
