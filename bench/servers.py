"""The private servers a benchmark starts: a Redis (and its replicas) and the evaluator.

Each listens on a free loopback port and is stopped when the benchmark ends; they are
the tests' harnesses (tests/support/processes.py) with a benchmark's settings.
"""

from __future__ import annotations

import tempfile

import redis

from tests.support.processes import DURABLE, VOLATILE, EvaluatorProcess, RedisProcess, poll


class RedisServer(RedisProcess):
    """A private redis-server on a free loopback port; `durable` fsyncs every write."""

    def __init__(self, durable: bool = False) -> None:
        """Start it in a temporary directory and wait until it answers."""
        self._directory = tempfile.TemporaryDirectory(prefix="cardroom-bench-redis-")
        super().__init__(self._directory.name, flags=DURABLE if durable else VOLATILE)
        self.start()

    def stop(self) -> None:
        """Stop the server and remove its directory."""
        super().stop()
        self._directory.cleanup()


class ReplicaServer(RedisProcess):
    """A replica of `primary` on a free loopback port, started and in sync."""

    def __init__(self, primary: RedisServer) -> None:
        """Start it in a temporary directory and wait until its link to `primary` is up."""
        self._directory = tempfile.TemporaryDirectory(prefix="cardroom-bench-replica-")
        flags = (*VOLATILE, "--replicaof", "127.0.0.1", str(primary.port))
        super().__init__(self._directory.name, flags=flags)
        self.start()
        poll(self._in_sync, 30, "the replica in sync")

    def _in_sync(self) -> bool:
        with redis.Redis(port=self.port, decode_responses=True) as client:
            return bool(client.info("replication").get("master_link_status") == "up")

    def stop(self) -> None:
        """Stop the server and remove its directory."""
        super().stop()
        self._directory.cleanup()


class EvaluatorServer(EvaluatorProcess):
    """`python -m evaluator` on a free loopback port, logging warnings to this terminal."""

    def __init__(self, processes: int = 1) -> None:
        """Start it (of `processes` processes) and wait until it answers a Ping."""
        super().__init__(None, metrics_port=0, grace=None, processes=processes)
        self.start(log_level="warning")
