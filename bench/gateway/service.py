"""The whole service for a benchmark: a private Redis, the evaluator and gunicorn.

Each process listens on a free loopback port and is stopped when the benchmark ends;
the processes are the tests' harnesses (tests/support/processes.py) with a benchmark's
settings, and `Service.pids` names them by role, so that a benchmark can say which
process used the machine (`bench.measure.CpuMeter`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.servers import EvaluatorServer, RedisServer, ReplicaServer
from tests.support.processes import ROOT, GunicornGateway


@dataclass(frozen=True)
class GatewayConfig:
    """How gunicorn runs the gateway in a benchmark."""

    workers: int = 2
    threads: int = 32
    worker_class: str = "gevent"
    clock_interval: float = 0.05
    extra_env: dict[str, str] = field(default_factory=dict)
    # the tree whose gateway runs (`--against REV` checks another revision out)
    source: Path | None = None
    # gunicorn's config module instead of the tree's own (`--sections`)
    gunicorn_config: str | None = None

    @property
    def label(self) -> str:
        """A short name for tables of results."""
        if self.worker_class == "gthread":
            return f"gthread, {self.workers} worker(s) x {self.threads} threads"
        return f"{self.worker_class}, {self.workers} worker(s)"


class Gateway(GunicornGateway):
    """The gateway under gunicorn on a free loopback port, with its clock on."""

    def __init__(self, config: GatewayConfig, redis_url: str, evaluator_address: str) -> None:
        """Start gunicorn and wait until every worker runs and /readyz answers."""
        self.config = config
        # only variables here: the keyword options of GunicornGateway are not overridden
        variables: dict[str, Any] = {
            "GATEWAY_WORKER_CLASS": config.worker_class,
            "CLOCK": "true",
            "CLOCK_INTERVAL": str(config.clock_interval),
            "LOG_LEVEL": "warning",
            # a benchmark is one address sending far more than any user would, and
            # creating a player for every seat it takes
            "RATE_LIMIT_PER_ADDRESS": "0",
            "RATE_LIMIT_PER_TOKEN": "0",
            "PLAYERS_PER_ADDRESS": "0",
            # its players buy in 100,000 chips, at many tables each
            "PLAY_MONEY_GRANT": str(10**12),
            # a gateway is stopped only between measurements: the streams the last one
            # left open are not waited for
            "GATEWAY_GRACEFUL_TIMEOUT": "3",
            **config.extra_env,
        }
        super().__init__(
            redis_url,
            evaluator_address,
            None,
            config.workers,
            config.threads,
            ready="/readyz",
            defaults={},
            source=config.source or ROOT,
            **variables,
        )
        self.environment.pop("PROMETHEUS_MULTIPROC_DIR", None)
        try:
            self.start()
        except BaseException:
            self.stop()
            raise

    def arguments(self) -> list[str]:
        """The tree's gunicorn arguments, with the config module `gunicorn_config` instead
        of its own if given."""
        arguments = super().arguments()
        if self.config.gunicorn_config is not None:
            arguments[1] = self.config.gunicorn_config
        return arguments

    def worker_pids(self) -> list[int]:
        """The gunicorn workers' process ids."""
        return self.workers()

    def stop(self, grace: float = 40) -> int | None:
        """SIGTERM, letting requests in flight finish."""
        return super().stop(grace)


class Service:
    """Redis, evaluator and gateway together; `restart_gateway` swaps the gateway only."""

    def __init__(self, config: GatewayConfig, durable: bool = False, replicas: int = 0) -> None:
        """Start all three (Redis fsyncing every write with `durable`, with `replicas`
        replicas of its own in sync)."""
        self.redis = RedisServer(durable)
        self.replicas = [ReplicaServer(self.redis) for _ in range(replicas)]
        try:
            self.evaluator = EvaluatorServer()
        except BaseException:
            self._stop_redis()
            raise
        self.gateway: Gateway | None = None
        try:
            self.gateway = Gateway(config, self.redis.url, self.evaluator.address)
        except BaseException:
            self.stop()
            raise

    @property
    def url(self) -> str:
        """The gateway's base URL."""
        assert self.gateway is not None
        return self.gateway.url

    def restart_gateway(self, config: GatewayConfig) -> None:
        """Stop the gateway and start one with another configuration on the same Redis."""
        if self.gateway is not None:
            self.gateway.stop()
            self.gateway = None
        self.gateway = Gateway(config, self.redis.url, self.evaluator.address)

    def pids(self) -> dict[str, list[int]]:
        """Process ids by role, for CPU accounting."""
        assert self.gateway is not None
        assert self.redis.process is not None
        assert self.evaluator.process is not None
        return {
            "gateway": self.gateway.pids(),
            "redis": [self.redis.process.pid],
            "evaluator": [self.evaluator.process.pid],
        }

    def stop(self) -> None:
        """Stop everything that was started."""
        if self.gateway is not None:
            self.gateway.stop()
        self.evaluator.stop()
        self._stop_redis()

    def _stop_redis(self) -> None:
        for replica in self.replicas:
            replica.stop()
        self.redis.stop()
