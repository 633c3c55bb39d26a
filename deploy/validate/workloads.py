"""The pods of the Kubernetes objects: selectors, pod templates, containers and probes."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from deploy.validate.files import Document, Manifest

PROBES = ("startupProbe", "readinessProbe", "livenessProbe")


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """Whether a LabelSelector (matchLabels and matchExpressions) selects these labels."""
    if selector is None:
        return False
    if any(labels.get(k) != v for k, v in (selector.get("matchLabels") or {}).items()):
        return False
    for expression in selector.get("matchExpressions") or []:
        present, value = expression["key"] in labels, labels.get(expression["key"])
        operator, values = expression["operator"], expression.get("values") or []
        if (
            (operator == "In" and value not in values)
            or (operator == "NotIn" and value in values)
            or (operator == "Exists" and not present)
            or (operator == "DoesNotExist" and present)
        ):
            return False
    return True


@dataclass(frozen=True)
class Workload:
    """A workload's pod template."""

    manifest: Manifest
    labels: dict[str, str]
    pod: Document

    def containers(self) -> list[Document]:
        """The containers and init containers."""
        return list(self.pod.get("containers") or []) + list(self.pod.get("initContainers") or [])

    def ports(self) -> set[Any]:
        """Every port of its containers, by number and by name."""
        return {
            value
            for container in self.containers()
            for port in container.get("ports") or []
            for value in (port.get("name"), port.get("containerPort"))
        }


def workloads(manifests: Sequence[Manifest]) -> list[Workload]:
    """Every object with a pod template."""
    found = []
    for manifest in manifests:
        template = manifest.spec.get("template")
        if isinstance(template, dict) and "spec" in template:
            labels = dict((template.get("metadata") or {}).get("labels") or {})
            found.append(Workload(manifest, labels, template["spec"]))
    return found


def _named(manifests: Sequence[Manifest], kind: str) -> dict[str, Manifest]:
    return {m.name: m for m in manifests if m.kind == kind}


def _selected(selector: Mapping[str, Any] | None, manifests: Sequence[Manifest]) -> list[Workload]:
    return [w for w in workloads(manifests) if selector_matches(selector, w.labels)]


def container_environment(container: Document, manifests: Sequence[Manifest]) -> dict[str, str]:
    """The variables a container gets from ConfigMaps (envFrom) and literal env values."""
    config_maps = _named(manifests, "ConfigMap")
    environment: dict[str, str] = {}
    for source in container.get("envFrom") or []:
        reference = (source.get("configMapRef") or {}).get("name")
        if reference in config_maps:
            environment.update(config_maps[reference].body.get("data") or {})
    environment.update(
        {v["name"]: str(v["value"]) for v in container.get("env") or [] if "value" in v}
    )
    return environment


def _pre_stop_seconds(container: Document) -> float:
    pre_stop = (container.get("lifecycle") or {}).get("preStop") or {}
    command = (pre_stop.get("exec") or {}).get("command") or []
    if "sleep" in pre_stop:
        return float(pre_stop["sleep"].get("seconds", 0))
    return float(command[1]) if len(command) == 2 and command[0] == "sleep" else 0.0


def _probe_port(probe: Document) -> tuple[str, Any] | None:
    return next(
        ((k, probe[k].get("port")) for k in ("grpc", "httpGet", "tcpSocket") if k in probe), None
    )
