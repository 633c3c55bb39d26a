"""`make bench-gateway ARGS=--steps`: where a warm declare's CPU goes, step by step.

The gateway's app runs in a process of its own (spawned; the garbage-collection policy
of a gunicorn worker applied, clock and rate limits off) and is called as WSGI, with
no HTTP server around it, on the benchmark's Redis. Each round creates `tables` 5-seat
Guts tables and starts them through the app, so every table is warm in that process,
as a table is in the gateway process that changed it last. Then, in the round:

- `GET /healthz` `4 x tables` times: CPU per call, the baseline (Flask's own work for
  any request; a move is answered below Flask, by `api.http.moves`);
- half the tables' four declares, with no timers: CPU per declare;
- the other half's, with a timer around each step: the CPU of each step, the time of
  the steps it calls taken out (thread CPU time; the timers cost a little, shown by
  the timed total against the untimed one).

Figures are medians over the rounds with their range, in microseconds of CPU. With a
`source` tree (`--against REV --steps`), the spawned process runs that tree's gateway
package instead of this one's (the rest, the benchmark's included, is this tree's).

Each step names where it is timed as candidates, "module:owner.attribute" with the
module relative to the gateway's package, newest first: the first one the tree measured
holds is wrapped, so a step whose code moved or was renamed is found in the trees
before and after the move once its new place is added to its candidates. A step with no
candidate in that tree is reported absent, and its time stays in the steps around it.
"""

from __future__ import annotations

import functools
import importlib
import io
import json
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

from bench.gateway.client import ACCEPT_LANGUAGE_VARIABLE
from bench.gateway.inprocess import started_table
from bench.gateway.plan import GUTS_OPTIONS, PLAYERS
from bench.gateway.tree import (
    create_app,
    in_process_settings,
    link_package,
    settle_after_load,
    use_package,
)
from bench.measure import spread

# the outermost step, timed around each call of the app itself: it has no candidates
OUTER = "the pipeline and the moves' endpoint: path, headers, body, metrics"
# label -> where the step is timed, "module:owner.attribute" (the module relative to the
# gateway's package, the owner a dotted path in it, none for the module's own function),
# the first one the tree holds; in calling order
STEPS: dict[str, tuple[str, ...]] = {
    OUTER: (),
    "body: decoded and validated (memoised)": ("http.moves:parse_json_body",),
    "service: token, events, history, the commit's record": ("service.tables:TableService.act",),
    "warm state: the committed bytes decoded": (
        "adapters.warm:Committed.record",
        "adapters.warm:WarmTables.get",
    ),
    "rules: the declare": ("games.guts:declare",),
    "view: the table as the seat sees it": ("service.queries:TableQueries.present",),
    "commit: state and events encoded": ("adapters.store:TableStore.commit",),
    "Redis round trip: EVALSHA through redis-py": ("adapters.store:TableStore._run",),
    "warm state: kept for the next move": ("adapters.warm:TableReader.committed",),
    "response: JSON body and headers": ("http.moves:_response",),
}


def located(package: str, candidates: tuple[str, ...]) -> tuple[Any, str, str] | None:
    """The first of `candidates` that the gateway's `package` holds: the object that
    holds it (a module or a class), the attribute's name and the candidate; None when
    the package holds none of them."""
    for candidate in candidates:
        module_name, _, path = candidate.partition(":")
        *owners, name = path.split(".")
        full_name = f"{package}.{module_name}"
        try:
            owner: Any = importlib.import_module(full_name)
        except ModuleNotFoundError as error:
            if error.name is None or not (full_name + ".").startswith(error.name + "."):
                raise  # the module is there but something it imports is not
            continue
        for part in owners:
            owner = getattr(owner, part, None)
        if owner is not None and callable(getattr(owner, name, None)):
            return owner, name, candidate
    return None


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

        # what the owner itself held (None: the attribute was inherited)
        self._wrapped.append((owner, name, vars(owner).get(name)))
        setattr(owner, name, timed)

    def unwrap(self) -> None:
        """Put every wrapped callable back."""
        for owner, name, original in reversed(self._wrapped):
            if original is None:
                delattr(owner, name)
            else:
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
    """The rounds, in this (spawned) process; the gateway's package imported from the
    folder `shim` first, if given (`step_costs`)."""
    package = use_package(shim)
    gateway = importlib.import_module(package)
    settings = in_process_settings(redis_url, evaluator_address, package)
    app = create_app(settings, package)
    http = app.test_client()
    settle_after_load(settings, package)  # as in a gunicorn worker
    timer = StepTimer()
    targets: dict[str, str] = {}
    for label, candidates in STEPS.items():
        found = located(package, candidates)
        if found is not None:
            owner, name, targets[label] = found
            timer.wrap(owner, name, label)
    timed = [OUTER, *targets]
    body = json.dumps({"action": "declare", "choice": "in"}).encode()
    figures: dict[str, list[float]] = {"healthz": [], "declare": [], "declare_timed": []}
    steps: dict[str, list[float]] = {label: [] for label in timed}
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
            for label in timed:
                steps[label].append(timer.totals[label] / 1000 / max(1, len(declares[1])))
    finally:
        timer.unwrap()
        app.extensions["cardroom.service"].evaluator.close()
    return {
        "figures": figures,
        "steps": steps,
        "targets": targets,
        "absent": [label for label in STEPS if label not in timed],
        "package": str(Path(str(gateway.__file__)).parent),
    }


def step_costs(
    redis_url: str, evaluator_address: str, tables: int, rounds: int, source: Path | None = None
) -> dict[str, Any]:
    """Run the rounds in a spawned process (the gateway of the tree `source`, if given);
    medians and ranges of every figure."""
    with (
        tempfile.TemporaryDirectory(prefix="cardroom-gateway-of-") as shim,
        ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool,
    ):
        if source is not None:
            link_package(source, Path(shim))
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
        # where each step was timed in that tree, and the steps it holds no place for
        "targets": raw["targets"],
        "absent": raw["absent"],
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
    for label in results.get("absent", []):
        print(f"  {label:54} {'absent':>8} (none of its places is in this tree)")
    framework = results["steps"][OUTER]["median"]
    print(
        f"a declare costs {declare - healthz:.0f} us more than /healthz; of the timed steps,"
        f" the moves' endpoint takes {framework:.0f} us of its own, /healthz {healthz:.0f} in all"
    )
