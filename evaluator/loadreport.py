"""The load tool's reports (text, JSON, CSV) and thresholds, from its HdrHistograms."""

from __future__ import annotations

import csv
import io
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from hdrh.histogram import HdrHistogram

from evaluator.loadrun import Recorder, Stage

PERCENTILES: tuple[tuple[str, float], ...] = (
    ("p50_ms", 50.0),
    ("p90_ms", 90.0),
    ("p99_ms", 99.0),
    ("p999_ms", 99.9),
    ("p9999_ms", 99.99),
)
_UNITS = {"us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1000.0}


@dataclass
class Report:
    """What a run, or one stage of it, measured; latencies in milliseconds."""

    requests: int
    hands: int
    errors: int
    seconds: float
    requests_per_second: float
    hands_per_second: float
    p50_ms: float
    p90_ms: float
    p99_ms: float
    p999_ms: float
    p9999_ms: float
    max_ms: float
    label: str = "all"
    concurrency: int | None = None
    rate: float | None = None
    rate_end: float | None = None
    send_lag_p99_ms: float | None = None
    error_rate: float = 0.0
    histogram: str = ""
    error_samples: list[str] = field(default_factory=list)


def summarise(recorders: list[Recorder], stage: Stage | None = None) -> Report:
    """The report of one stage's recorder, or of several summed (`stage` None)."""
    latency = HdrHistogram(1, 600_000_000, 3)
    lag = HdrHistogram(1, 600_000_000, 3)
    for recorder in recorders:
        latency.add(recorder.latency)
        lag.add(recorder.send_lag)
    requests = sum(r.requests for r in recorders)
    errors = sum(r.errors for r in recorders)
    seconds = sum(r.seconds for r in recorders) or 1e-9
    percentiles = {
        name: latency.get_value_at_percentile(q) / 1000 if requests else 0.0
        for name, q in PERCENTILES
    }
    open_loop = stage is not None and stage.rate is not None
    return Report(
        requests=requests,
        hands=sum(r.hands for r in recorders),
        errors=errors,
        seconds=seconds,
        requests_per_second=requests / seconds,
        hands_per_second=sum(r.hands for r in recorders) / seconds,
        max_ms=latency.get_max_value() / 1000 if requests else 0.0,
        label=stage.label if stage else "all",
        concurrency=stage.concurrency if stage else None,
        rate=stage.rate if stage else None,
        rate_end=stage.rate_end if stage else None,
        send_lag_p99_ms=lag.get_value_at_percentile(99) / 1000 if open_loop else None,
        error_rate=errors / (requests + errors) if requests + errors else 0.0,
        histogram=latency.encode().decode() if requests else "",
        error_samples=[sample for r in recorders for sample in r.error_samples][:5],
        **percentiles,
    )


@dataclass(frozen=True)
class Threshold:
    """A limit that fails the run when crossed: a percentile's latency, or errors."""

    name: str
    limit: float

    def actual(self, report: Report) -> float:
        """The run's figure this threshold limits."""
        if self.name == "errors":
            return report.error_rate
        return float(getattr(report, f"{self.name}_ms"))

    def met(self, report: Report) -> bool:
        """True when the run stayed within the limit."""
        return self.actual(report) <= self.limit

    def describe(self, report: Report) -> str:
        """A line saying the limit, the run's figure and whether it was met."""
        verdict = "met" if self.met(report) else "FAILED"
        if self.name == "errors":
            return f"errors {report.error_rate:.4%} (limit {self.limit:.4%}): {verdict}"
        return f"{self.name} {self.actual(report):.3f} ms (limit {self.limit:.3f} ms): {verdict}"


def parse_duration_ms(text: str) -> float:
    """`20ms`, `1.5s`, `500us` (a bare number is milliseconds) as milliseconds."""
    found = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(us|µs|ms|s)?\s*", text)
    if found is None:
        raise ValueError(f"not a duration: {text!r} (say 20ms, 1.5s or 500us)")
    return float(found.group(1)) * _UNITS[found.group(2) or "ms"]


def parse_fraction(text: str) -> float:
    """`0.1%` or `0.001` as a fraction."""
    found = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(%?)\s*", text)
    if found is None:
        raise ValueError(f"not a share: {text!r} (say 0.1% or 0.001)")
    value = float(found.group(1))
    return value / 100 if found.group(2) else value


def as_json(
    overall: Report, stages: list[Report], service: str, thresholds: list[Threshold]
) -> dict[str, Any]:
    """The whole report as one JSON object: the overall figures at the top."""
    return {
        **asdict(overall),
        "service": service,
        "stages": [asdict(stage) for stage in stages],
        "thresholds": [
            {
                "name": t.name,
                "limit": t.limit,
                "actual": t.actual(overall),
                "met": t.met(overall),
            }
            for t in thresholds
        ],
    }


CSV_COLUMNS = (
    "label",
    "concurrency",
    "rate",
    "rate_end",
    "requests",
    "errors",
    "seconds",
    "requests_per_second",
    "hands_per_second",
    "p50_ms",
    "p90_ms",
    "p99_ms",
    "p999_ms",
    "p9999_ms",
    "max_ms",
    "send_lag_p99_ms",
)


def as_csv(overall: Report, stages: list[Report]) -> str:
    """One row a stage, then the whole run's (`all`)."""
    output = io.StringIO()
    writer = csv.DictWriter(output, CSV_COLUMNS, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for report in [*stages, overall] if len(stages) > 1 else stages:
        writer.writerow(asdict(report))
    return output.getvalue()


def as_text(overall: Report, stages: list[Report]) -> str:
    """For people: a row a stage when there are several, then the whole run."""
    lines = []
    if len(stages) > 1:
        lines.append(
            f"{'stage':>18} {'requests/s':>11} {'hands/s':>13} {'errors':>7} {'p50':>8} {'p99':>8}"
            f" {'p99.9':>8} {'p99.99':>8} {'max':>8}  (ms)"
        )
        for stage in stages:
            lines.append(
                f"{stage.label:>18} {stage.requests_per_second:11,.0f}"
                f" {stage.hands_per_second:13,.0f} {stage.errors:7,} {stage.p50_ms:8.3f}"
                f" {stage.p99_ms:8.3f} {stage.p999_ms:8.3f}"
                f" {stage.p9999_ms:8.3f} {stage.max_ms:8.3f}"
            )
    lines.append(
        f"requests {overall.requests:,}  errors {overall.errors:,}  in {overall.seconds:.2f} s\n"
        f"throughput {overall.requests_per_second:,.0f} requests/s, "
        f"{overall.hands_per_second:,.0f} hands/s\n"
        f"latency ms  p50 {overall.p50_ms:.3f}  p90 {overall.p90_ms:.3f}  "
        f"p99 {overall.p99_ms:.3f}  p99.9 {overall.p999_ms:.3f}  p99.99 {overall.p9999_ms:.3f}  "
        f"max {overall.max_ms:.3f}"
    )
    lags = [s.send_lag_p99_ms for s in stages if s.send_lag_p99_ms is not None]
    if lags:
        lines.append(
            f"sent late by the client, p99 of the worst stage: {max(lags):.3f} ms"
            " (large: the client, not the server, could not keep the rate)"
        )
    return "\n".join(lines)
