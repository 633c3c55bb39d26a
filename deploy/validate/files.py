"""The deployment files: where they are, their YAML documents, the Kubernetes objects."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent.parent
DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
COMPOSE = DEPLOY / "compose.yaml"
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
