"""deploy/compose.yaml run by podman-compose, with the podman calls the tests make on it."""

from __future__ import annotations

import os
import subprocess
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from tests.support.processes import free_port

ROOT = Path(__file__).resolve().parents[2]
STATE = ROOT / "var" / "images"
COMPOSE = ROOT / "deploy" / "compose.yaml"
PROJECT = "cardroom-images"
SERVICES = ("redis", "evaluator", "gateway", "clock", "edge")


def podman(*arguments: str, timeout: float = 120, check: bool = True) -> str:
    """Run podman; its standard output (a failure shows both streams)."""
    done = subprocess.run(
        ["podman", *arguments], capture_output=True, text=True, timeout=timeout, check=False
    )
    if check and done.returncode != 0:
        raise AssertionError(f"podman {' '.join(arguments)}: {done.stdout}\n{done.stderr}")
    return done.stdout


def wait_until(predicate: Callable[[], bool], seconds: float, what: str) -> None:
    """Call `predicate` every half second until it returns True; fail after `seconds`."""
    deadline = time.monotonic() + seconds
    last: object = None
    while time.monotonic() < deadline:
        try:
            if predicate():
                return
        except (OSError, AssertionError) as error:
            last = error
        time.sleep(0.5)
    raise AssertionError(f"{what}: not within {seconds} s (last: {last!r})")


@dataclass
class Stack:
    """The compose project `cardroom-images`, its edge published on `port` (loopback)."""

    port: int

    @classmethod
    def on_free_port(cls) -> Stack:
        """A stack whose edge will listen on a free loopback port."""
        return cls(free_port())

    @property
    def url(self) -> str:
        """The edge's URL: the only way in, as a client has it."""
        return f"http://127.0.0.1:{self.port}"

    def compose(self, *arguments: str, timeout: float = 300) -> str:
        """Run podman-compose on deploy/compose.yaml as this project."""
        environment = {**os.environ, "CARDROOM_PORT": str(self.port)}
        done = subprocess.run(
            [str(STATE / "tools" / "bin" / "podman-compose"), "-p", PROJECT, "-f", str(COMPOSE),
             *arguments],
            capture_output=True, text=True, timeout=timeout, env=environment, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            raise AssertionError(f"podman-compose {' '.join(arguments)}:\n{done.stderr[-4000:]}")
        return done.stdout

    def container(self, service: str) -> str:
        """The container's name (podman-compose: project_service_1)."""
        return f"{PROJECT}_{service}_1"

    def ready(self) -> bool:
        """True when the gateway, through the edge, says it can serve."""
        with urllib.request.urlopen(f"{self.url}/readyz", timeout=5) as reply:
            return bool(reply.status == 200)

    def up(self) -> None:
        """Start every service from the built images and wait for /readyz through the edge.

        podman-compose starts the services in dependency order but does not wait for
        `service_healthy`, so readiness is polled here.
        """
        self.compose("down", "-v", "-t", "5")
        self.compose("up", "-d", "--no-build")
        try:
            wait_until(self.ready, 180, "/readyz through the edge")
        except AssertionError:
            self.save_logs()
            raise

    def healthy(self, service: str) -> bool:
        """Run the service's own health check once (no systemd here to run it on a timer)."""
        done = subprocess.run(
            ["podman", "healthcheck", "run", self.container(service)],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip
        return done.returncode == 0

    def save_logs(self) -> None:
        """Every container's log, under var/images/logs/, for a failure's post-mortem."""
        logs = STATE / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        for service in SERVICES:
            done = subprocess.run(
                ["podman", "logs", self.container(service)],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=30,
                check=False,
            )  # fmt: skip
            (logs / f"{service}.log").write_text(done.stdout)

    def down(self) -> None:
        """Save the logs, then stop and remove the containers, networks and volumes."""
        self.save_logs()
        self.compose("down", "-v", "-t", "10")
