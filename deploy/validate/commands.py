"""Commands and environments: what a container is told to run, and the variables it is given.

The modules of ours that a command runs or loads (`python -m`, gunicorn's `python:MODULE` and
`MODULE:app`) exist and `python -c` programs compile; every variable given is read by the code;
the directories the code writes are writable.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from deploy.validate.files import ROOT

# Where the code reads its environment: the names a manifest may set.
ENVIRONMENT_SOURCES = (
    "api/settings.py",
    "api/runtime/gunicorn_conf.py",
    "api/telemetry.py",
    "evaluator/__main__.py",
)
# The variables that name an address or port the process listens on.
LISTEN_VARIABLE = re.compile(r"[A-Z_]+_(?:BIND|LISTEN|PORT)")
# The writable directory a read-only root filesystem still needs (tempfile, gunicorn).
SCRATCH = "/tmp"  # noqa: S108 (a mount point in the manifests, not a file made here)


def _package_directories(root: Path = ROOT) -> list[str]:
    """The directories of the packages pyproject.toml installs."""
    pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    return list(pyproject["tool"]["setuptools"].get("package-dir", {}).values())


# The top-level packages of the repository, which commands may name.
PACKAGES = frozenset(Path(d).name for d in _package_directories()) | {"api", "evaluator"}


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
