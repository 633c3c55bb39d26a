"""The deployment files pass every static check, and each check catches what it is for.

The policies checkov owns (non-root, read-only root filesystem, capabilities, probes,
resources, network policies, Dockerfile users and healthchecks) are tested as checkov's:
one breach of each family, caught. The rest are the project's own cross-references.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from deploy import validate
from deploy.validate import Manifest

DOCKERFILE_GATEWAY = validate.DEPLOY / "Dockerfile.gateway"
DOCKERFILE_EVALUATOR = validate.DEPLOY / "Dockerfile.evaluator"


@pytest.fixture(scope="module")
def manifests() -> list[Manifest]:
    return validate.load_manifests()


@pytest.fixture(scope="module")
def compose() -> dict[str, Any]:
    (document,) = validate.load_yaml(validate.COMPOSE)
    return document


def edited(
    manifests: list[Manifest], kind: str, name: str, change: Callable[[dict[str, Any]], Any]
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


def deployment(manifests: list[Manifest], name: str) -> dict[str, Any]:
    """A copy of one Deployment's body."""
    (found,) = [m for m in manifests if m.kind == "Deployment" and m.name == name]
    return copy.deepcopy(found.body)


# ---------------------------------------------------------------- Dockerfiles


def test_hadolint_passes_on_every_dockerfile() -> None:
    assert {DOCKERFILE_GATEWAY, DOCKERFILE_EVALUATOR} <= set(validate.dockerfiles())
    assert validate.run_hadolint() == []


def test_hadolint_catches_a_careless_dockerfile(tmp_path: Path) -> None:
    bad = tmp_path / "Dockerfile"
    bad.write_text("FROM python:latest\nRUN apt-get update && apt-get install -y curl\n")
    problems = validate.run_hadolint([bad])
    assert any("DL3007" in p for p in problems)  # latest tag
    assert any("DL3008" in p for p in problems)  # unpinned apt package


@pytest.mark.parametrize("dockerfile", [DOCKERFILE_GATEWAY, DOCKERFILE_EVALUATOR], ids=str)
def test_dockerfile_cross_references(dockerfile: Path) -> None:
    assert validate.check_dockerfile(dockerfile) == []


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # an ARG hides the tag from hadolint and checkov alike
        ("python:3.11.11-slim-bookworm", "python:latest", "needs a pinned tag"),
        ("FROM ${PYTHON_IMAGE} AS runtime", "FROM python:3.12-slim AS runtime", "different base"),
        ("USER 10001:10001", "USER cardroom", "numeric UID"),
        ("COPY api/ api/", "COPY apps/ apps/", "'apps' does not exist"),
        ("COPY api/ api/", "", "needs 'api'"),
        ("urlopen(f'http", "urlopen(f'http'", "does not compile"),
        ("python:api.runtime.gunicorn_conf", "python:api.gunicorn_conf", "no module"),
        ("api.wsgi:app", "api.wsgy:app", "no module api.wsgy"),
    ],
)
def test_dockerfile_cross_references_catch_mistakes(old: str, new: str, expected: str) -> None:
    text = DOCKERFILE_GATEWAY.read_text()
    assert old in text
    problems = validate.check_dockerfile(DOCKERFILE_GATEWAY, text.replace(old, new))
    assert any(expected in p for p in problems), problems


def test_the_evaluator_image_runs_a_module_of_the_repository() -> None:
    text = DOCKERFILE_EVALUATOR.read_text()
    assert '"-m", "evaluator"' in text
    problems = validate.check_dockerfile(
        DOCKERFILE_EVALUATOR, text.replace('"-m", "evaluator"', '"-m", "evaluator.servr"')
    )
    assert any("python -m evaluator.servr: no such module" in p for p in problems), problems


# ---------------------------------------------------------------- YAML


