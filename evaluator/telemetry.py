"""Prometheus metrics and JSON logs of the evaluator."""

from __future__ import annotations

import logging
import sys
import time
from typing import ClassVar

from prometheus_client import CollectorRegistry, Counter, Histogram
from pythonjsonlogger.json import JsonFormatter

_GAME_NAMES = {0: "unspecified", 1: "guts2", 2: "guts3", 3: "paiute"}
_METHODS = ("Evaluate", "EvaluateStream", "Showdown", "ShowdownBatch", "Odds")


class Telemetry:
    """Calls, hands and latency per method, in a registry of their own."""

    BUCKETS: ClassVar[tuple[float, ...]] = (
        0.0001,
        0.00025,
        0.0005,
        0.001,
        0.0025,
        0.005,
        0.01,
        0.025,
        0.05,
        0.1,
        0.25,
        1.0,
        5.0,
    )

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        """Create the metrics (in a fresh registry unless one is given)."""
        self.registry = registry or CollectorRegistry()
        self.calls = Counter(
            "cardroom_evaluator_calls",
            "Requests (stream messages count one each) by method and outcome.",
            ["method", "outcome"],
            registry=self.registry,
        )
        self.hands = Counter(
            "cardroom_evaluator_hands",
            "Hands ranked, by game.",
            ["game"],
            registry=self.registry,
        )
        self.latency = Histogram(
            "cardroom_evaluator_latency_seconds",
            "Time to answer one request (one stream message), by method.",
            ["method"],
            buckets=self.BUCKETS,
            registry=self.registry,
        )
        # label lookups cost more than the increments: bind them once
        self._ok = {m: self.calls.labels(m, "ok") for m in _METHODS}
        self._faults = {m: self.calls.labels(m, "invalid_argument") for m in _METHODS}
        self._latency = {m: self.latency.labels(m) for m in _METHODS}
        self._hands = {g: self.hands.labels(name) for g, name in _GAME_NAMES.items()}

    def done(self, method: str, started: float, game: int, hands: int) -> None:
        """Record one answered request."""
        self._ok[method].inc()
        self._latency[method].observe(time.perf_counter() - started)
        self._hands[game if game in self._hands else 0].inc(hands)

    def fault(self, method: str) -> None:
        """Record one refused request."""
        self._faults[method].inc()


def configure_logging(level: str) -> None:
    """Send JSON log lines (time, level, logger, message, extras) to standard error."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonFormatter(
            "{asctime}{levelname}{name}{message}",
            style="{",
            rename_fields={"levelname": "level", "name": "logger", "asctime": "time"},
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
