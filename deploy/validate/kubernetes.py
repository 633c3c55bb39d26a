"""The cross-references inside each pod, and the entry point of every Kubernetes check.

A pod's ConfigMaps, Secrets, ServiceAccount and volumes are defined here; its containers are
given only variables the code reads, declare the ports they listen on and probe, have the
writable paths the code needs, the files their `*_FILE` variables name on a volume mounted
whole (a subPath mount never sees an update of its Secret), and grace periods that cover the
graceful timeouts; the kustomization lists every manifest; no manifest sets a namespace.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path, PurePosixPath
from typing import Any

from deploy.validate.commands import (
    LISTEN_VARIABLE,
    _environment_problems,
    _port,
    command_problems,
    known_environment,
)
from deploy.validate.compose import built_images
from deploy.validate.files import COMPOSE, K8S, Manifest, k8s_files, load_yaml, relative
from deploy.validate.services import check_network_policies, check_services
from deploy.validate.workloads import (
    PROBES,
    _named,
    _pre_stop_seconds,
    _probe_port,
    container_environment,
    workloads,
)

# Seconds a process may take after SIGTERM: the variable that sets them, the code's default.
GRACE_VARIABLES = {"GATEWAY_GRACEFUL_TIMEOUT": 20.0, "EVALUATOR_GRACE_SECONDS": 10.0}
# The variables that name a file the process reads or writes (OPERATOR_KEYS_FILE, ...).
FILE_VARIABLE = re.compile(r"[A-Z_]+_FILE")


def check_references(manifests: Sequence[Manifest]) -> list[str]:
    """Every ConfigMap, Secret, ServiceAccount and volume a pod names is defined here."""
    problems = []
    known = {kind: _named(manifests, kind) for kind in ("ConfigMap", "Secret", "ServiceAccount")}
    references = {
        "configMapRef": "ConfigMap",
        "configMapKeyRef": "ConfigMap",
        "secretRef": "Secret",
        "secretKeyRef": "Secret",
    }
    for workload in workloads(manifests):
        label = workload.manifest.label
        named: list[tuple[str, Any]] = [("ServiceAccount", workload.pod.get("serviceAccountName"))]
        for volume in workload.pod.get("volumes") or []:
            named.append(("Secret", (volume.get("secret") or {}).get("secretName")))
            named.append(("ConfigMap", (volume.get("configMap") or {}).get("name")))
        for container in workload.containers():
            sources = [*(container.get("envFrom") or [])]
            sources += [v.get("valueFrom") or {} for v in container.get("env") or []]
            for source in sources:
                for key, kind in references.items():
                    named.append((kind, (source.get(key) or {}).get("name")))
            volumes = {v.get("name") for v in workload.pod.get("volumes") or []}
            for mount in container.get("volumeMounts") or []:
                if mount.get("name") not in volumes:
                    problems.append(f"{label}: volumeMount {mount.get('name')!r} has no volume")
        for kind, name in named:
            if name is not None and name not in known[kind]:
                problems.append(f"{label}: {kind} {name!r} is not defined")
    return problems


def check_containers(
    manifests: Sequence[Manifest], names: frozenset[str], images: frozenset[str]
) -> list[str]:
    """Environment, listen ports, probes, writable paths and grace periods of each container."""
    problems = []
    for workload in workloads(manifests):
        grace = float(workload.pod.get("terminationGracePeriodSeconds", 30))
        for container in workload.containers():
            where = f"{workload.manifest.label}: container {container.get('name')}"
            environment = container_environment(container, manifests)
            ports = {p.get("name"): p.get("containerPort") for p in container.get("ports") or []}
            if str(container.get("image", "")).rpartition(":")[0] in images:
                writable = {m.get("mountPath") for m in container.get("volumeMounts") or []}
                problems += _environment_problems(where, environment, names, writable)
            for variable, value in environment.items() if ports else ():
                port = _port(value) if LISTEN_VARIABLE.fullmatch(variable) else None
                if port is not None and port not in ports.values():
                    problems.append(f"{where}: {variable} {value!r}: port {port} is not declared")
            for probe_name in PROBES:
                probe = container.get(probe_name) or {}
                found = _probe_port(probe)
                if found and found[1] not in {*ports, *ports.values()}:
                    problems.append(f"{where}: {probe_name} probes port {found[1]!r}, not declared")
                health = ports.get("grpc-health")
                if (
                    found
                    and found[0] == "grpc"
                    and health
                    and ports.get(found[1], found[1]) != health
                ):
                    problems.append(f"{where}: {probe_name} probes {found[1]!r}, not grpc-health")
                command = (probe.get("exec") or {}).get("command") or []
                problems += command_problems(f"{where}: {probe_name}", command)
                heartbeat = environment.get("CLOCK_HEARTBEAT_FILE")
                beats = command[:3] == ["python", "-m", "api.runtime.heartbeat"]
                if heartbeat and beats and command[3:4] != [heartbeat]:
                    problems.append(
                        f"{where}: the probe reads {command[3:4]}, the clock beats {heartbeat!r}"
                    )
            if ports and not (container.get("readinessProbe") and container.get("livenessProbe")):
                problems.append(
                    f"{where}: a container that serves ports needs readiness and liveness"
                )
            problems += _file_problems(where, environment, container.get("volumeMounts") or [])
            problems += command_problems(f"{where}: command", container.get("command") or [])
            for variable, default in GRACE_VARIABLES.items():
                needed = float(environment.get(variable, default)) + _pre_stop_seconds(container)
                if ports and variable in environment and grace < needed:
                    problems.append(
                        f"{where}: terminationGracePeriodSeconds {grace:g} < preStop + "
                        f"{variable} = {needed:g}"
                    )
    return problems


def _file_problems(
    where: str, environment: dict[str, str], mounts: Sequence[dict[str, Any]]
) -> list[str]:
    """Each `*_FILE` path is on a volume mount, and one without a subPath."""
    problems = []
    for variable, value in sorted(environment.items()):
        if not FILE_VARIABLE.fullmatch(variable) or not str(value).startswith("/"):
            continue
        path = PurePosixPath(str(value))
        holding = [
            m for m in mounts if path.is_relative_to(PurePosixPath(str(m.get("mountPath", ""))))
        ]
        if not holding:
            problems.append(f"{where}: {variable} {value!r} is on no volume mount")
        elif all(m.get("subPath") or m.get("subPathExpr") for m in holding):
            problems.append(
                f"{where}: {variable} {value!r} is mounted with subPath, which never sees an"
                " update of its volume"
            )
    return problems


def check_kustomization(path: Path = K8S / "kustomization.yaml") -> list[str]:
    """The kustomization lists every manifest file, and only those."""
    documents = load_yaml(path) if path.is_file() else []
    listed = set(documents[0].get("resources") or []) if documents else set()
    problems = [
        f"{relative(path)}: {name!r} does not exist"
        for name in sorted(listed)
        if not (path.parent / name).is_file()
    ]
    problems += [
        f"{relative(path)}: {p.name} is not listed in resources"
        for p in k8s_files()
        if p.name not in listed
    ]
    return problems


def check_kubernetes(
    manifests: Sequence[Manifest], names: frozenset[str] | None = None
) -> list[str]:
    """Every cross-reference of the Kubernetes objects."""
    images = frozenset(built_images(load_yaml(COMPOSE)[0]))
    problems = check_references(manifests)
    problems += check_containers(manifests, known_environment() if names is None else names, images)
    problems += check_services(manifests)
    problems += check_network_policies(manifests)
    problems += [
        # `kubectl apply -k deploy/k8s -n <namespace>` decides
        f"{m.label}: metadata.namespace is set; the manifests are namespace-agnostic"
        for m in manifests
        if "namespace" in (m.body.get("metadata") or {})
    ]
    return problems