def test_yamllint_passes_on_every_yaml_file() -> None:
    files = validate.yaml_files()
    assert validate.COMPOSE in files
    assert (validate.K8S / "gateway.yaml") in files
    assert (validate.ROOT / "api/http/openapi.yaml") in files
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
    for name in ("cardroom-gateway", "cardroom-evaluator", "cardroom-clock"):
        assert ("Deployment", name) in kinds
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
        (lambda b: container(b)["readinessProbe"]["httpGet"].update(paht="/x"), "paht"),
        (lambda b: container(b)["resources"]["limits"].update(cpu=[1]), "resources.limits.cpu"),
        (lambda b: b["spec"].update(replica=2), "replica"),
        (lambda b: container(b).update(ports=[{"containerPort": "8000"}]), "containerPort"),
    ],
)
def test_the_schemas_refuse_unknown_fields_and_wrong_types(
    manifests: list[Manifest], change: Callable[[dict[str, Any]], None], expected: str
) -> None:
    broken = edited(manifests, "Deployment", "cardroom-gateway", change)
    problems = validate.validate_kubernetes_schemas(broken)
    assert any(expected in p for p in problems), problems


def test_kubernetes_cross_references(manifests: list[Manifest]) -> None:
    assert validate.check_kubernetes(manifests) == []


GATEWAY, EVALUATOR, CLOCK = "cardroom-gateway", "cardroom-evaluator", "cardroom-clock"


@pytest.mark.parametrize(
    ("kind", "name", "change", "expected"),
    [
        (
            "Deployment",
            CLOCK,
            lambda b: container(b)["envFrom"].append({"configMapRef": {"name": "nope"}}),
            "ConfigMap 'nope' is not defined",
        ),
        (
            "Deployment",
            GATEWAY,
            lambda b: b["spec"]["template"]["spec"].update(serviceAccountName="cardrom"),
            "ServiceAccount 'cardrom' is not defined",
        ),
        (
            "Deployment",
            GATEWAY,
            lambda b: container(b)["volumeMounts"].append({"name": "cache", "mountPath": "/c"}),
            "volumeMount 'cache' has no volume",
        ),
        (
            "Deployment",
            CLOCK,
            lambda b: container(b).setdefault("env", []).append({"name": "CLOK", "value": "1"}),
            "CLOK is read by no code",
        ),
        (
            "ConfigMap",
            GATEWAY,
            lambda b: b["data"].update(EVALUATOR_ADRR="x"),
            "EVALUATOR_ADRR is read by no code",
        ),
        (
            "ConfigMap",
            GATEWAY,
            lambda b: b["data"].update(EVALUATOR_ADDR="cardroom-evaluator:50051"),
            "should be dns:///",
        ),
        (
            "ConfigMap",
            GATEWAY,
            lambda b: b["data"].update(EVALUATOR_ADDR="dns:///cardroom-evaluatr:50051"),
            "names no Service 'cardroom-evaluatr'",
        ),
        (
            "ConfigMap",
            GATEWAY,
            lambda b: b["data"].update(GATEWAY_BIND="0.0.0.0:8080"),
            "GATEWAY_BIND '0.0.0.0:8080': port 8080 is not declared",
        ),
        (
            "ConfigMap",
            EVALUATOR,
            lambda b: b["data"].update(EVALUATOR_HEALTH_LISTEN="[::]:50053"),
            "port 50053 is not declared",
        ),
        (
            "Service",
            "cardroom-evaluator-headless",
            lambda b: b["spec"].pop("clusterIP"),
            "must be headless",
        ),
        (
            "Service",
            "cardroom-evaluator-headless",
            lambda b: b["spec"]["ports"][0].update(port=50061),
            "does not expose port 50051 of EVALUATOR_ADDR",
        ),
        (
            "Service",
            GATEWAY,
            lambda b: b["spec"]["ports"][0].update(targetPort="web"),
            "targetPort 'web'",
        ),
        (
            "Service",
            GATEWAY,
            lambda b: b["spec"]["selector"].update({"app.kubernetes.io/component": "gw"}),
            "its selector matches no pods here",
        ),
        (
            "HorizontalPodAutoscaler",
            EVALUATOR,
            lambda b: b["spec"]["scaleTargetRef"].update(name="cardroom-evaluatr"),
            "scaleTargetRef names no Deployment",
        ),
        ("Deployment", GATEWAY, lambda b: b["spec"].update(replicas=3), "drop spec.replicas"),
        (
            "PodDisruptionBudget",
            GATEWAY,
            lambda b: b["spec"].update(minAvailable=2),
            "blocks every node drain",
        ),
        (
            "Deployment",
            GATEWAY,
            lambda b: container(b).pop("readinessProbe"),
            "needs readiness and liveness",
        ),
        (
            "Deployment",
            GATEWAY,
            lambda b: container(b)["livenessProbe"]["httpGet"].update(port="web"),
            "livenessProbe probes port 'web', not declared",
        ),
        (
            "Deployment",
            EVALUATOR,
            lambda b: container(b)["readinessProbe"]["grpc"].update(port=50051),
            "readinessProbe probes 50051, not grpc-health",
        ),
        (
            "Deployment",
            GATEWAY,
            lambda b: b["spec"]["template"]["spec"].update(terminationGracePeriodSeconds=10),
            "terminationGracePeriodSeconds 10 < preStop + GATEWAY_GRACEFUL_TIMEOUT = 25",
        ),
        (
            "Deployment",
            GATEWAY,
            lambda b: container(b)["volumeMounts"].pop(1),
            "PROMETHEUS_MULTIPROC_DIR /run/prometheus is not writable",
        ),
        (
            "Deployment",
            CLOCK,
            lambda b: container(b)["volumeMounts"].pop(0),
            "needs a writable /tmp",
        ),
        (
            "Deployment",
            CLOCK,
            lambda b: container(b)["livenessProbe"]["exec"]["command"].__setitem__(
                3, "/tmp/elsewhere"
            ),
            "the probe reads ['/tmp/elsewhere'], the clock beats '/tmp/clock-alive'",
        ),
        (
            "Deployment",
            CLOCK,
            lambda b: container(b)["livenessProbe"]["exec"]["command"].__setitem__(
                2, "api.runtime.heartbeet"
            ),
            "python -m api.runtime.heartbeet: no such module in the repository",
        ),
        (
            "Deployment",
            CLOCK,
            lambda b: container(b).update(command=["python", "-m", "api.clock"]),
            "python -m api.clock: no such module",
        ),
        (
            "Deployment",
            GATEWAY,
            lambda b: container(b)["volumeMounts"].pop(3),
            "OPERATOR_KEYS_FILE '/etc/cardroom/operator/keys' is on no volume mount",
        ),
        (
            "Deployment",
            GATEWAY,
            lambda b: container(b)["volumeMounts"][3].update(
                mountPath="/etc/cardroom/operator/keys", subPath="keys"
            ),
            "is mounted with subPath, which never sees an update",
        ),
        (
            "NetworkPolicy",
            EVALUATOR,
            lambda b: b["spec"]["ingress"].pop(2),
            "uses port 50052, which no NetworkPolicy opens to every source",
        ),
        (
            "NetworkPolicy",
            GATEWAY,
            lambda b: b["spec"]["ingress"][0].update(
                **{"from": [{"podSelector": {"matchLabels": {"app": "ingress"}}}]}
            ),
            "uses port 8000, which no NetworkPolicy opens to every source",
        ),
        (
            "Secret",
            "cardroom-redis",
            lambda b: b["metadata"].update(namespace="prod"),
            "namespace-agnostic",
        ),
    ],
)
def test_kubernetes_cross_references_catch_mistakes(
    manifests: list[Manifest],
    kind: str,
    name: str,
    change: Callable[[dict[str, Any]], Any],
    expected: str,
) -> None:
    problems = validate.check_kubernetes(edited(manifests, kind, name, change))
    assert any(expected in p for p in problems), problems


