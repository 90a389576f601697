#!/usr/bin/env bash
# GPU check (installs nothing): grade every shipped solution on its benchmark
# shape with timings, compare with triton.testing.do_bench, report spread.
# Writes gpu-check/gpu_check.json and gpu-check/gpu_check.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-.venv/bin/python}"
[ -x "$PY" ] || PY=python3
exec timeout 290 "$PY" scripts/gpu_check.py --out "${OUT:-gpu-check}" "$@"
