#!/usr/bin/env bash
# Build the sandbox runtime: a world-readable venv the unprivileged sandbox user
# can execute (the pyenv Python in root's home is unreadable to other users).
# Holds only what the worker imports: the pinned torch/triton, numpy, pydantic,
# packaging (submissions' version gates) and the pinned helion (Helion submissions
# lower to Triton in the sandbox; a Triton grade never imports it).
# On a GPU Triton also compiles a small launcher (driver.c) at first use, with
# gcc against the interpreter's Python.h: as root with apt this installs gcc and
# python3.X-dev for the base interpreter too (elsewhere it says what is missing).
#
#   sandbox/build_runtime.sh [RUNTIME_DIR]      (default: $KGYM_SANDBOX_RUNTIME or /opt/kgym/runtime)
#
# Idempotent: an existing runtime with the right versions is reused.
set -euo pipefail
RUNTIME="${1:-${KGYM_SANDBOX_RUNTIME:-/opt/kgym/runtime}}"
BASE_PYTHON="${KGYM_SANDBOX_BASE_PYTHON:-/usr/bin/python3.11}"
TORCH=2.13.0
TRITON=3.7.1
HELION=1.5.1

# gcc (or clang) on the worker's PATH, and Python.h where the base interpreter's sysconfig says.
python_headers() {
    "$1" -c 'import sysconfig; s = sysconfig.get_default_scheme(); s = "posix_prefix" if s == "posix_local" else s; print(sysconfig.get_paths(scheme=s)["include"])'
}
ensure_toolchain() {
    local version include missing=()
    version="$("$BASE_PYTHON" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
    include="$(python_headers "$BASE_PYTHON")"
    PATH=/usr/local/bin:/usr/bin:/bin command -v gcc >/dev/null || PATH=/usr/local/bin:/usr/bin:/bin command -v clang >/dev/null || missing+=(gcc libc6-dev)
    [ -f "$include/Python.h" ] || missing+=("python$version-dev")
    [ ${#missing[@]} = 0 ] && return 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        echo "installing ${missing[*]} (Triton compiles its GPU launcher with them) ..."
        apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "warning: missing ${missing[*]}: Triton cannot compile kernels on a GPU without them (Debian: apt-get install ${missing[*]}); CPU grading is unaffected" >&2
    fi
}

if [ -x "$BASE_PYTHON" ]; then
    ensure_toolchain
fi

if [ -x "$RUNTIME/bin/python" ] && "$RUNTIME/bin/python" - <<PY 2>/dev/null
import torch, triton, numpy, pydantic
assert torch.__version__.split("+")[0] == "$TORCH", torch.__version__
assert triton.__version__ == "$TRITON", triton.__version__
PY
then
    # packaging: third-party kernels gate on versions with packaging.version (Liger, FlagGems).
    "$RUNTIME/bin/python" -c "import packaging.version" 2>/dev/null ||
        { "$RUNTIME/bin/python" -m pip install --quiet --disable-pip-version-check "packaging>=23" && chmod -R a+rX "$RUNTIME"; }
    # helion: Helion submissions (it needs packaging and never pulls torch, so the pins hold).
    "$RUNTIME/bin/python" -c "import importlib.metadata as m; assert m.version('helion') == '$HELION'" 2>/dev/null ||
        { echo "installing helion $HELION into $RUNTIME ..."; "$RUNTIME/bin/python" -m pip install --quiet --disable-pip-version-check "helion==$HELION" && chmod -R a+rX "$RUNTIME"; }
    echo "sandbox runtime ready: $RUNTIME"
    exit 0
fi

if [ ! -x "$BASE_PYTHON" ] || ! "$BASE_PYTHON" -c "import ensurepip, venv" 2>/dev/null; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        apt-get update -qq && apt-get install -y -qq python3.11 python3.11-venv >/dev/null
        ensure_toolchain
    else
        echo "need $BASE_PYTHON with venv (Debian: apt-get install python3.11 python3.11-venv)" >&2
        exit 1
    fi
fi

echo "building sandbox runtime in $RUNTIME (torch $TORCH, triton $TRITON, helion $HELION) ..."
mkdir -p "$(dirname "$RUNTIME")"
rm -rf "$RUNTIME"
"$BASE_PYTHON" -m venv "$RUNTIME"
"$RUNTIME/bin/python" -m pip install --quiet --disable-pip-version-check \
    "torch==$TORCH" "triton==$TRITON" "numpy>=1.26" "pydantic>=2.6,<3" "packaging>=23" "helion==$HELION"
chmod -R a+rX "$RUNTIME"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
    uid="${KGYM_SANDBOX_UID:-61000}"
    if ! setpriv --reuid="$uid" --regid="$uid" --clear-groups "$RUNTIME/bin/python" -c "import torch" 2>/dev/null; then
        echo "the sandbox user (uid $uid) cannot run $RUNTIME/bin/python: make every folder above it searchable (chmod a+x)" >&2
        exit 1
    fi
fi
echo "sandbox runtime ready: $RUNTIME"