def test_the_gateway_reads_its_operator_keys_from_a_mounted_secret(
    manifests: list[Manifest],
) -> None:
    gateway = deployment(manifests, GATEWAY)
    environment = validate.container_environment(container(gateway), manifests)
    assert environment["PLAYERS_MODE"] == "operator"
    assert "OPERATOR_KEYS" not in environment
    keys = Path(environment["OPERATOR_KEYS_FILE"])
    (mount,) = [
        m for m in container(gateway)["volumeMounts"] if keys.parent == Path(m["mountPath"])
    ]
    assert "subPath" not in mount  # the kubelet updates the file: rotation needs no restart
    (volume,) = [
        v for v in gateway["spec"]["template"]["spec"]["volumes"] if v["name"] == mount["name"]
    ]
    assert volume["secret"]["secretName"] == "cardroom-operator"
    assert [item["path"] for item in volume["secret"]["items"]] == [keys.name]
    (secret,) = [m for m in manifests if m.kind == "Secret" and m.name == "cardroom-operator"]
    assert set(secret.body["stringData"]) == {item["key"] for item in volume["secret"]["items"]}


def test_the_local_compose_lets_anyone_create_a_player(compose: dict[str, Any]) -> None:
    assert compose["services"]["gateway"]["environment"]["PLAYERS_MODE"] == "open"


