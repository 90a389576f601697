#!/usr/bin/env bash
# GPU check on a bare GPU box: grade every shipped solution on its benchmark
# shapes, compare the gym's timer with triton.testing.do_bench, and write a
# JSON-lines report row by row plus a one-screen summary (README, GPU check).
#
#   scripts/gpu_check.sh [--budget-s 480] [--grade-budget-s 90] [--tasks l1/a,l1/b] [--out gpu-check]
#   scripts/gpu_check.sh --selftest     # the same flow on CPU (Triton interpreter), for CI
#
# The box needs python3 (>= 3.11) with torch, Triton and numpy; everything else
# the grader needs (pydantic and its dependencies) comes from the wheelhouse
# (`make gpu-wheelhouse`, copied along with the repo; KGYM_WHEELHOUSE to move
# it), installed with --target into a private folder under build/: the box's
# own packages are never touched and no network is used. The sandboxed worker
# gets the same packages through KGYM_SANDBOX_PYTHON, a small wrapper that
# puts the private folder on PYTHONPATH after the worker's own staged code and
# execs the box's python3. PYTHON picks another interpreter than python3.
#
# --selftest builds (once) build/gpu-selftest-venv holding only the pinned
# torch, Triton and numpy, installs the wheelhouse the same way, and runs the
# check on CPU with small budgets on three tasks, forcing the process-backend
# fallback; it exits non-zero unless every grade passed.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
WHEELHOUSE="${KGYM_WHEELHOUSE:-$ROOT/wheelhouse/gpu}"
SELFTEST_TORCH=2.13.0
SELFTEST_TRITON=3.7.1

selftest=0
budget_s=""
args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --selftest) selftest=1 ;;
        --budget-s) budget_s="${2:?--budget-s needs a value}"; args+=("$1" "$2"); shift ;;
        --budget-s=*) budget_s="${1#*=}"; args+=("$1") ;;
        *) args+=("$1") ;;
    esac
    shift
done
# gpu_check.py's own defaults: 480 s on a GPU, 300 s for the selftest.
[ -n "$budget_s" ] || { [ "$selftest" = 1 ] && budget_s=300 || budget_s=480; }

fail() {
    echo "gpu_check: $*" >&2
    exit 2
}

# --- the interpreter ------------------------------------------------------------
if [ "$selftest" = 1 ]; then
    VENV="$ROOT/build/gpu-selftest-venv"
    if ! "$VENV/bin/python" - "$SELFTEST_TORCH" "$SELFTEST_TRITON" 2>/dev/null <<'PY'; then
import sys
import numpy, torch, triton
assert torch.__version__.split("+")[0] == sys.argv[1] and triton.__version__ == sys.argv[2]
PY
        echo "gpu_check: building $VENV (torch==$SELFTEST_TORCH, triton==$SELFTEST_TRITON, numpy; nothing else) ..."
        rm -rf "$VENV"
        "${PYTHON:-python3}" -m venv "$VENV"
        pins=("torch==$SELFTEST_TORCH" "triton==$SELFTEST_TRITON" "numpy")
        # Refuse a CUDA build of torch (gigabytes of nvidia-* wheels) before downloading anything.
        "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check --dry-run --report "$VENV/plan.json" "${pins[@]}" 2>"$VENV/pip.log" ||
            { cat "$VENV/pip.log" >&2; fail "could not resolve ${pins[*]}"; }
        "$VENV/bin/python" - "$VENV/plan.json" <<'PY' || fail "refusing to build the selftest venv: that torch is a CUDA build"
import json, sys
names = [item["metadata"]["name"] for item in json.load(open(sys.argv[1]))["install"]]
cuda = [name for name in names if name.lower().startswith(("nvidia-", "cuda-"))]
if cuda:
    print("the resolver would install " + ", ".join(cuda) + ": no CPU build of torch is reachable here", file=sys.stderr)
    sys.exit(1)
PY
        "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "${pins[@]}" 2>"$VENV/pip.log" ||
            { cat "$VENV/pip.log" >&2; fail "could not install ${pins[*]}"; }
    fi
    PY="$VENV/bin/python"
    PRIVATE="$ROOT/build/gpu-selftest-private"
    OUT_DEFAULT="$ROOT/build/gpu-selftest"
