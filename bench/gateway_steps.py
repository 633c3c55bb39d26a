"""`make bench-gateway ARGS=--steps`: where a warm declare's CPU goes, step by step.

The gateway's app runs in a process of its own (spawned; the garbage-collection policy
of a gunicorn worker applied, clock and rate limits off) and is called as WSGI, with
no HTTP server around it, on the benchmark's Redis. Each round creates `tables` 5-seat
Guts tables and starts them through the app, so every table is warm in that process,
as a table is in the gateway process that changed it last. Then, in the round:

- `GET /healthz` `4 x tables` times: CPU per call, the baseline (Flask's own work for
  any request; a move is answered below Flask, by `gateway.http.moves`);
- half the tables' four declares, with no timers: CPU per declare;
- the other half's, with a timer around each step: the CPU of each step, the time of
  the steps it calls taken out (thread CPU time; the timers cost a little, shown by
  the timed total against the untimed one).

Figures are medians over the rounds with their range, in microseconds of CPU. With a
`source` tree (`--against REV --steps`), the spawned process runs that tree's gateway
package instead of this one's (the rest, the benchmark's included, is this tree's).
"""

from __future__ import annotations

import functools
import io
import multiprocessing
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.gateway_http import ACCEPT_LANGUAGE_VARIABLE

# label -> (module, owner's dotted path in it or "", attribute); in calling order
STEPS: dict[str, tuple[str, str, str]] = {
    "the pipeline and the moves' endpoint: path, headers, body, metrics": ("", "", ""),
    "body: decoded and validated (memoised)": ("gateway.http.moves", "", "parse_json_body"),
    "service: token, events, history, the commit's record": (
        "gateway.service.tables",
        "TableService",
        "act",
    ),
    "warm state: the committed bytes decoded": ("gateway.adapters.warm", "WarmTables", "get"),
    "rules: the declare": ("gateway.games.guts", "", "declare"),
    "view: the table as the seat sees it": ("gateway.service.queries", "TableQueries", "present"),
    "commit: state and events encoded": ("gateway.adapters.store", "TableStore", "commit"),
    "Redis round trip: EVALSHA through redis-py": ("gateway.adapters.store", "TableStore", "_run"),
    "warm state: kept for the next move": ("gateway.adapters.warm", "TableReader", "committed"),
    "response: JSON body and headers": ("gateway.http.moves", "", "_response"),
}
OUTER = next(iter(STEPS))


class StepTimer:
    """Thread CPU time per step, each step's callees taken out of it."""

    def __init__(self) -> None:
        """No steps wrapped yet."""
        self.totals: Counter[str] = Counter()
        self._inner: list[int] = []  # per open step: CPU its timed callees used
        self._wrapped: list[tuple[Any, str, Any]] = []
        self.on = False

    def measure(self, label: str, call: Callable[[], Any]) -> Any:
        """Run `call` as step `label`."""
        if not self.on:
            return call()
        self._inner.append(0)
        started = time.thread_time_ns()
        try:
            return call()
        finally:
            spent = time.thread_time_ns() - started
            self.totals[label] += spent - self._inner.pop()
            if self._inner:
                self._inner[-1] += spent

    def wrap(self, owner: Any, name: str, label: str) -> None:
        """Time every call of `owner.name` as `label` while the timer is on."""
        original = getattr(owner, name)

        @functools.wraps(original)
        def timed(*args: Any, **kwargs: Any) -> Any:
            return self.measure(label, lambda: original(*args, **kwargs))

        self._wrapped.append((owner, name, owner.__dict__[name]))
        setattr(owner, name, timed)

    def unwrap(self) -> None:
        """Put every wrapped callable back."""
        for owner, name, original in reversed(self._wrapped):
            setattr(owner, name, original)
        self._wrapped.clear()

    @contextmanager
    def timing(self) -> Iterator[None]:
        """Timers on for the block."""
        self.on = True
        try:
            yield
        finally:
            self.on = False


def _environ(method: str, path: str, body: bytes = b"", token: str | None = None) -> dict[str, Any]:
    environ: dict[str, Any] = {
        "REQUEST_METHOD": method,
        "PATH_INFO": path,
        "QUERY_STRING": "",
        "SERVER_NAME": "127.0.0.1",
        "SERVER_PORT": "8000",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "REMOTE_ADDR": "127.0.0.1",
        "HTTP_HOST": "127.0.0.1:8000",
        "wsgi.url_scheme": "http",
        "wsgi.input": io.BytesIO(body),
        "wsgi.errors": sys.stderr,
        "wsgi.version": (1, 0),
        "wsgi.multithread": False,
        "wsgi.multiprocess": True,
        "wsgi.run_once": False,
    }
    if body:
        environ["CONTENT_LENGTH"] = str(len(body))
        environ["CONTENT_TYPE"] = "application/json"
    if token is not None:
        environ["HTTP_AUTHORIZATION"] = f"Bearer {token}"
    language = os.environ.get(ACCEPT_LANGUAGE_VARIABLE)  # --accept-language
    if language:
        environ["HTTP_ACCEPT_LANGUAGE"] = language
    return environ


def _call(app: Any, environ: dict[str, Any]) -> str:
    statuses: list[str] = []

    def start_response(status: str, headers: Any, exc_info: Any = None) -> None:
        statuses.append(status)

    for _ in app(environ, start_response):
        pass
    return statuses[0]


