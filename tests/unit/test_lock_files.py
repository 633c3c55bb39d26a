"""The lock files in requirements/: complete, hashed, and in agreement with pyproject.toml.

Each environment the project makes installs one of them with `pip install --require-hashes`
(docs/development.md); `make lock` writes them with uv. Read here as text, with no network:
every package is pinned with == and hashed; the project's own pins (the server's
dependencies, the development group, the build's requirements) are locked at the versions
pyproject.toml names; a lock resolved against the runtime's keeps its versions; and the
SDK's httpx range holds the httpx the server pins and every environment installs.
"""

from __future__ import annotations

import re
import tomllib
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
LOCKS = ROOT / "requirements"
PYPROJECT: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text())
CLIENT: dict[str, Any] = tomllib.loads((ROOT / "clients/python/pyproject.toml").read_text())
MAKEFILE = (ROOT / "Makefile").read_text()
# the locks resolved with -c requirements/runtime.txt (the tools' stand alone)
# client-lint.txt is not: it holds the SDK to what a Python 3.9 install gets (an older click)
AGAINST_RUNTIME = ("build.txt", "development.txt", "client.txt")


def entries(lock: Path) -> list[tuple[Requirement, list[str]]]:
    """Each requirement of a lock file with its hashes (continuation lines joined)."""
    text = re.sub(r"\\\n", " ", lock.read_text())
    found = []
    for line in text.splitlines():
        line = line.partition("#")[0].strip()
        if line:
            requirement, *hashes = re.split(r"\s+--hash=", line)
            found.append((Requirement(requirement), hashes))
    return found


def versions(lock: Path) -> dict[str, set[str]]:
    """The versions a lock pins, by canonical name (a universal lock may pin two)."""
    pinned: dict[str, set[str]] = defaultdict(set)
    for requirement, _ in entries(lock):
        (specifier,) = requirement.specifier
        pinned[canonicalize_name(requirement.name)].add(specifier.version)
    return pinned


def pins(requirements: list[str]) -> dict[str, str]:
    """The versions that pyproject.toml's requirements pin with ==, by canonical name."""
    found: dict[str, str] = {}
    for text in requirements:
        requirement = Requirement(text)
        (specifier,) = requirement.specifier
        assert specifier.operator == "==", text
        found[canonicalize_name(requirement.name)] = specifier.version
    return found


def makefile_version(name: str) -> str:
    """A version the Makefile sets (PIP_VERSION, CHECKOV_VERSION)."""
    match = re.search(rf"^{name} := (\S+)$", MAKEFILE, re.MULTILINE)
    assert match, name
    return match.group(1)


LOCK_FILES = sorted(LOCKS.glob("*.txt"))


@pytest.mark.parametrize("lock", LOCK_FILES, ids=lambda path: path.name)
def test_every_package_is_pinned_and_hashed(lock: Path) -> None:
    assert "make lock" in lock.read_text().splitlines()[1], "written by hand, not by make lock"
    found = entries(lock)
    assert found
    for requirement, hashes in found:
        (specifier,) = requirement.specifier
        assert specifier.operator == "==", requirement
        assert hashes, f"{requirement} has no hash"
        assert all(re.fullmatch(r"sha256:[0-9a-f]{64}", value) for value in hashes), requirement


@pytest.mark.parametrize("lock", LOCK_FILES, ids=lambda path: path.name)
def test_each_lock_is_installed_with_its_hashes(lock: Path) -> None:
    by_make = re.search(rf"\$\(PIP_LOCKED\) (-r \S+ )*-r \$\(LOCKS\)/{lock.name}", MAKEFILE)
    setup = (ROOT / "deploy/images/setup.sh").read_text()
    by_setup = f"--require-hashes -r requirements/{lock.name}" in setup
    assert by_make or by_setup


def test_the_images_install_the_runtime_and_build_locks_with_their_hashes() -> None:
    for dockerfile in ("Dockerfile.gateway", "Dockerfile.evaluator"):
        text = (ROOT / "deploy" / dockerfile).read_text()
        for lock in ("build.txt", "runtime.txt"):
            assert re.search(rf"install --require-hashes\s+(\\\s+)?-r requirements/{lock}", text)


def test_the_runtime_lock_holds_the_server_s_pins_and_no_tool() -> None:
    locked = versions(LOCKS / "runtime.txt")
    for name, version in pins(PYPROJECT["project"]["dependencies"]).items():
        assert locked.get(name) == {version}, name
    for tool in ("pytest", "mypy", "grpcio-tools", "mypy-protobuf", "uv"):
        assert tool not in locked


def test_the_development_lock_holds_the_development_group_and_the_build_s_tools() -> None:
    locked = versions(LOCKS / "development.txt")
    wanted = pins(PYPROJECT["dependency-groups"]["dev"]) | pins(
        PYPROJECT["build-system"]["requires"]
    )
    for name, version in wanted.items():
        assert locked.get(name) == {version}, name


def test_the_build_lock_holds_the_build_s_requirements_and_pip() -> None:
    locked = versions(LOCKS / "build.txt")
    wanted = pins(PYPROJECT["build-system"]["requires"])
    assert wanted.keys() == {"setuptools", "grpcio-tools", "mypy-protobuf"}
    for name, version in (wanted | {"pip": makefile_version("PIP_VERSION")}).items():
        assert locked.get(name) == {version}, name
    # the build's tools are the development environment's, which builds the tree in place
    development = versions(LOCKS / "development.txt")
    for name, locked_versions in locked.items():
        assert development.get(name) == locked_versions, name


@pytest.mark.parametrize("lock", AGAINST_RUNTIME)
def test_a_lock_resolved_against_the_runtime_s_keeps_its_versions(lock: str) -> None:
    runtime = versions(LOCKS / "runtime.txt")
    for name, version in versions(LOCKS / lock).items():
        if name in runtime:
            assert version == runtime[name], name


@pytest.mark.parametrize("tool", ["checkov", "podman-compose"])
def test_a_tool_s_lock_holds_the_version_the_makefile_names(tool: str) -> None:
    wanted = makefile_version(f"{tool.upper().replace('-', '_')}_VERSION")
    assert versions(LOCKS / f"{tool}.txt")[tool] == {wanted}


def test_the_sdk_s_httpx_range_holds_the_httpx_the_server_pins() -> None:
    (wanted,) = [Requirement(text) for text in CLIENT["project"]["dependencies"]]
    assert wanted.name == "httpx"
    server = pins(PYPROJECT["project"]["dependencies"])["httpx"]
    assert server in wanted.specifier
    # and the lowest it allows: the SDK claims no older httpx, which nothing here tests
    assert {s.version for s in wanted.specifier if s.operator == ">="} == {server}
    for lock in ("runtime.txt", "client.txt", "client-lint.txt", "development.txt"):
        assert versions(LOCKS / lock)["httpx"] == {server}, lock