else
    if ! compgen -G "/dev/nvidia[0-9]*" >/dev/null && ! command -v nvidia-smi >/dev/null; then
        fail "no NVIDIA GPU here (no /dev/nvidia* device, no nvidia-smi): this check needs a GPU; scripts/gpu_check.sh --selftest runs it on CPU"
    fi
    PY="$(command -v "${PYTHON:-python3}")" || fail "no ${PYTHON:-python3} on PATH"
    PRIVATE="$ROOT/build/gpu-private"
    OUT_DEFAULT="$ROOT/gpu-check"
fi
case "$PY" in /*) ;; *) PY="$PWD/$PY" ;; esac
"$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11))' ||
    fail "$PY is Python $("$PY" -c 'import platform; print(platform.python_version())'); the gym needs 3.11 or newer"

# --- the private install of the wheelhouse ---------------------------------------
compgen -G "$WHEELHOUSE/pydantic-*.whl" >/dev/null ||
    fail "no wheelhouse at $WHEELHOUSE: run \`make gpu-wheelhouse\` on a machine with network and copy wheelhouse/ along with the repo"
SITE="$PRIVATE/site"
stamp="$PY $("$PY" -c 'import sys; print(sys.version)') $(cd "$WHEELHOUSE" && ls -- *.whl | sort | cksum)"
if [ ! -f "$PRIVATE/.installed" ] || [ "$(cat "$PRIVATE/.installed")" != "$stamp" ]; then
    rm -rf "$PRIVATE"
    mkdir -p "$SITE" "$PRIVATE/bin"
    if "$PY" -m pip --version >/dev/null 2>&1; then
        # Only the wheelhouse: no index, no pip configuration of this machine's (find-links, constraints).
        env -u PIP_FIND_LINKS -u PIP_INDEX_URL -u PIP_EXTRA_INDEX_URL -u PIP_CONSTRAINT PIP_CONFIG_FILE=/dev/null \
            "$PY" -m pip install --quiet --disable-pip-version-check --no-index --no-cache-dir --only-binary=:all: \
            --find-links "$WHEELHOUSE" --target "$SITE" pydantic 2>"$PRIVATE/pip.log" ||
            { cat "$PRIVATE/pip.log" >&2; fail "could not install the wheelhouse into $SITE"; }
    else
        # No pip on the box: a wheel is a zip laid out for site-packages; take the ones tagged for this CPython.
        "$PY" - "$WHEELHOUSE" "$SITE" <<'PY' || fail "could not unpack the wheelhouse into $SITE"
import pathlib, sys, zipfile
tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
for wheel in sorted(pathlib.Path(sys.argv[1]).glob("*.whl")):
    python_tag, abi_tag = wheel.name[:-4].split("-")[-3:-1]
    if python_tag.startswith("py3") or (python_tag == tag and abi_tag in (tag, "abi3")):
        zipfile.ZipFile(wheel).extractall(sys.argv[2])
PY
    fi
    # KGYM_SANDBOX_PYTHON: the box's interpreter with the private packages after the worker's own PYTHONPATH.
    cat >"$PRIVATE/bin/python" <<SH
#!/bin/sh
# Written by scripts/gpu_check.sh: $PY with the GPU check's private packages on its path.
PYTHONPATH="\${PYTHONPATH:+\$PYTHONPATH:}$SITE"
export PYTHONPATH
exec "$PY" "\$@"
SH
    # Read by the bwrap backend only (runtime_roots): bind the base install read-only when it lies outside /usr.
    echo "home = $(dirname "$(readlink -f "$PY")")" >"$PRIVATE/pyvenv.cfg"
    chmod 755 "$PRIVATE/bin/python"
    chmod -R a+rX "$PRIVATE"
    echo "$stamp" >"$PRIVATE/.installed"
fi

export KGYM_SANDBOX_PYTHON="$PRIVATE/bin/python"
export PYTHONPATH="$SITE${PYTHONPATH:+:$PYTHONPATH}"
extra=(--out "${OUT:-$OUT_DEFAULT}")
[ "$selftest" = 1 ] && extra+=(--selftest)
# The script keeps to its own budget; this is the backstop.
exec timeout --kill-after=20 "$(( ${budget_s%.*} + 120 ))" "$PY" scripts/gpu_check.py "${extra[@]}" ${args[@]+"${args[@]}"}
