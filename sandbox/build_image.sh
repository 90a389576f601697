#!/usr/bin/env bash
# Build the `docker` backend's image offline: no registry, only Debian's package
# mirror (debootstrap) and the local sandbox runtime venv.
#
#   sandbox/build_image.sh [TAG]        (default: kgym-sandbox:local)
#
# The image is a minimal Debian bookworm root with python3.11, gcc and the Python
# headers (Triton compiles its GPU launcher at first use), the runtime venv
# (pinned torch/triton, numpy, pydantic) at the same path as on the host, and an
# unprivileged user `sandbox` (uid 61000). It is reused while its recipe label
# matches this script, the runtime's package list and the uid.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
TAG="${1:-${KGYM_DOCKER_IMAGE:-kgym-sandbox:local}}"
RUNTIME="${KGYM_SANDBOX_RUNTIME:-/opt/kgym/runtime}"
SUITE="${KGYM_DEBIAN_SUITE:-bookworm}"
MIRROR="${KGYM_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SANDBOX_UID="${KGYM_SANDBOX_UID:-61000}"

"$here/build_runtime.sh" "$RUNTIME" >/dev/null
recipe="$( { cat "$0"; "$RUNTIME/bin/python" -m pip freeze --disable-pip-version-check; echo "$SUITE $SANDBOX_UID $RUNTIME"; } | sha256sum | cut -c1-16)"
if [ "$(docker image inspect --format '{{ index .Config.Labels "kgym.recipe" }}' "$TAG" 2>/dev/null || true)" = "$recipe" ]; then
    echo "sandbox image ready: $TAG (recipe $recipe)"
    exit 0
fi

command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap >/dev/null; }
root="$(mktemp -d /var/tmp/kgym-rootfs.XXXXXX)"
trap 'rm -rf "$root"' EXIT
echo "debootstrap $SUITE into $root ..."
debootstrap --variant=minbase --include=python3.11,libgomp1,gcc,libc6-dev,python3.11-dev "$SUITE" "$root" "$MIRROR" >/dev/null
# Fail here, not at the first GPU grade, if the toolchain Triton needs is not in the root.
chroot "$root" /bin/sh -c 'command -v gcc >/dev/null && test -f /usr/include/python3.11/Python.h' \
    || { echo "the image root lacks gcc or /usr/include/python3.11/Python.h" >&2; exit 1; }
mkdir -p "$root$(dirname "$RUNTIME")" "$root/job" "$root/home/sandbox"
cp -a "$RUNTIME" "$root$RUNTIME"
echo "sandbox:x:$SANDBOX_UID:$SANDBOX_UID:sandbox:/home/sandbox:/usr/sbin/nologin" >> "$root/etc/passwd"
echo "sandbox:x:$SANDBOX_UID:" >> "$root/etc/group"
chown "$SANDBOX_UID:$SANDBOX_UID" "$root/home/sandbox"
rm -rf "$root/var/cache/apt/archives/"*.deb "$root/var/lib/apt/lists/"*
echo "importing $TAG ..."
tar -C "$root" -c . | docker import \
    --change "USER $SANDBOX_UID:$SANDBOX_UID" \
    --change "WORKDIR /tmp" \
    --change "ENV PATH=/usr/local/bin:/usr/bin:/bin" \
    --change "LABEL kgym.recipe=$recipe" \
    - "$TAG" >/dev/null
echo "sandbox image ready: $TAG (recipe $recipe)"
