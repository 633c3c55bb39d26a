"""What the deployment files in deploy/ say, read the way the container runtime reads them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
COMPOSE = ROOT / "deploy" / "compose.yaml"


def deployed_redis_persistence() -> list[str]:
    """The persistence flags of the Redis that deploy/compose.yaml runs."""
    import yaml

    document = yaml.safe_load(COMPOSE.read_text())
    command = [str(part) for part in document["services"]["redis"]["command"]]
    flags: list[str] = []
    for name in ("--appendonly", "--appendfsync", "--save"):
        if name in command:
            flags += [name, command[command.index(name) + 1]]
    return flags


def image_healthcheck(dockerfile: str) -> list[str]:
    """The HEALTHCHECK command of an image in deploy/, as the container runtime runs it."""
    text = (ROOT / "deploy" / dockerfile).read_text().replace("\\\n", " ")
    (check,) = [line for line in text.splitlines() if line.startswith("HEALTHCHECK ")]
    command = json.loads(check[check.index("[") :])
    return [sys.executable, *command[1:]]


def run_with(command: list[str], **environment: str) -> int:
    """Run `command` with these variables added to the environment; its exit code."""
    return subprocess.run(
        command, env={**os.environ, **environment}, capture_output=True, timeout=120, check=False
    ).returncode