def ingress(service: str, port: dict[str, Any]) -> Manifest:
    """An Ingress sending every path to one Service port."""
    backend = {"service": {"name": service, "port": port}}
    path = {"path": "/", "pathType": "Prefix", "backend": backend}
    body = {
        "apiVersion": "networking.k8s.io/v1",
        "kind": "Ingress",
        "metadata": {"name": "cardroom"},
        "spec": {"rules": [{"http": {"paths": [path]}}]},
    }
    return Manifest("deploy/k8s/ingress.yaml", body)


def test_an_ingress_must_reach_a_service_port(manifests: list[Manifest]) -> None:
    assert validate.validate_kubernetes_schemas([ingress(GATEWAY, {"name": "http"})]) == []
    assert validate.check_kubernetes([*manifests, ingress(GATEWAY, {"name": "http"})]) == []
    assert validate.check_kubernetes([*manifests, ingress(GATEWAY, {"number": 80})]) == []
    problems = validate.check_kubernetes([*manifests, ingress("cardroom-gw", {"number": 80})])
    assert any("backend Service 'cardroom-gw' is not defined" in p for p in problems), problems
    problems = validate.check_kubernetes([*manifests, ingress(GATEWAY, {"number": 8000})])
    assert any("Service cardroom-gateway has no port" in p for p in problems), problems


def test_someone_else_s_image_keeps_its_own_environment(manifests: list[Manifest]) -> None:
    edge = deployment(manifests, GATEWAY)
    edge["metadata"]["name"] = "cardroom-edge"
    container(edge).update(image="nginxinc/nginx-unprivileged:1.27.3-alpine", envFrom=[])
    container(edge)["env"] = [{"name": "NGINX_ENTRYPOINT_QUIET_LOGS", "value": "1"}]
    problems = validate.check_kubernetes([*manifests, Manifest("edge.yaml", edge)])
    assert not [p for p in problems if "cardroom-edge" in p and "read by no code" in p], problems


def test_selector_matching() -> None:
    labels = {"app": "cardroom", "tier": "gateway"}
    assert validate.selector_matches({"matchLabels": {"app": "cardroom"}}, labels)
    assert not validate.selector_matches({"matchLabels": {"app": "other"}}, labels)
    expression = {"key": "tier", "operator": "In", "values": ["gateway", "clock"]}
    assert validate.selector_matches({"matchExpressions": [expression]}, labels)
    excluded = {"key": "tier", "operator": "NotIn", "values": ["gateway"]}
    assert not validate.selector_matches({"matchExpressions": [excluded]}, labels)
    missing = {"key": "zone", "operator": "Exists"}
    assert not validate.selector_matches({"matchExpressions": [missing]}, labels)
    assert validate.selector_matches({}, labels)  # the empty selector selects every pod
    assert not validate.selector_matches(None, labels)


def test_the_kustomization_lists_every_manifest(tmp_path: Path) -> None:
    assert validate.check_kustomization() == []
    partial = tmp_path / "kustomization.yaml"
    partial.write_text("---\nresources: [gateway.yaml, ingres.yaml]\n")
    problems = validate.check_kustomization(partial)
    assert any("'ingres.yaml' does not exist" in p for p in problems), problems
    assert any("clock.yaml is not listed" in p for p in problems), problems


# ---------------------------------------------------------------- compose


def test_compose_matches_the_compose_spec() -> None:
    assert validate.validate_compose_schema() == []


def test_the_compose_schema_refuses_unknown_fields(tmp_path: Path, compose: Any) -> None:
    broken = copy.deepcopy(compose)
    broken["services"]["gateway"]["heathcheck"] = {}
    path = tmp_path / "compose.yaml"
    path.write_text(yaml.safe_dump(broken))
    problems = validate.validate_compose_schema(path)
    assert any("heathcheck" in p for p in problems), problems


def test_compose_cross_references(compose: dict[str, Any]) -> None:
    assert validate.check_compose(compose) == []


