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

One module a job: `files` (paths, YAML, the Manifest), `tools` (the maintained tools),
`commands` (commands and environments), `dockerfiles`, `workloads` (pods, selectors),
`kubernetes` (inside the pods), `services` (what points at the pods), `compose`; this
package gathers their public names and `all_problems`, `__main__` reports.

Exit status 1, with one line per problem, if anything fails.
"""

from __future__ import annotations

from deploy.validate.commands import (
    ENVIRONMENT_SOURCES,
    LISTEN_VARIABLE,
    PACKAGES,
    SCRATCH,
    command_problems,
    known_environment,
)
from deploy.validate.compose import built_images, check_compose
from deploy.validate.dockerfiles import check_dockerfile, dockerfile_commands
from deploy.validate.files import (
    COMPOSE,
    DEPLOY,
    K8S,
    PRUNED,
    ROOT,
    Document,
    Manifest,
    dockerfiles,
    k8s_files,
    load_manifests,
    load_yaml,
    relative,
    yaml_files,
)
from deploy.validate.kubernetes import (
    GRACE_VARIABLES,
    check_containers,
    check_kubernetes,
    check_kustomization,
    check_references,
)
from deploy.validate.services import check_network_policies, check_services
from deploy.validate.tools import (
    CHECKOV,
    KUBERNETES_VERSIONS,
    run_checkov,
    run_hadolint,
    run_yamllint,
    validate_compose_schema,
    validate_kubernetes_schemas,
)
from deploy.validate.workloads import (
    PROBES,
    Workload,
    container_environment,
    selector_matches,
    workloads,
)

__all__ = [
    "CHECKOV",
    "COMPOSE",
    "DEPLOY",
    "ENVIRONMENT_SOURCES",
    "GRACE_VARIABLES",
    "K8S",
    "KUBERNETES_VERSIONS",
    "LISTEN_VARIABLE",
    "PACKAGES",
    "PROBES",
    "PRUNED",
    "ROOT",
    "SCRATCH",
    "Document",
    "Manifest",
    "Workload",
    "all_problems",
    "built_images",
    "check_compose",
    "check_containers",
    "check_dockerfile",
    "check_kubernetes",
    "check_kustomization",
    "check_network_policies",
    "check_references",
    "check_services",
    "command_problems",
    "container_environment",
    "dockerfile_commands",
    "dockerfiles",
    "k8s_files",
    "known_environment",
    "load_manifests",
    "load_yaml",
    "relative",
    "run_checkov",
    "run_hadolint",
    "run_yamllint",
    "selector_matches",
    "validate_compose_schema",
    "validate_kubernetes_schemas",
    "workloads",
    "yaml_files",
]


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