def _cpu_per_call(
    app: Any, environs: list[dict[str, Any]], expect: str, timer: StepTimer | None = None
) -> float:
    """Microseconds of this process's CPU per call of `environs`, each answered `expect`.

    With `timer` (on), each call is timed as the outermost step.
    """
    started = time.process_time()
    for environ in environs:
        call = functools.partial(_call, app, environ)
        status: str = call() if timer is None else timer.measure(OUTER, call)
        if not status.startswith(expect):
            raise RuntimeError(f"{environ['PATH_INFO']}: {status}, expected {expect}")
    return (time.process_time() - started) / max(1, len(environs)) * 1e6


def _measure(
    redis_url: str, evaluator_address: str, tables: int, rounds: int, shim: str | None = None
) -> dict[str, Any]:
    """The rounds, in this (spawned) process; the `gateway` package imported from the
    directory `shim` first, if given (`step_costs`)."""
    import importlib
    import json

    if shim is not None:
        if "gateway" in sys.modules:
            raise RuntimeError("the gateway package was imported already")
        sys.path.insert(0, shim)

    import gateway
    from bench.gateway_bench import GUTS_OPTIONS, PLAYERS
    from bench.gateway_inprocess import _settings, started_table
    from gateway.app import create_app
    from gateway.runtime.gc_policy import settle_after_load
    from gateway.settings import Settings

    settings: Settings = _settings(redis_url, evaluator_address)
    app = create_app(settings)
    http = app.test_client()
    settle_after_load(settings.gc_threshold)  # as in a gunicorn worker
    timer = StepTimer()
    for label, (module_name, owner_path, name) in STEPS.items():
        if module_name:
            owner: Any = importlib.import_module(module_name)
            for part in filter(None, owner_path.split(".")):
                owner = getattr(owner, part)
            timer.wrap(owner, name, label)
    body = json.dumps({"action": "declare", "choice": "in"}).encode()
    figures: dict[str, list[float]] = {"healthz": [], "declare": [], "declare_timed": []}
    steps: dict[str, list[float]] = {label: [] for label in STEPS}
    try:
        for _ in range(rounds):
            seats = []
            for _ in range(tables):
                table_id, tokens = started_table(http, GUTS_OPTIONS, PLAYERS, 1000)
                seats.append((f"/v1/tables/{table_id}", tokens))
            declares = [
                [
                    _environ("POST", f"{path}/actions", body, tokens[i])
                    for i in range(PLAYERS - 1)
                    for path, tokens in half
                ]
                for half in (seats[0::2], seats[1::2])
            ]
            healthz = [_environ("GET", "/healthz") for _ in range(4 * tables)]
            figures["healthz"].append(_cpu_per_call(app, healthz, "200"))
            figures["declare"].append(_cpu_per_call(app, declares[0], "200"))
            timer.totals.clear()
            with timer.timing():
                figures["declare_timed"].append(_cpu_per_call(app, declares[1], "200", timer))
            for label in STEPS:
                steps[label].append(timer.totals[label] / 1000 / max(1, len(declares[1])))
    finally:
        timer.unwrap()
        app.extensions["cardroom.service"].evaluator.close()
    return {"figures": figures, "steps": steps, "package": str(Path(gateway.__file__).parent)}


def step_costs(
    redis_url: str, evaluator_address: str, tables: int, rounds: int, source: Path | None = None
) -> dict[str, Any]:
    """Run the rounds in a spawned process (the gateway of the tree `source`, if given);
    medians and ranges of every figure."""
    from bench.gateway_bench import spread

    with (
        tempfile.TemporaryDirectory(prefix="cardroom-gateway-of-") as shim,
        ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool,
    ):
        if source is not None:
            # the tree's gateway package alone, none of its other code
            link = Path(shim) / "gateway"
            link.symlink_to(source.resolve() / "gateway", target_is_directory=True)
        job = (redis_url, evaluator_address, tables, rounds, None if source is None else shim)
        raw = pool.submit(_measure, *job).result()
    figures = {name: spread(values) for name, values in raw["figures"].items()}
    return {
        # where the gateway measured came from (a link to the tree's package, given one)
        "gateway_package": raw["package"],
        "tables_per_round": tables,
        "declares_per_round": 4 * tables,
        **figures,
        "steps": {label: spread(values) for label, values in raw["steps"].items()},
    }


def report(results: dict[str, Any]) -> None:
    """Print the step table."""
    healthz = results["healthz"]["median"]
    declare = results["declare"]["median"]
    timed = results["declare_timed"]["median"]
    print(
        f"\nwhere a warm declare's CPU goes, in process (no HTTP server), us; medians [min-max]"
        f" of {len(results['healthz']['rounds'])} rounds, {results['declares_per_round']:,}"
        f" declares each"
    )
    print(f"{'GET /healthz (the baseline)':56} {healthz:8.0f}")
    print(f"{'declare, no timers':56} {declare:8.0f}   healthz/declare {healthz / declare:.2f}")
    print(f"{'declare, timed step by step (the sum of the steps)':56} {timed:8.0f}")
    for label, figure in results["steps"].items():
        share = figure["median"] / timed if timed else 0.0
        print(
            f"  {label:54} {figure['median']:8.1f} [{figure['min']:.1f}-{figure['max']:.1f}]"
            f" {share:6.1%}"
        )
    framework = results["steps"][OUTER]["median"]
    print(
        f"a declare costs {declare - healthz:.0f} us more than /healthz; of the timed steps,"
        f" the moves' endpoint takes {framework:.0f} us of its own, /healthz {healthz:.0f} in all"
    )
