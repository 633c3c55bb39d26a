"""What points at the pods: Services, Ingresses, autoscalers, budgets, network policies.

Their selectors match pods here and their ports are the pods' ports; EVALUATOR_ADDR names a
headless Service; the ports the kubelet probes stay open to it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from deploy.validate.files import Manifest
from deploy.validate.workloads import (
    PROBES,
    _named,
    _probe_port,
    _selected,
    selector_matches,
    workloads,
)


def check_services(manifests: Sequence[Manifest]) -> list[str]:
    """Services, Ingresses, autoscalers and disruption budgets point at pods and ports here."""
    problems = []
    deployments, services = _named(manifests, "Deployment"), _named(manifests, "Service")
    for service in services.values():
        selected = _selected({"matchLabels": service.spec.get("selector") or {}}, manifests)
        if not service.spec.get("selector") or not selected:
            problems.append(f"{service.label}: its selector matches no pods here")
        for port in service.spec.get("ports") or []:
            target = port.get("targetPort", port.get("port"))
            for workload in selected:
                if target not in workload.ports():
                    problems.append(
                        f"{service.label}: targetPort {target!r} is not a port of "
                        f"{workload.manifest.name}"
                    )
    for ingress in (m for m in manifests if m.kind == "Ingress"):
        backends = [ingress.spec.get("defaultBackend") or {}]
        for rule in ingress.spec.get("rules") or []:
            backends += [
                p.get("backend") or {} for p in (rule.get("http") or {}).get("paths") or []
            ]
        for backend in (b["service"] for b in backends if "service" in b):
            target = services.get(backend.get("name"))
            wanted = backend.get("port") or {}
            offered = {
                v
                for p in (target.spec if target else {}).get("ports") or []
                for v in (p.get("name"), p.get("port"))
            }
            if target is None:
                problems.append(
                    f"{ingress.label}: backend Service {backend.get('name')!r} is not defined"
                )
            elif wanted.get("name", wanted.get("number")) not in offered:
                problems.append(f"{ingress.label}: Service {target.name} has no port {wanted}")
    scaled: dict[str, int] = {}
    for autoscaler in (m for m in manifests if m.kind == "HorizontalPodAutoscaler"):
        target = autoscaler.spec.get("scaleTargetRef") or {}
        if target.get("kind") != "Deployment" or target.get("name") not in deployments:
            problems.append(f"{autoscaler.label}: scaleTargetRef names no Deployment here")
            continue
        scaled[target["name"]] = int(autoscaler.spec.get("minReplicas", 1))
        if "replicas" in deployments[target["name"]].spec:
            problems.append(
                f"{deployments[target['name']].label}: drop spec.replicas, the "
                "HorizontalPodAutoscaler owns it (every apply would reset the count)"
            )
    for budget in (m for m in manifests if m.kind == "PodDisruptionBudget"):
        covered = _selected(budget.spec.get("selector"), manifests)
        if not covered:
            problems.append(f"{budget.label}: its selector matches no pods here")
        for workload in covered:
            replicas = scaled.get(
                workload.manifest.name, int(workload.manifest.spec.get("replicas", 1))
            )
            minimum = budget.spec.get("minAvailable")
            if isinstance(minimum, int) and minimum >= replicas:
                problems.append(
                    f"{budget.label}: minAvailable {minimum} >= {replicas} replicas of "
                    f"{workload.manifest.name} blocks every node drain"
                )
    problems += _check_evaluator_address(manifests, services)
    return problems


def _check_evaluator_address(
    manifests: Sequence[Manifest], services: Mapping[str, Manifest]
) -> list[str]:
    """EVALUATOR_ADDR names a headless Service and one of its ports (client-side balancing)."""
    problems = []
    for config_map in (m for m in manifests if m.kind == "ConfigMap"):
        address = (config_map.body.get("data") or {}).get("EVALUATOR_ADDR")
        if address is None:
            continue
        match = re.fullmatch(r"dns:///([a-z0-9-]+)[a-z0-9.-]*:(\d+)", str(address))
        if match is None:
            problems.append(
                f"{config_map.label}: EVALUATOR_ADDR {address!r} should be dns:///<headless "
                "Service>:<port>, so the gateway balances over every evaluator pod"
            )
            continue
        service = services.get(match.group(1))
        if service is None:
            problems.append(
                f"{config_map.label}: EVALUATOR_ADDR names no Service {match.group(1)!r}"
            )
            continue
        if service.spec.get("clusterIP") != "None":
            problems.append(
                f"{service.label}: EVALUATOR_ADDR's Service must be headless (clusterIP: None)"
            )
        if int(match.group(2)) not in {p.get("port") for p in service.spec.get("ports") or []}:
            problems.append(
                f"{service.label}: does not expose port {match.group(2)} of EVALUATOR_ADDR"
            )
    return problems


def check_network_policies(manifests: Sequence[Manifest]) -> list[str]:
    """The ports the kubelet probes stay open to every source (it probes from the node)."""
    problems = []
    policies = [m for m in manifests if m.kind == "NetworkPolicy"]
    for workload in workloads(manifests):
        selecting = [
            p
            for p in policies
            if selector_matches(p.spec.get("podSelector"), workload.labels)
            and "Ingress" in (p.spec.get("policyTypes") or [])
        ]
        rules = [rule for policy in selecting for rule in policy.spec.get("ingress") or []]
        for container in workload.containers():
            named = {p.get("name"): p.get("containerPort") for p in container.get("ports") or []}
            for probe_name in PROBES:
                found = _probe_port(container.get(probe_name) or {})
                if not selecting or found is None:
                    continue
                number = named.get(found[1], found[1])
                aliases = {number} | {name for name, port in named.items() if port == number}
                if not any(
                    not rule.get("from")
                    and (not rule.get("ports") or aliases & {p.get("port") for p in rule["ports"]})
                    for rule in rules
                ):
                    problems.append(
                        f"{workload.manifest.label}: its {probe_name} uses port {number}, which "
                        "no NetworkPolicy opens to every source (the kubelet probes from the node)"
                    )
    return problems
