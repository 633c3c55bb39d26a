#!/usr/bin/env bash
# Build the images from deploy/ as they are: cardroom-evaluator, cardroom-gateway and
# cardroom-edge (or those named as arguments), tagged with the package version and
# labelled with it and the commit they come from. The labels are given to the build
# (--label), never written by a Dockerfile step: a step comes from the cache when its
# text is unchanged, and would keep the commit of the build that made it.
# REVISION and TAG, when set, replace the commit and the tag (tests/images builds one so).
# pip in the build steps uses this machine's pip configuration and CA bundle, mounted
# for each step (never copied into a layer). --format docker keeps the HEALTHCHECKs.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/var/images/containers.conf}"
VERSION=$(python3 -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')
if [ -z "${REVISION:-}" ]; then
    REVISION=$(git rev-parse HEAD 2>/dev/null || echo unknown)
    git diff --quiet HEAD 2>/dev/null || REVISION="$REVISION-dirty"
fi
TAG=${TAG:-$VERSION}
mkdir -p var/images

mounts=()
for config in /etc/pip.conf /etc/xdg/pip; do
    [ -e "$config" ] && mounts+=(--volume "$config:$config:ro")
done
bundle="${PIP_CERT:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}"
[ -f "$bundle" ] && mounts+=(--volume "$bundle:/etc/ssl/certs/ca-certificates.crt:ro")

declare -A DOCKERFILES=(
    [cardroom-evaluator]=deploy/Dockerfile.evaluator
    [cardroom-gateway]=deploy/Dockerfile.gateway
    [cardroom-edge]=deploy/edge/Dockerfile
)

build() {
    local name=$1 started=$SECONDS log="var/images/build-$1-$TAG.log"
    podman build --pull=never --network=host --format docker "${mounts[@]}" \
        --label "org.opencontainers.image.version=$VERSION" \
        --label "org.opencontainers.image.revision=$REVISION" \
        -f "${DOCKERFILES[$name]}" -t "$name:$TAG" . >"$log" 2>&1 \
        || { tail -40 "$log"; echo "building $name failed" >&2; exit 1; }
    echo "built $name:$TAG ($REVISION) in $((SECONDS - started)) s"
}
images=("$@")
[ ${#images[@]} -gt 0 ] || images=(cardroom-evaluator cardroom-gateway cardroom-edge)
for name in "${images[@]}"; do
    [ -n "${DOCKERFILES[$name]:-}" ] || { echo "no image named $name" >&2; exit 2; }
    build "$name"
done
