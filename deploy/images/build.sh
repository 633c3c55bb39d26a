#!/usr/bin/env bash
# Build the three images from deploy/ as they are: cardroom-gateway, cardroom-evaluator
# and cardroom-edge, labelled with the package version and the commit they come from.
# pip in the build steps uses this machine's pip configuration and CA bundle, mounted
# for each step (never copied into a layer). --format docker keeps the HEALTHCHECKs.
set -euo pipefail
cd "$(dirname "$0")/../.."
export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/var/images/containers.conf}"
VERSION=$(python3 -c 'import tomllib; print(tomllib.load(open("pyproject.toml", "rb"))["project"]["version"])')
REVISION=$(git rev-parse HEAD 2>/dev/null || echo unknown)
git diff --quiet HEAD 2>/dev/null || REVISION="$REVISION-dirty"

mounts=()
for config in /etc/pip.conf /etc/xdg/pip; do
    [ -e "$config" ] && mounts+=(--volume "$config:$config:ro")
done
bundle="${PIP_CERT:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}"
[ -f "$bundle" ] && mounts+=(--volume "$bundle:/etc/ssl/certs/ca-certificates.crt:ro")

build() {
    local name=$1 dockerfile=$2 started=$SECONDS
    podman build --pull=never --network=host --format docker "${mounts[@]}" \
        --build-arg "VERSION=$VERSION" --build-arg "REVISION=$REVISION" \
        -f "$dockerfile" -t "$name:$VERSION" . >"var/images/build-$name.log" 2>&1 \
        || { tail -40 "var/images/build-$name.log"; echo "building $name failed" >&2; exit 1; }
    echo "built $name:$VERSION ($REVISION) in $((SECONDS - started)) s"
}
build cardroom-evaluator deploy/Dockerfile.evaluator
build cardroom-gateway deploy/Dockerfile.gateway
build cardroom-edge deploy/edge/Dockerfile
