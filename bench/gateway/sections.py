"""`make bench-gateway ARGS=--sections`: where a gevent worker's CPU goes, by kind of
request and by section, under the request rounds.

A sampling profiler cannot split a gevent worker's CPU by request: every request runs
in the same thread, one greenlet at a time, and a call that waits (a Redis round trip,
the evaluator) lets other requests run in between. This meter keeps the thread's CPU
clock (`time.thread_time_ns`) and, at every greenlet switch (`greenlet.settrace`), gives
the CPU spent since the last switch to the greenlet that was running, and within it to
the innermost timed section it was in. Each request's CPU is counted at its end under
its kind: `settling` when it asked the evaluator for a showdown, `move` when it went
through the moves' endpoint, `other` for the rest (`/healthz`, reads). CPU outside any
request (the clock, which runs the packer; the event fan-out) is counted per greenlet
function, and the hub's own under `hub`.

Installed in each worker by `bench/gateway/sections_conf.py` (gunicorn's config, which
the benchmark passes instead of the deployed one), the meter writes its counts every
half second to `sections-<pid>.json` in the folder `SECTIONS_DIR` names; the benchmark
reads them before and after its request rounds. The wrappers and the trace cost a
little: the shares, not the absolute figures, are the result.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import json
import os
import tempfile
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import gevent
import gevent.hub
import greenlet

from bench.gateway.load import Load
from bench.gateway.plan import Plan
from bench.gateway.rounds import request_rounds
from bench.gateway.service import GatewayConfig, Service
from bench.gateway.steps import located

DIRECTORY_VARIABLE = "SECTIONS_DIR"
PACKAGE = "api"
CONFIG_MODULE = "bench.gateway.sections_conf"
# where each section is timed, "module:owner.attribute" in the gateway's package (as
# `bench.gateway.steps` names a step), and its label; the innermost section wins
SECTIONS: tuple[tuple[str, str], ...] = (
    ("adapters.warm:TableReader.read", "read the table: the warm copy"),
    ("adapters.store:TableStore.read", "read the table: from Redis"),
    ("games.game:TableGame.act", "rules: the move"),
    ("adapters.evaluator:EvaluatorClient.showdown", "showdown: the evaluator's call"),
    ("games.game:TableGame.settle", "rules: settling the deal"),
    ("games.game:TableGame.on_deadline", "rules: dealing the next deal"),
    ("service.changes:TableChanges._commit_of", "what the commit writes"),
    ("adapters.store:TableStore.commit", "commit: encoding"),
    ("adapters.store:TableStore._run", "a table script's Redis round trip"),
    ("adapters.warm:TableReader.committed", "keeping the warm copy"),
    ("service.recall:Recall.committed", "recall notes delivered"),
    ("service.queries:TableQueries.present", "the table as the seat sees it"),
    ("http.moves:_response", "the response"),
    ("service.packing:Packer.run", "packer"),
)
UNTIMED = "the rest (HTTP, pipeline, service)"
BACKGROUND = "background"
# the greenlet of a keep-alive connection between its requests: gunicorn reading each
# request and writing its answer, around the app
HTTP_SERVER = "_handle_and_close_when_done"
# the kinds a request is counted under, weakest first: the strongest mark wins
KINDS = ("other", "move", "settling")
MARKS = (
    ("http.moves:MovesEndpoint.answer", "move"),
    ("adapters.evaluator:EvaluatorClient.showdown", "settling"),
)


class _Open:
    """A greenlet's open request (or background work): its kind and open sections."""

    __slots__ = ("calls", "kind", "spent", "stack")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.stack: list[str] = []
        self.spent: collections.Counter[str] = collections.Counter()
        self.calls: collections.Counter[str] = collections.Counter()


