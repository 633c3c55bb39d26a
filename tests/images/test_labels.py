"""The images say what they hold: the version and the commit they were built from.

deploy/images/build.sh gives both to the build as labels (--label). A rebuild of the
gateway image for another commit takes every layer from the cache and still says that
commit: a label written by a step of the Dockerfile came from the cache with the commit
of the first build.
"""

from __future__ import annotations

import json
import os
import subprocess
import tomllib
from typing import Any

from tests.images.stack import ROOT, podman

IMAGES = ("cardroom-gateway", "cardroom-evaluator", "cardroom-edge")
VERSION = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
REVISION = "org.opencontainers.image.revision"


def inspect(image: str) -> dict[str, Any]:
    """The image's labels and its layers."""
    found: list[dict[str, Any]] = json.loads(podman("image", "inspect", image))
    (description,) = found
    return {"labels": description["Labels"], "layers": description["RootFS"]["Layers"]}


def this_tree() -> str:
    """The commit of the working tree, `-dirty` after it when it has changes (as build.sh)."""
    git = ["git", "-C", str(ROOT)]
    commit = subprocess.run([*git, "rev-parse", "HEAD"], capture_output=True, text=True,
                            check=True).stdout.strip()  # fmt: skip
    clean = subprocess.run([*git, "diff", "--quiet", "HEAD"], check=False).returncode == 0
    return commit if clean else f"{commit}-dirty"


def test_each_image_says_its_version_and_the_commit_of_this_tree() -> None:
    for image in IMAGES:
        labels = inspect(f"{image}:{VERSION}")["labels"]
        assert labels["org.opencontainers.image.version"] == VERSION, image
        assert labels[REVISION] == this_tree(), image


def test_a_rebuild_for_another_commit_says_that_commit() -> None:
    other, tag = "1" * 40, "revision-check"
    rebuilt = f"cardroom-gateway:{tag}"
    subprocess.run(
        ["bash", "deploy/images/build.sh", "cardroom-gateway"],
        cwd=ROOT,
        env={**os.environ, "REVISION": other, "TAG": tag},
        check=True,
        timeout=900,
    )
    try:
        image, original = inspect(rebuilt), inspect(f"cardroom-gateway:{VERSION}")
        assert image["labels"][REVISION] == other
        assert original["labels"][REVISION] == this_tree()
        # the same layers: everything but the labels came from the cache
        assert image["layers"] == original["layers"]
    finally:
        podman("rmi", rebuilt)
