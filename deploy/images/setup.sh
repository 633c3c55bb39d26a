#!/usr/bin/env bash
# Make this machine able to build and run the images: Debian's podman and runc (crun
# fails on hybrid cgroups here), debootstrap for the base images, podman-compose from
# its lock file in its own virtualenv, and a containers.conf for this machine.
# Writes nothing outside var/images/ except the Debian packages it installs.
# Exit status 3 (with the reason on stderr): no container engine can run here.
set -euo pipefail
cd "$(dirname "$0")/../.."
STATE=var/images
mkdir -p "$STATE"

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi; }

missing=()
for tool in podman runc debootstrap; do
    command -v "$tool" >/dev/null || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
    if ! command -v apt-get >/dev/null || ! as_root true 2>/dev/null; then
        echo "no container engine: ${missing[*]} missing, and no apt-get as root to install them" >&2
        exit 3
    fi
    echo "installing Debian's ${missing[*]}"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
        podman runc debootstrap >/dev/null
fi

# podman's default ulimits cannot be set by an unprivileged-looking root here: give
# the containers this shell's own hard limit instead
cat > "$STATE/containers.conf" <<CONF
[containers]
default_ulimits = ["nofile=$(ulimit -Hn):$(ulimit -Hn)", "nproc=32768:32768"]
[engine]
runtime = "runc"
CONF

if [ ! -x "$STATE/tools/bin/podman-compose" ]; then
    echo "installing podman-compose (requirements/podman-compose.txt)"
    python3 -m venv "$STATE/tools"
    "$STATE/tools/bin/pip" install --quiet --require-hashes -r requirements/podman-compose.txt
fi

export CONTAINERS_CONF="$PWD/$STATE/containers.conf"
if ! reason=$(podman info --format '{{.Host.OCIRuntime.Name}}' 2>&1); then
    echo "no container engine: podman info fails: $reason" >&2
    exit 3
fi
echo "podman $(podman version --format '{{.Client.Version}}') with $reason"