def services(change: Callable[[dict[str, Any]], Any]) -> Callable[[dict[str, Any]], Any]:
    """A change of the compose file given its services."""
    return lambda c: change(c["services"])


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (
            services(lambda s: s["gateway"]["depends_on"]["redis"].update(condition="started")),
            "needs service_healthy",
        ),
        (
            services(lambda s: s["gateway"]["depends_on"].update(cache={})),
            "depends on unknown service 'cache'",
        ),
        (
            services(
                lambda s: (
                    s["clock"].update(depends_on={"gateway": {"condition": "service_healthy"}})
                    or s["gateway"].update(healthcheck={"disable": True})
                )
            ),
            "has no healthcheck to wait for",
        ),
        (services(lambda s: s["gateway"].update(read_only=False)), "read_only must be true"),
        (services(lambda s: s["redis"].update(user="0")), "numeric non-root UID"),
        (services(lambda s: s["evaluator"].update(cap_drop=[])), "cap_drop must include ALL"),
        (services(lambda s: s["clock"].update(security_opt=[])), "no-new-privileges"),
        (services(lambda s: s["gateway"].pop("healthcheck")), "no healthcheck"),
        (
            services(lambda s: s["gateway"]["environment"].update(GATEWAY_BIN="0.0.0.0:80")),
            "GATEWAY_BIN is read by no code",
        ),
        (
            services(
                lambda s: s["gateway"]["environment"].update(
                    EVALUATOR_ADDR="dns:///evaluators:50051"
                )
            ),
            "names no service 'evaluators'",
        ),
        (
            services(
                lambda s: s["clock"]["environment"].update(EVALUATOR_ADDR="dns:///evaluator:50052")
            ),
            "EVALUATOR_ADDR port 50052 is not one evaluator listens on",
        ),
        (
            services(lambda s: s["gateway"].update(ports=["127.0.0.1:8000:8080"])),
            "publishes port 8080, the service listens on [8000]",
        ),
        (
            services(lambda s: s["gateway"]["tmpfs"].remove("/run/prometheus")),
            "PROMETHEUS_MULTIPROC_DIR /run/prometheus is not writable",
        ),
        (
            services(
                lambda s: s["clock"]["healthcheck"]["test"].__setitem__(3, "api.runtime.heartbeet")
            ),
            "python -m api.runtime.heartbeet: no such module in the repository",
        ),
        (
            services(lambda s: s["clock"].update(command=["python", "-m", "api.clock"])),
            "python -m api.clock: no such module",
        ),
        (
            services(lambda s: s["evaluator"]["build"].update(dockerfile="deploy/Dockerfile.x")),
            "build dockerfile deploy/Dockerfile.x is missing",
        ),
    ],
)
def test_compose_cross_references_catch_mistakes(
    compose: dict[str, Any], change: Callable[[dict[str, Any]], Any], expected: str
) -> None:
    broken = copy.deepcopy(compose)
    change(broken)
    problems = validate.check_compose(broken)
    assert any(expected in p for p in problems), problems


@pytest.mark.parametrize("built", [False, True], ids=["pulled", "built here"])
def test_a_hardened_proxy_in_front_passes(
    compose: dict[str, Any], tmp_path: Path, built: bool
) -> None:
    proxy = tmp_path / "Dockerfile.edge"
    proxy.write_text(
        "FROM nginxinc/nginx-unprivileged:1.27.3-alpine\n"
        "COPY deploy/edge.conf /etc/nginx/conf.d/default.conf\n"
    )
    broken = copy.deepcopy(compose)
    broken["services"]["edge"] = {
        "image": "nginxinc/nginx-unprivileged:1.27.3-alpine",
        "read_only": True,
        "user": "101:101",
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges:true"],
        "environment": {"NGINX_ENTRYPOINT_QUIET_LOGS": "1"},
        "ports": ["127.0.0.1:8080:8080"],
        "healthcheck": {"test": ["CMD", "wget", "-qO-", "http://127.0.0.1:8080/healthz"]},
        "depends_on": {"gateway": {"condition": "service_healthy"}},
    }
    if built:
        broken["services"]["edge"]["build"] = {"context": str(tmp_path), "dockerfile": proxy.name}
    assert validate.check_compose(broken) == []


def test_every_python_healthcheck_compiles(compose: dict[str, Any]) -> None:
    for service in compose["services"].values():
        test = service.get("healthcheck", {}).get("test", [])
        assert validate.command_problems("compose", test[1:]) == []
    assert validate.command_problems("x", ["python", "-c", "import ("]) != []


