"""gym.worker.traffic's FLOP count on real jit kernels under the interpreter (with the worker's
interpreter shim, so libdevice runs), against hand-computed figures: extern / libdevice functions,
tl.math functions, clamp, scans, float atomics and tl.dot (tile padding excluded).

Before issue 36 (class 8) libdevice calls, scans, clamps and atomics counted nothing, so a kernel
doing hundreds of exp per element through libdevice modelled as memory-bound.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from gym.worker.traffic import extern_cost

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """
import json
import torch
import triton
import triton.language as tl
from gym.worker.interpreter import shim

shim.install()
from triton.language.extra import libdevice
from gym.worker.traffic import TrafficCounter, named_buffers


@triton.jit
def many_exp(x_ptr, o_ptr, n, BLOCK: tl.constexpr, REPS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    for _ in tl.static_range(REPS):
        x = libdevice.exp(x) * 0.5
    tl.store(o_ptr + offs, x, mask=m)


@triton.jit
def libdevice_mix(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = libdevice.tanh(x)
    y = libdevice.pow(y, 2.0)
    y = libdevice.fma(y, x, x)
    y = libdevice.erf(y)
    y = libdevice.rsqrt(y * y + 1.0)
    y = libdevice.copysign(y, x)
    tl.store(o_ptr + offs, y, mask=m)


@triton.jit
def tl_math(x_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    x = tl.load(x_ptr + offs, mask=m)
    y = tl.sigmoid(x)
    y = tl.math.fma(y, x, x)
    y = tl.clamp(y, -1.0, 1.0)
    y = tl.abs(y) + tl.sqrt_rn(tl.abs(x)) + tl.div_rn(x, 3.0)
    tl.store(o_ptr + offs, y, mask=m)


@triton.jit
def scan(x_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.store(o_ptr + offs, tl.cumsum(x, 0))


@triton.jit
def atomics(x_ptr, o_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs)
    tl.atomic_add(o_ptr + offs % 4, x)


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        rk = k + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def counted(launch, **tensors):
    counter = TrafficCounter(named_buffers((name, tensor.untyped_storage()) for name, tensor in tensors.items()))
    with counter:
        counter.begin("kernel")
        launch()
    result = counter.counts().model_dump()
    return {key: result[key] for key in ("flops", "dot_flops", "special", "bytes_read", "bytes_written")}


torch.manual_seed(0)
RESULTS = {}
x = torch.rand(100) + 0.1
o = torch.empty_like(x)
RESULTS["many_exp"] = counted(lambda: many_exp[(2,)](x, o, 100, BLOCK=64, REPS=10), x=x, o=o)
RESULTS["libdevice_mix"] = counted(lambda: libdevice_mix[(2,)](x, o, 100, BLOCK=64), x=x, o=o)
RESULTS["tl_math"] = counted(lambda: tl_math[(2,)](x, o, 100, BLOCK=64), x=x, o=o)
row = torch.rand(64)
out = torch.empty_like(row)
RESULTS["scan"] = counted(lambda: scan[(1,)](row, out, BLOCK=64), x=row, o=out)
sums = torch.zeros(4)
RESULTS["atomics"] = counted(lambda: atomics[(1,)](row, sums, BLOCK=64), x=row, o=sums)
for m, n, k, grid in ((5, 7, 9, (1, 1)), (40, 24, 70, (3, 2))):
    a, b, c = torch.randn(m, k), torch.randn(k, n), torch.empty(m, n)
    RESULTS[f"matmul {m}x{n}x{k}"] = counted(lambda: matmul[grid](a, b, c, m, n, k, BM=16, BN=16, BK=16), a=a, b=b, c=c)
print(json.dumps(RESULTS))
"""


@pytest.fixture(scope="module")
def counts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("flops")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(TRITON_INTERPRET="1", TRITON_CACHE_DIR=str(folder / "cache"), PYTHONPATH=str(REPO))
    path = folder / "script.py"
    path.write_text(textwrap.dedent(SCRIPT))
    done = subprocess.run([sys.executable, str(path)], env=env, cwd=folder, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-6000:]
    results: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return results


LANES = 2 * 64  # two programs of 64 lanes each (masked lanes compute too)


def test_libdevice_exp_is_counted_and_special(counts: dict[str, Any]) -> None:
    # 10 x (libdevice.exp + a multiply) per lane; the 10 exp are special-function lanes.
    assert counts["many_exp"] == {"flops": 20 * LANES, "dot_flops": 0, "special": 10 * LANES, "bytes_read": 400, "bytes_written": 400}


def test_every_floating_libdevice_function_is_counted(counts: dict[str, Any]) -> None:
    # tanh 1, pow 1, fma 2, erf 1, y*y 1, +1 1, rsqrt 1, copysign 0 (a sign-bit op) = 8 per lane;
    # tanh, pow, erf and rsqrt are special functions.
    assert counts["libdevice_mix"]["flops"] == 8 * LANES and counts["libdevice_mix"]["special"] == 4 * LANES


def test_tl_math_functions_and_clamp_are_counted(counts: dict[str, Any]) -> None:
    # sigmoid = 1 / (1 + exp(-x)): neg, exp, add, div = 4; fma 2; clamp 2; abs 0, sqrt_rn 1, div_rn 1, two adds 2 = 12.
    # exp, the sigmoid's division, sqrt_rn and div_rn are special functions.
    assert counts["tl_math"]["flops"] == 12 * LANES and counts["tl_math"]["special"] == 4 * LANES


def test_a_scan_counts_n_minus_one(counts: dict[str, Any]) -> None:
    assert counts["scan"]["flops"] == 63


def test_a_float_atomic_add_counts_one_per_lane(counts: dict[str, Any]) -> None:
    assert counts["atomics"]["flops"] == 64 and counts["atomics"]["bytes_written"] == 64 * 4


@pytest.mark.parametrize(("m", "n", "k"), [(5, 7, 9), (40, 24, 70)])
def test_a_dot_counts_2mnk_without_its_tile_padding(counts: dict[str, Any], m: int, n: int, k: int) -> None:
    # 16x16x16 tiles: a 5x7x9 product runs one 4096-MAC tile, but only 2*5*7*9 FLOPs are the task's.
    result = counts[f"matmul {m}x{n}x{k}"]
    assert result["dot_flops"] == 2 * m * n * k
    assert result["flops"] >= result["dot_flops"]


@pytest.mark.parametrize(
    ("symbol", "cost"),
    [
        ("__nv_expf", (1, True)),
        ("__nv_powf", (1, True)),
        ("__nv_tanhf", (1, True)),
        ("__nv_fmaf", (2, False)),
        ("__nv_fmaf_rn", (2, False)),
        ("__nv_fmaxf", (1, False)),
        ("__nv_int2float_rn", (0, False)),
        ("__nv_int_as_float", (0, False)),
        ("__nv_fabsf", (0, False)),
        ("__nv_some_future_function", (1, True)),
    ],
)
def test_extern_costs(symbol: str, cost: tuple[int, bool]) -> None:
    assert extern_cost(symbol) == cost
