"""`python -m deploy.validate`: every check, one line per problem; exit status 1 if any."""

from __future__ import annotations

import sys

from deploy.validate import all_problems
from deploy.validate.files import dockerfiles, load_manifests, yaml_files
from deploy.validate.tools import KUBERNETES_VERSIONS


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
