"""Print the interpreted time of a launch with Triton's own re-patching of triton.language and with the
worker's cached one (gym.worker.interpreter.patch_cache), side by side, in one run.

    TRITON_INTERPRET=1 .venv/bin/python scripts/bench_interpreter.py [--programs 64] [--reps 7]

The kernel is a row softmax whose programs call two `@triton.jit` helpers (as the shipped
l1/softmax solution does): each launch and each helper call re-patches the language. The worker's
interpreter fixes are installed as in a grade; only `_patch_builtin` is switched between runs.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

if os.environ.get("TRITON_INTERPRET") != "1":
    sys.exit("run with TRITON_INTERPRET=1 (the interpreter is what this measures)")

import torch
import triton
import triton.language as tl
from triton.runtime import interpreter

UPSTREAM = interpreter._patch_builtin

from gym.worker.interpreter import shim as interpreter_shim  # noqa: E402

interpreter_shim.install()
CACHED = interpreter._patch_builtin


@triton.jit
def _row_max(x):
    return tl.max(x, axis=0)


@triton.jit
def _row_sum(x):
    return tl.sum(x, axis=0)


@triton.jit
def _softmax(x_ptr, out_ptr, n_cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * n_cols + cols, mask=mask, other=-float("inf"))
    e = tl.exp(x - _row_max(x))
    tl.store(out_ptr + row * n_cols + cols, e / _row_sum(e), mask=mask)


def launch_seconds(patch_builtin: object, x: torch.Tensor) -> float:
    interpreter._patch_builtin = patch_builtin
    out = torch.empty_like(x)
    start = time.perf_counter()
    _softmax[(x.shape[0],)](x, out, x.shape[1], BLOCK=triton.next_power_of_2(x.shape[1]))
    elapsed = time.perf_counter() - start
    assert torch.allclose(out, torch.softmax(x, dim=1), atol=1e-6)
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--programs", type=int, default=64, help="Rows, one program each.")
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    x = torch.randn(args.programs, 100)
    samples: dict[str, list[float]] = {"triton's own": [], "cached": []}
    launch_seconds(CACHED, x)  # the AST rewrite, once
    for _ in range(args.reps):  # interleaved, so drift hits both alike
        samples["triton's own"].append(launch_seconds(UPSTREAM, x))
        samples["cached"].append(launch_seconds(CACHED, x))
    own, cached = (statistics.median(samples[name]) for name in ("triton's own", "cached"))
    print(f"one launch of {args.programs} programs, each calling 2 jit helpers (median of {args.reps})")
    print(f"{'re-patching':14} {'ms/launch':>10} {'ms/program':>11}")
    for name, value in (("triton's own", own), ("cached", cached)):
        print(f"{name:14} {value * 1e3:10.1f} {value * 1e3 / args.programs:11.3f}")
    print(f"cached / own: {cached / own:.2f}")


if __name__ == "__main__":
    main()
