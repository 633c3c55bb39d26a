"""deploy/k8s as `kubectl apply -k` would send it: rendered by kustomize, then validated.

deploy.validate checks the files one by one; these tests check what kustomize makes of
them (the image tags set, nothing lost or added) against the strict schemas of the
supported Kubernetes versions, checkov's policies and the project's cross-references,
and the edge's settings of the ingress-nginx controller against the ConfigMap schema.
No cluster runs here.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from deploy import validate

ROOT = Path(__file__).resolve().parents[2]
KUBECTL = shutil.which("kubectl")

pytestmark = pytest.mark.skipif(
    KUBECTL is None, reason="no kubectl (make test-images installs Debian's kubernetes-client)"
)


@pytest.fixture(scope="module")
def rendered() -> list[validate.Manifest]:
    """The objects `kubectl kustomize deploy/k8s` renders."""
    assert KUBECTL is not None
    done = subprocess.run(
        [KUBECTL, "kustomize", str(ROOT / "deploy" / "k8s")],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [
        validate.Manifest("kustomize deploy/k8s", body)
        for body in yaml.safe_load_all(done.stdout)
        if body is not None
    ]


def test_kustomize_renders_every_object_of_the_files(rendered: list[validate.Manifest]) -> None:
    def names(manifests: list[validate.Manifest]) -> list[tuple[str, str]]:
        return sorted((m.kind, m.name) for m in manifests)

    assert names(rendered) == names(validate.load_manifests())


def test_the_rendered_objects_match_the_strict_schemas(rendered: list[validate.Manifest]) -> None:
    assert validate.validate_kubernetes_schemas(rendered) == []


def test_the_rendered_objects_keep_their_cross_references(
    rendered: list[validate.Manifest],
) -> None:
    assert validate.check_kubernetes(rendered) == []


def test_the_rendered_objects_pass_checkov(
    rendered: list[validate.Manifest], tmp_path: Path
) -> None:
    manifest = tmp_path / "rendered.yaml"
    manifest.write_text(yaml.safe_dump_all([m.body for m in rendered]))
    assert validate.run_checkov([manifest]) == []


def test_the_rendered_workloads_run_the_tagged_images(rendered: list[validate.Manifest]) -> None:
    images = {
        container["image"]
        for workload in validate.workloads(rendered)
        for container in workload.containers()
    }
    assert images == {"cardroom-gateway:0.1.0", "cardroom-evaluator:0.1.0"}


def test_the_ingress_carries_the_edge_limits(rendered: list[validate.Manifest]) -> None:
    (ingress,) = [m for m in rendered if m.kind == "Ingress"]
    annotations = ingress.body["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/proxy-body-size"] == "256k"
    assert annotations["nginx.ingress.kubernetes.io/proxy-request-buffering"] == "on"
    backend = ingress.body["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    services = {m.name: m for m in rendered if m.kind == "Service"}
    ports = {p["name"] for p in services[backend["name"]].body["spec"]["ports"]}
    assert backend["port"]["name"] in ports


def test_the_controller_settings_match_the_configmap_schema() -> None:
    path = ROOT / "deploy" / "edge" / "ingress-nginx.yaml"
    manifests = validate.load_manifests([path])
    assert validate.validate_kubernetes_schemas(manifests) == []
    data = manifests[0].body["data"]
    assert data["client-body-timeout"] == "10"
    assert data["use-gzip"] == "true"
