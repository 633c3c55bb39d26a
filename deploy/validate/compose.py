"""The compose services: hardened as the pods are (checkov reads no compose file).

Read-only, capabilities dropped, no new privileges, a numeric non-root user; healthchecks
to wait on, commands that name modules that exist, the environment the code reads, the ports
the service listens on, and an EVALUATOR_ADDR that names a service and its port.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from deploy.validate.commands import (
    LISTEN_VARIABLE,
    PACKAGES,
    _environment_problems,
    _port,
    command_problems,
    known_environment,
)
from deploy.validate.files import DEPLOY, Document


def _runs_our_code(service: Mapping[str, Any]) -> bool:
    """Whether a compose service's image is built from a Dockerfile that copies our packages."""
    build = service.get("build")
    if not isinstance(build, dict):
        return False
    path = DEPLOY / build.get("context", ".") / build.get("dockerfile", "Dockerfile")
    text = path.read_text(encoding="utf-8") if path.is_file() else ""
    return any(re.search(rf"^COPY\s.*\b{package}/", text, re.M) for package in PACKAGES)


def built_images(compose: Document) -> dict[str, str]:
    """The images compose builds to run this repository's code, by repository name."""
    return {
        str(service["image"]).rpartition(":")[0]: name
        for name, service in (compose.get("services") or {}).items()
        if "image" in service and _runs_our_code(service)
    }


def _listens(environment: Mapping[str, Any]) -> set[int]:
    return {p for k, v in environment.items() if LISTEN_VARIABLE.fullmatch(k) and (p := _port(v))}


def check_compose(compose: Document, names: frozenset[str] | None = None) -> list[str]:
    """Hardening, healthchecks, start order, environment and ports of the compose services."""
    names = known_environment() if names is None else names
    services: dict[str, Any] = compose.get("services") or {}
    problems = []
    for name, service in services.items():
        where = f"deploy/compose.yaml: service {name}"
        user = str(service.get("user", "")).split(":")[0]
        for broken, why in (
            (service.get("read_only") is not True, "read_only must be true"),
            ("ALL" not in (service.get("cap_drop") or []), "cap_drop must include ALL"),
            (
                "no-new-privileges:true" not in (service.get("security_opt") or []),
                "security_opt needs no-new-privileges:true",
            ),
            (not user.isdigit() or int(user) == 0, "user must be a numeric non-root UID"),
            (bool(service.get("privileged")), "privileged is not allowed"),
        ):
            if broken:
                problems.append(f"{where}: {why}")
        healthcheck = service.get("healthcheck") or {}
        test = healthcheck.get("test") or []
        if not healthcheck.get("disable") and not test:
            problems.append(f"{where}: no healthcheck")
        problems += command_problems(
            f"{where}: healthcheck", test[1:] if test[:1] == ["CMD"] else []
        )
        problems += command_problems(f"{where}: command", service.get("command") or [])
        for dependency, condition in (service.get("depends_on") or {}).items():
            if dependency not in services:
                problems.append(f"{where}: depends on unknown service {dependency!r}")
            elif (condition or {}).get("condition") != "service_healthy":
                problems.append(f"{where}: depends_on {dependency} needs service_healthy")
            elif (services[dependency].get("healthcheck") or {}).get("disable") or not services[
                dependency
            ].get("healthcheck"):
                problems.append(f"{where}: {dependency} has no healthcheck to wait for")
        build = service.get("build")
        if (
            isinstance(build, dict)
            and not (
                DEPLOY / build.get("context", ".") / build.get("dockerfile", "Dockerfile")
            ).is_file()
        ):
            problems.append(f"{where}: build dockerfile {build.get('dockerfile')} is missing")
        if not _runs_our_code(service):
            continue  # someone else's program (Redis, a proxy): its environment is its own
        environment = service.get("environment") or {}
        if isinstance(environment, list):
            environment = dict(item.partition("=")[::2] for item in environment)
        tmpfs = service.get("tmpfs") or []
        problems += _environment_problems(
            where, environment, names, set([tmpfs] if isinstance(tmpfs, str) else tmpfs)
        )
        listening = _listens(environment)
        for published in service.get("ports") or []:
            target = published.get("target") if isinstance(published, dict) else _port(published)
            if listening and target not in listening:
                problems.append(
                    f"{where}: publishes port {target}, the service listens on {sorted(listening)}"
                )
        address = str(environment.get("EVALUATOR_ADDR", ""))
        host, _, port = re.sub(r"^dns:///", "", address).rpartition(":")
        if address and host not in services:
            problems.append(f"{where}: EVALUATOR_ADDR names no service {host!r}")
        elif (
            address
            and _listens(services[host].get("environment") or {})
            and int(port) not in _listens(services[host].get("environment") or {})
        ):
            problems.append(f"{where}: EVALUATOR_ADDR port {port} is not one {host} listens on")
    return problems
