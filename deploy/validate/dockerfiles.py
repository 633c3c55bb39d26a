"""What hadolint and checkov cannot see in a Dockerfile.

Every base image, one named through an ARG too, is pinned; the USER is numeric (so
runAsNonRoot can verify it); the COPY sources exist; a Dockerfile that runs `pip install .`
copies what it reads and builds every stage on one base image; the exec-form commands name
modules that exist.
"""

from __future__ import annotations

import io
import json
import re
import tomllib
from pathlib import Path

from dockerfile_parse import DockerfileParser  # type: ignore[import-untyped]

from deploy.validate.commands import _package_directories, command_problems
from deploy.validate.files import ROOT, relative


def _pip_install_reads(root: Path = ROOT) -> list[str]:
    """What `pip install .` reads: pyproject.toml, the readme and the package directories."""
    readme = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    readmes = [readme["readme"]] if isinstance(readme.get("readme"), str) else []
    return ["pyproject.toml", *readmes, *_package_directories(root)]


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