class SectionMeter:
    """CPU by kind of request and section, in one gevent worker (see the module)."""

    def __init__(self, directory: Path) -> None:
        """Write the counts to `directory`."""
        self.path = directory / f"sections-{os.getpid()}.json"
        self.requests: collections.Counter[str] = collections.Counter()
        self.cpu: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
        self.calls: dict[str, collections.Counter[str]] = collections.defaultdict(
            collections.Counter
        )
        self._open: dict[Any, _Open] = {}
        self._last = time.thread_time_ns()
        self._thread = threading.get_ident()

    def _charge(self, current: Any) -> None:
        """Give the CPU since the last charge to `current`'s innermost open section (to
        its request's untimed rest, or outside requests to its greenlet's function)."""
        now = time.thread_time_ns()
        spent, self._last = now - self._last, now
        opened = self._open.get(current)
        if opened is not None and opened.stack:
            opened.spent[opened.stack[-1]] += spent
        elif opened is not None and opened.kind != BACKGROUND:
            opened.spent[UNTIMED] += spent
        else:
            self.cpu[BACKGROUND][_where(current)] += spent

    def _switched(self, event: str, args: tuple[Any, Any]) -> None:
        if event in ("switch", "throw") and threading.get_ident() == self._thread:
            self._charge(args[0])

    def _section(self, label: str, function: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(function)
        def timed(*args: Any, **kwargs: Any) -> Any:
            current = greenlet.getcurrent()
            self._charge(current)
            opened = self._open.get(current)
            owned = opened is None  # outside requests: a section of its own
            if opened is None:
                opened = self._open[current] = _Open(BACKGROUND)
            opened.stack.append(label)
            opened.calls[label] += 1
            try:
                return function(*args, **kwargs)
            finally:
                self._charge(current)
                opened.stack.pop()
                if owned:
                    del self._open[current]
                    self.cpu[BACKGROUND].update(opened.spent)
                    self.calls[BACKGROUND].update(opened.calls)

        return timed

    def _mark(self, kind: str, function: Callable[..., Any]) -> Callable[..., Any]:
        rank = KINDS.index(kind)

        @functools.wraps(function)
        def marked(*args: Any, **kwargs: Any) -> Any:
            opened = self._open.get(greenlet.getcurrent())
            if opened is not None and opened.kind in KINDS and KINDS.index(opened.kind) < rank:
                opened.kind = kind
            return function(*args, **kwargs)

        return marked

    def wsgi(self, app: Callable[..., Iterable[bytes]]) -> Callable[..., list[bytes]]:
        """`app`, each request's CPU counted under its kind."""

        def metered(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
            current = greenlet.getcurrent()
            self._charge(current)
            opened = self._open[current] = _Open("other")
            try:
                return list(app(environ, start_response))
            finally:
                self._charge(current)
                del self._open[current]
                self.requests[opened.kind] += 1
                self.cpu[opened.kind].update(opened.spent)
                self.calls[opened.kind].update(opened.calls)

        return metered

    def install(self, app: Callable[..., Iterable[bytes]]) -> Callable[..., list[bytes]]:
        """Wrap the sections and the marks, trace the switches, write the counts every
        half second; `app` metered."""
        for place, label in SECTIONS:
            _replace(place, functools.partial(self._section, label))
        for place, kind in MARKS:
            _replace(place, functools.partial(self._mark, kind))
        greenlet.settrace(self._switched)
        gevent.spawn(self._write_often)
        return self.wsgi(app)

    def _write_often(self) -> None:
        while True:
            gevent.sleep(0.5)
            self.write()

    def write(self) -> None:
        """Write the counts so far (replacing the file at once)."""
        counts = {"requests": self.requests, "cpu_ns": self.cpu, "calls": self.calls}
        partial = self.path.with_suffix(".part")
        partial.write_text(json.dumps(counts))
        partial.replace(self.path)


def _where(current: Any) -> str:
    """A greenlet's name outside requests: `hub`, or the function it runs."""
    if isinstance(current, gevent.hub.Hub):
        return "hub"
    run = getattr(current, "_run", None) or getattr(current, "run", None)
    return str(getattr(run, "__qualname__", type(current).__name__))


def _replace(place: str, wrap: Callable[[Any], Any]) -> None:
    """Replace the callable at `place` in the gateway's package with `wrap` of it, when
    the tree holds it."""
    found = located(PACKAGE, (place,))
    if found is not None:
        owner, name, _ = found
        setattr(owner, name, wrap(getattr(owner, name)))


Counts = dict[str, dict[str, float]]


@dataclasses.dataclass(frozen=True)
class Reading:
    """Every worker's counts at one time, summed: requests by kind; CPU ns and calls by
    kind and section."""

    requests: dict[str, int]
    cpu_ns: Counts
    calls: Counts


def read_counts(directory: Path) -> Reading:
    """The counts the workers last wrote to `directory`, summed."""
    requests: collections.Counter[str] = collections.Counter()
    sums: dict[str, dict[str, collections.Counter[str]]] = {
        name: collections.defaultdict(collections.Counter) for name in ("cpu_ns", "calls")
    }
    for path in sorted(directory.glob("sections-*.json")):
        counts = json.loads(path.read_text())
        requests.update(counts["requests"])
        for name, summed in sums.items():
            for kind, sections in counts[name].items():
                summed[kind].update(sections)
    cpu, calls = (
        {
            kind: {section: float(n) for section, n in sections.items()}
            for kind, sections in sums[name].items()
        }
        for name in ("cpu_ns", "calls")
    )
    return Reading(dict(requests), cpu, calls)


def _since(before: Counts, after: Counts) -> Counts:
    return {
        kind: {name: value - before.get(kind, {}).get(name, 0) for name, value in sections.items()}
        for kind, sections in after.items()
    }


def per_request(before: Reading, after: Reading) -> dict[str, Any]:
    """µs of CPU a request of each kind, by section, and the section's calls a request,
    between two readings. Outside requests: gunicorn's own handling of each connection
    per request of any kind, the rest (the clock and its packer, the fan-out, the hub)
    per settling declare, whose deals the packer packs."""
    requests = {kind: n - before.requests.get(kind, 0) for kind, n in after.requests.items()}
    spent, calls = _since(before.cpu_ns, after.cpu_ns), _since(before.calls, after.calls)
    server = spent.get(BACKGROUND, {}).pop(HTTP_SERVER, 0.0)
    kinds: dict[str, dict[str, float]] = {}
    called: dict[str, dict[str, float]] = {}
    for kind, sections in spent.items():
        count = requests.get("settling" if kind == BACKGROUND else kind, 0)
        if count:
            ordered = sorted(sections.items(), key=lambda item: -item[1])
            kinds[kind] = {name: ns / 1000 / count for name, ns in ordered}
            called[kind] = {name: n / count for name, n in calls.get(kind, {}).items()}
    total = sum(requests.values())
    return {
        "requests": requests,
        "kinds": kinds,
        "calls": called,
        "http_server_us": server / 1000 / total if total else 0.0,
    }


def report(results: dict[str, Any]) -> None:
    """Print each kind's µs a request by section."""
    requests = results["requests"]
    print("\nwhere a gevent worker's CPU goes, µs a request by section (the request rounds)")
    print(
        f"gunicorn around the app (reading requests, writing answers): "
        f"{results['http_server_us']:,.0f} µs a request of any kind, not below"
    )
    for kind in (*KINDS, BACKGROUND):
        sections = results["kinds"].get(kind)
        if not sections:
            continue
        if kind == BACKGROUND:
            print(
                f"outside requests (the clock and its packer, the fan-out, the hub), "
                f"per settling declare ({requests.get('settling', 0):,})"
            )
        else:
            total = sum(sections.values())
            print(f"{kind}: {requests.get(kind, 0):,} requests, {total:,.0f} µs each")
        calls = results["calls"].get(kind, {})
        for name, spent in sections.items():
            if spent >= 0.5:
                times = calls.get(name)
                each = "" if times is None or 0.95 < times < 1.05 else f" ({times:.2f} calls)"
                print(f"  {spent:9,.1f}  {name}{each}")


def section_rounds(
    service: Service, load: Load, plan: Plan, log: Callable[[str], None]
) -> dict[str, Any]:
    """The request rounds on a gateway whose workers are metered (restarted with
    `sections_conf`, then restarted as it was): µs a request by kind and section."""
    original = service.gateway.config if service.gateway is not None else GatewayConfig()
    with tempfile.TemporaryDirectory(prefix="cardroom-sections-") as folder:
        metered = dataclasses.replace(
            original,
            gunicorn_config=f"python:{CONFIG_MODULE}",
            extra_env={**original.extra_env, DIRECTORY_VARIABLE: folder},
        )
        service.restart_gateway(metered)
        readings: list[Reading] = []

        def settled_reading() -> None:
            time.sleep(1.5)  # each worker writes its counts every half second
            readings.append(read_counts(Path(folder)))

        try:
            request_rounds(service, load, plan, log, ready=settled_reading)
            settled_reading()
        finally:
            service.restart_gateway(original)
    return per_request(readings[0], readings[1])