def test_the_environment_the_code_reads() -> None:
    names = validate.known_environment()
    assert {"REDIS_URL", "EVALUATOR_ADDR", "CLOCK", "GATEWAY_WORKERS"} <= names
    assert {"EVALUATOR_LISTEN", "EVALUATOR_GRACE_SECONDS", "PROMETHEUS_MULTIPROC_DIR"} <= names


# ---------------------------------------------------------------- checkov


def test_checkov_passes_on_the_deployment_files() -> None:
    assert validate.run_checkov() == []


# One breach of each family checkov owns: (file, object, change, the check that catches it).
BREACHES: list[tuple[str, str, Callable[[dict[str, Any]], Any], str]] = [
    (
        "root",
        GATEWAY,
        lambda b: (
            b["spec"]["template"]["spec"]["securityContext"].update(runAsNonRoot=False, runAsUser=0)
            or container(b)["securityContext"].pop("runAsNonRoot")
        ),
        "CKV_K8S_23",
    ),
    (
        "writable-root",
        GATEWAY,
        lambda b: container(b)["securityContext"].pop("readOnlyRootFilesystem"),
        "CKV_K8S_22",
    ),
    (
        "escalation",
        EVALUATOR,
        lambda b: container(b)["securityContext"].update(allowPrivilegeEscalation=True),
        "CKV_K8S_20",
    ),
    (
        "capabilities",
        CLOCK,
        lambda b: container(b)["securityContext"].pop("capabilities"),
        "CKV_K8S_37",
    ),
    (
        "seccomp",
        EVALUATOR,
        lambda b: b["spec"]["template"]["spec"]["securityContext"].pop("seccompProfile"),
        "CKV_K8S_31",
    ),
    (
        "token",
        CLOCK,
        lambda b: b["spec"]["template"]["spec"].pop("automountServiceAccountToken"),
        "CKV_K8S_38",
    ),
    ("limits", GATEWAY, lambda b: container(b)["resources"].pop("limits"), "CKV_K8S_13"),
    ("liveness", GATEWAY, lambda b: container(b).pop("livenessProbe"), "CKV_K8S_8"),
    ("latest", CLOCK, lambda b: container(b).update(image="cardroom-gateway:latest"), "CKV_K8S_14"),
]


@pytest.fixture(scope="module")
def checkov_breaches(manifests: list[Manifest], tmp_path_factory: Any) -> list[str]:
    """One checkov run over every breach, each a Deployment alone in its file."""
    folder: Path = tmp_path_factory.mktemp("breaches")
    for name, source, change, _ in BREACHES:
        body = deployment(manifests, source)
        body["metadata"]["name"] = f"breach-{name}"
        change(body)
        (folder / f"{name}.yaml").write_text(yaml.safe_dump(body))
    runtime = DOCKERFILE_GATEWAY.read_text().split("FROM ${PYTHON_IMAGE} AS runtime")
    rootful = "\n".join(
        line
        for line in runtime[0].splitlines()
        if not line.startswith(("USER", "HEALTHCHECK", "    CMD"))
    )
    (folder / "Dockerfile").write_text(rootful + '\nCMD ["python", "-m", "evaluator"]\n')
    return validate.run_checkov([folder])


@pytest.mark.parametrize(("name", "check"), [(b[0], b[3]) for b in BREACHES], ids=str)
def test_checkov_catches_a_breach_of_each_kubernetes_policy(
    checkov_breaches: list[str], name: str, check: str
) -> None:
    assert any(f"{check} Deployment.default.breach-{name} " in p for p in checkov_breaches), (
        checkov_breaches
    )


def test_checkov_catches_a_pod_without_a_network_policy(checkov_breaches: list[str]) -> None:
    assert any("CKV2_K8S_6 Pod.default.breach-root." in p for p in checkov_breaches)


@pytest.mark.parametrize(
    "check", ["CKV_DOCKER_2", "CKV_DOCKER_3"], ids=["no HEALTHCHECK", "no USER"]
)
def test_checkov_catches_a_dockerfile_that_runs_as_root_unchecked(
    checkov_breaches: list[str], check: str
) -> None:
    assert any(f"{check} " in p and "Dockerfile" in p for p in checkov_breaches), checkov_breaches
