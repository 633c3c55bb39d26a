#!/usr/bin/env bash
# The base images the Dockerfiles name, made here when absent (no image registry is
# reachable, only Debian's archive): a bookworm minbase root file system from this
# machine's own Debian mirror, imported as debian:bookworm-slim; from it, Debian's
# Python as python:3.11.11-slim-bookworm (the gateway's and evaluator's FROM) and
# Debian's Redis as redis:7-bookworm (compose's Redis).
set -euo pipefail
cd "$(dirname "$0")/../.."
export CONTAINERS_CONF="${CONTAINERS_CONF:-$PWD/var/images/containers.conf}"
STATE=var/images
DEBIAN=debian:bookworm-slim
PYTHON=python:3.11.11-slim-bookworm
REDIS=redis:7-bookworm

present() { podman image exists "$1"; }

# the first deb URI this machine's apt uses (deb822 .sources or a sources.list line)
mirror() {
    local uri
    uri=$(grep -hsE '^URIs:' /etc/apt/sources.list.d/*.sources | awk '{print $2}' | grep -v security | head -1)
    [ -n "$uri" ] || uri=$(grep -hsE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
        | awk '{print $2}' | grep -v security | head -1)
    echo "${uri:-http://deb.debian.org/debian}"
}

if ! present "$DEBIAN"; then
    root="$STATE/rootfs"
    rm -rf "$root"
    echo "debootstrap bookworm (minbase) from $(mirror)"
    debootstrap --variant=minbase bookworm "$root" "$(mirror)" >"$STATE/debootstrap.log" 2>&1 \
        || { tail -20 "$STATE/debootstrap.log"; exit 1; }
    rm -rf "$root"/var/cache/apt/archives/*.deb "$root"/var/lib/apt/lists/*
    tar -C "$root" -c . | podman import --quiet \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'CMD ["bash"]' \
        --change 'LABEL org.opencontainers.image.description="Debian bookworm minbase (debootstrap)"' \
        - "$DEBIAN" >/dev/null
    rm -rf "$root"
fi

build() {
    echo "building $2 from $1"
    podman build --quiet --pull=never --network=host --format docker \
        -f "deploy/images/$1" -t "$2" deploy/images >/dev/null
}
present "$PYTHON" || build python.Containerfile "$PYTHON"
present "$REDIS" || build redis.Containerfile "$REDIS"
