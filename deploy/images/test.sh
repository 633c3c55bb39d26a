#!/usr/bin/env bash
# `make test-images`: prepare podman, make the base images when absent, build the
# images from deploy/, then run tests/images (compose up on a free port, play through
# the edge, take it all down). Skips (exit 0, saying why) only where no container
# engine can run at all.
set -uo pipefail
cd "$(dirname "$0")/../.."
PYTHON=${PYTHON:-.venv/bin/python}
started=$SECONDS

bash deploy/images/setup.sh
status=$?
if [ $status = 3 ]; then
    echo "test-images: SKIPPED: no container engine can run on this machine (above)"
    exit 0
fi
[ $status = 0 ] || exit $status
set -e
export CONTAINERS_CONF="$PWD/var/images/containers.conf"
command -v kubectl >/dev/null || {
    echo "installing Debian's kubernetes-client (kubectl kustomize)"
    apt-get update -qq && apt-get install -y -qq kubernetes-client >/dev/null
}
bash deploy/images/base.sh
bash deploy/images/build.sh
podman images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E 'cardroom|python|redis|debian' || true
CARDROOM_IMAGES=1 "$PYTHON" -m pytest -q -p no:cacheprovider tests/images
echo "test-images: $((SECONDS - started)) s in all"
