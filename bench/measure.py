"""What every benchmark measures with: percentiles, medians with their range, runs of
several settings taken in turns, the CPU time of processes, and a figure's printed form.

A benchmark shares two cores with the server it measures, so its figures are medians
of rounds with the range beside them, and settings are compared in alternating runs
(`alternating_runs`) rather than one after the other.
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar

# where every benchmark writes its JSON (ignored by git)
RESULTS = Path(__file__).parent / "results"

Figures = dict[str, float]
Setting = TypeVar("Setting")


def percentile(values: list[float], fraction: float) -> float:
    """The nearest-rank percentile of `values` (0 when there are none)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(fraction * len(ordered)) - 1))]


def spread(values: list[float]) -> dict[str, Any]:
    """Median, range and every round's value."""
    return {
        "median": statistics.median(values),
        "min": min(values),
        "max": max(values),
        "rounds": values,
    }


def format_spread(values: dict[str, Any], digits: int = 0) -> str:
    """A `spread` as printed: the median, then the range in brackets."""
    return (
        f"{values['median']:,.{digits}f} [{values['min']:,.{digits}f}-{values['max']:,.{digits}f}]"
    )


def alternating_runs(
    settings: dict[str, Setting],
    pairs: int,
    run: Callable[[Setting], Figures],
    describe: Callable[[Figures], str],
    log: Callable[[str], None],
) -> tuple[dict[str, list[Figures]], dict[str, Figures]]:
    """`pairs` runs of each setting (name -> what `run` is given), alternating, the
    order reversed every other pair (A B, B A, A B, ...), so that a drift of the
    machine's speed falls on every setting alike; the runs of each setting and the
    median of each of their figures. Each run is logged by `describe`."""
    runs: dict[str, list[Figures]] = {name: [] for name in settings}
    for pair in range(pairs):
        order = list(settings.items())
        for name, env in order[::-1] if pair % 2 else order:
            started = time.monotonic()
            figures = run(env)
            runs[name].append(figures)
            log(f"  {name} (run {pair + 1}): {describe(figures)}"
                f" ({time.monotonic() - started:.0f} s)")  # fmt: skip
    medians = {
        name: {key: statistics.median(run[key] for run in done) for key in done[0]}
        for name, done in runs.items()
    }
    return runs, medians


def ratios(after: Figures, before: Figures, skip: tuple[str, ...] = ("errors",)) -> Figures:
    """Each figure of `after` over the same of `before` (figures in `skip`, and those
    `before` has at zero, have none)."""
    return {key: after[key] / before[key] for key in after if key not in skip and before[key]}


def cpu_seconds(pids: list[int]) -> float:
    """User plus system CPU seconds used so far by these processes (gone ones count 0)."""
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0.0
    for pid in pids:
        try:
            stat = Path(f"/proc/{pid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()
        total += (int(fields[11]) + int(fields[12])) / ticks
    return total


class Processes(Protocol):
    """Something that runs processes in roles (a benchmark's service)."""

    def pids(self) -> dict[str, list[int]]:
        """Process ids by role."""
        ...


class CpuMeter:
    """CPU seconds used by the processes of each role between `start` and `stop`."""

    def __init__(self, service: Processes) -> None:
        """Meter this service."""
        self.service = service
        self.before: dict[str, float] = {}
        self.seconds: dict[str, float] = {}
        self.started = 0.0

    def start(self) -> None:
        """Take the first reading."""
        self.before = {role: cpu_seconds(pids) for role, pids in self.service.pids().items()}
        self.started = time.monotonic()

    def stop(
        self, load_cpu: float, idle: Mapping[str, float] | None = None, waited: float = 0.0
    ) -> dict[str, float]:
        """Cores used on average by each role since `start` (1.0 is one core); less, with
        `idle` (`idle_cores`), what each role uses with nothing to do over the `waited`
        seconds of the span that only waited for it.

        The CPU seconds themselves stay in `seconds`.
        """
        wall = time.monotonic() - self.started
        idle = idle or {}
        self.seconds = {
            role: max(0.0, cpu_seconds(pids) - self.before.get(role, 0.0)
                      - idle.get(role, 0.0) * waited)
            for role, pids in self.service.pids().items()
        }  # fmt: skip
        self.seconds["load generator"] = load_cpu
        return {role: spent / wall for role, spent in self.seconds.items()}

    def idle_cores(self, seconds: float = 2.0) -> dict[str, float]:
        """Cores each role uses over `seconds` with no load (a clock ticking with nothing
        due, heartbeats)."""
        self.start()
        time.sleep(seconds)
        return self.stop(0.0)

    def per_request(self, requests: int) -> dict[str, float]:
        """Microseconds of CPU per request of the last metered span, by role and in all."""
        spent = {role: seconds / max(1, requests) * 1e6 for role, seconds in self.seconds.items()}
        return spent | {"all": sum(spent.values())}
