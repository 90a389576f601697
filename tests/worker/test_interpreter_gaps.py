"""The worker's interpreter fixes (gym/worker/interpreter/), on real jit kernels under TRITON_INTERPRET=1.

`interpreter.shim.install()` patches Triton and torch for the whole process, so the kernels
run in one fresh interpreter (a module-scoped script, like the worker), which records each
check's outcome as JSON; the tests below read it. What is checked:

- libdevice (`triton.language.extra.libdevice`, `...extra.cuda.libdevice`) and `tl.math`
  functions by name inside @triton.jit, against torch on the same float32 inputs;
- `a and b` / `a or b` / `not a` on masks mean what the compiler means (only in-bounds
  elements are written); `if` on a block tensor and chained comparisons are refused;
- a float scalar argument used as `eps.to(tl.float32)`;
- device queries answered for the fake device, `with torch.cuda.device(t):`;
- program instances run in a shuffled order that changes from launch to launch (a kernel
  records its order with an atomic counter; float atomics sum differently), every
  program exactly once on 1-, 2- and 3-D grids, spin-waiting chains complete, a deadlock
  raises instead of hanging;
- TF32 rounding of float32 `tl.dot` operands unless "ieee" (or tf32x3, allow_tf32=False,
  TRITON_F32_DEFAULT=ieee); bf16x3 close to float32;
- float8 casts (e4m3 "nv" and e5m2) round to nearest even and saturate, as a GPU's
  `cvt.rn.satfinite` does, bit for bit against torch's float8 types.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.schema.result import Status
from gym.tasks.model import Task
from gym.worker.interpreter.libdevice import IMPLEMENTATIONS, symbol_names
from gym.worker.interpreter.limits import FAKE_DEVICE_NAME, INTERPRETER_LIMITS, InterpreterLimitError
from gym.worker.interpreter.order import shuffled
from gym.worker.interpreter.semantics import round_to_bf16, round_to_tf32

REPO = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import json, math, os, time
import numpy as np
import torch, triton, triton.language as tl
from gym.worker import op_trace
from gym.worker.interpreter import shim as interpreter_shim

interpreter_shim.install()
interpreter_shim.install()  # idempotent

from triton.language.extra import libdevice
from triton.language.extra.cuda import libdevice as cuda_libdevice

RESULTS = {}


def check(label, body):
    try:
        RESULTS[label] = {"ok": True, "value": body()}
    except Exception as exc:
        RESULTS[label] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


def close(got, want, rtol=2e-6, atol=1e-6):
    return bool(torch.allclose(got, want, rtol=rtol, atol=atol, equal_nan=True)), float((got - want).abs().nan_to_num().max())


# --- libdevice and tl.math by name ------------------------------------------------------

@triton.jit
def _unary(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1.0)
    tl.store(out_ptr + 0 * n + offs, libdevice.rsqrt(x), mask=mask)
    tl.store(out_ptr + 1 * n + offs, libdevice.exp(x), mask=mask)
    tl.store(out_ptr + 2 * n + offs, libdevice.exp2(x), mask=mask)
    tl.store(out_ptr + 3 * n + offs, libdevice.log(x), mask=mask)
    tl.store(out_ptr + 4 * n + offs, libdevice.log2(x), mask=mask)
    tl.store(out_ptr + 5 * n + offs, libdevice.tanh(x), mask=mask)
    tl.store(out_ptr + 6 * n + offs, libdevice.erf(x), mask=mask)
    tl.store(out_ptr + 7 * n + offs, libdevice.pow(x, 2.5), mask=mask)
    tl.store(out_ptr + 8 * n + offs, libdevice.sqrt(x), mask=mask)
    tl.store(out_ptr + 9 * n + offs, libdevice.fast_expf(x), mask=mask)
    tl.store(out_ptr + 10 * n + offs, libdevice.fast_logf(x), mask=mask)
    tl.store(out_ptr + 11 * n + offs, cuda_libdevice.tanh(x), mask=mask)
    tl.store(out_ptr + 12 * n + offs, libdevice.erfinv(x * 0.25), mask=mask)
    tl.store(out_ptr + 13 * n + offs, libdevice.lgamma(x), mask=mask)
    tl.store(out_ptr + 14 * n + offs, libdevice.atan2(x, x + 1.0), mask=mask)
    tl.store(out_ptr + 15 * n + offs, libdevice.fast_powf(x, 1.5), mask=mask)
    tl.store(out_ptr + 16 * n + offs, libdevice.fast_dividef(x, 3.0), mask=mask)
    tl.store(out_ptr + 17 * n + offs, libdevice.round(x * 2.0 - 3.0), mask=mask)
    tl.store(out_ptr + 18 * n + offs, libdevice.isnan(x / 0.0 - x / 0.0).to(tl.float32), mask=mask)
    tl.store(out_ptr + 19 * n + offs, libdevice.div_rn(x, 7.0), mask=mask)
    tl.store(out_ptr + 20 * n + offs, 1.0 / (1.0 + libdevice.exp(-x)), mask=mask)
    tl.store(out_ptr + 21 * n + offs, tl.math.rsqrt(x) + tl.math.exp2(x) + tl.math.erf(x), mask=mask)
    tl.store(out_ptr + 22 * n + offs, tl.math.fdiv(x, 3.0) + tl.math.sqrt_rn(x) + tl.math.fma(x, x, 1.0) + tl.math.div_rn(x, 5.0), mask=mask)
    tl.store(out_ptr + 23 * n + offs, tl.sigmoid(x) + tl.exp(x) + tl.log(x), mask=mask)


def half_away(v):
    v = v.double()
    return (torch.sign(v) * torch.floor(v.abs() + 0.5)).float()


def libdevice_check():
    n = 50
    x = torch.linspace(0.1, 3.0, n, dtype=torch.float32)
    out = torch.zeros(24, n)
    _unary[(1,)](x, out, n, BLOCK=64)
    want = [
        x.rsqrt(), x.exp(), torch.exp2(x), x.log(), torch.log2(x), x.tanh(), torch.erf(x), x.pow(2.5), x.sqrt(),
        x.exp(), x.log(), x.tanh(), torch.erfinv(x * 0.25), torch.lgamma(x), torch.atan2(x, x + 1), x.pow(1.5),
        x / 3, half_away(x * 2 - 3), torch.ones(n), x / 7, torch.sigmoid(x),
        x.rsqrt() + torch.exp2(x) + torch.erf(x), x / 3 + x.sqrt() + (x * x + 1) + x / 5, torch.sigmoid(x) + x.exp() + x.log(),
    ]
    report = {}
    for i, expected in enumerate(want):
        # fast_* keep the GPU's float32 exp2/log2 formulation: a few ulp.
        rtol = 2e-5 if i in (9, 10, 15) else 2e-6
        report[i] = close(out[i], expected, rtol=rtol, atol=1e-6)
    return report


check("libdevice", libdevice_check)


@triton.jit
def _integer(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=1)
    tl.store(out_ptr + 0 * n + offs, libdevice.clz(x), mask=mask)
    tl.store(out_ptr + 1 * n + offs, libdevice.popc(x), mask=mask)
    tl.store(out_ptr + 2 * n + offs, libdevice.brev(x), mask=mask)
    tl.store(out_ptr + 3 * n + offs, libdevice.ffs(x), mask=mask)
    tl.store(out_ptr + 4 * n + offs, libdevice.float2int_rz(x.to(tl.float32) * -0.75), mask=mask)
    tl.store(out_ptr + 5 * n + offs, libdevice.float2int_rd(x.to(tl.float32) * -0.75), mask=mask)
    tl.store(out_ptr + 6 * n + offs, libdevice.mulhi(x, x * 65536), mask=mask)
    tl.store(out_ptr + 7 * n + offs, libdevice.float_as_int(libdevice.int_as_float(x)), mask=mask)


def integer_check():
    values = [1, 2, 3, 255, 256, 65535, 1 << 20, 0x7FFFFFFF, -1, -8]
    x = torch.tensor(values, dtype=torch.int32)
    n = len(values)
    out = torch.zeros(8, n, dtype=torch.int32)
    _integer[(1,)](x, out, n, BLOCK=16)
    bits = [v & 0xFFFFFFFF for v in values]
    scaled = (np.array(values, dtype=np.float32) * np.float32(-0.75)).tolist()
    signed = lambda u: u - (1 << 32) if u >= 1 << 31 else u
    want = [
        [32 - b.bit_length() for b in bits],
        [bin(b).count("1") for b in bits],
        [signed(int(f"{b:032b}"[::-1], 2)) for b in bits],
        [(b & -b).bit_length() for b in bits],
        [int(f) for f in scaled],
        [math.floor(f) for f in scaled],
        [(v * signed((v * 65536) & 0xFFFFFFFF)) >> 32 for v in values],
        values,
    ]
    return {i: [out[i].tolist(), want[i]] for i in range(8)}


check("integer", integer_check)


@triton.jit
def _bessel(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, libdevice.j0(tl.load(x_ptr + offs)))


check("bessel", lambda: _bessel[(1,)](torch.ones(16), torch.zeros(16), BLOCK=16))


@triton.jit
def _asm(x_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    y = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [tl.load(x_ptr + offs)], dtype=tl.int32, is_pure=True, pack=1)
    tl.store(x_ptr + offs, y)


check("inline_asm", lambda: _asm[(1,)](torch.zeros(16, dtype=torch.int32), BLOCK=16))


# --- and / or / not / conditions --------------------------------------------------------

@triton.jit
def _masked_copy(x_ptr, out_ptr, n, m, BLOCK: tl.constexpr, MODE: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    if MODE == 0:
        mask = (offs < n) and (offs < m)
    elif MODE == 1:
        mask = (offs >= n) or (offs < 3)
    elif MODE == 2:
        mask = not (offs >= n)
    elif MODE == 3:
        # a falsy constexpr short-circuits, as in the compiler
        mask = BLOCK < 0 and (offs < n)
    else:
        mask = (offs < n) and BLOCK > 0 and (offs < m)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask, other=-2.0), mask=mask)


def masked(mode):
    x = torch.arange(32, dtype=torch.float32)
    out = torch.full((32,), -1.0)
    _masked_copy[(2,)](x, out, 10, 7, BLOCK=16, MODE=mode)
    return out.tolist()


for mode in range(5):
    check(f"mask_{mode}", lambda mode=mode: masked(mode))


@triton.jit
def _if_on_block(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    if offs < n:
        tl.store(x_ptr + offs, 1.0)


@triton.jit
def _chained(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(x_ptr + offs, 1.0, mask=0 <= offs < n)


@triton.jit
def _scalar_conditions(out_ptr, n, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    value = 0
    if pid > 0 and n > 3:
        value = 1
    if not (pid == 0):
        value += 10
    value += 100 if pid < 2 or n < 0 else 0
    tl.store(out_ptr + pid, value)


check("if_on_block", lambda: _if_on_block[(1,)](torch.zeros(16), 4, BLOCK=16))
check("chained_comparison", lambda: _chained[(1,)](torch.zeros(16), 4, BLOCK=16))


def scalar_conditions():
    out = torch.zeros(3, dtype=torch.int32)
    _scalar_conditions[(3,)](out, 5, BLOCK=4)
    return out.tolist()


check("scalar_conditions", scalar_conditions)


# --- float scalar arguments -------------------------------------------------------------

@triton.jit
def _scale(x_ptr, out_ptr, n, eps, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    mask = offs < n
    e = eps.to(tl.float32)
    tl.static_assert(eps.dtype == tl.float32)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * e + eps, mask=mask)


def scale():
    x = torch.arange(8, dtype=torch.float32)
    out = torch.zeros(8)
    _scale[(1,)](x, out, 8, 0.1, BLOCK=8)
    return close(out, x * torch.tensor(0.1, dtype=torch.float32) + torch.tensor(0.1, dtype=torch.float32), rtol=0, atol=0)


check("float_scalar", scale)


# --- fake device ------------------------------------------------------------------------

@triton.jit
def _fill(out_ptr, value, BLOCK: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, BLOCK), value)


def device_queries():
    from triton.runtime import driver

    x = torch.zeros(16, dtype=torch.int32)
    with torch.cuda.device(x):
        _fill[(1,)](x, 7, BLOCK=16)
    with torch.cuda.device(x.device):
        pass
    with torch.cuda.device_of(x):
        pass
    props = torch.cuda.get_device_properties(x.device)
    active = driver.active
    device = active.get_current_device()
    triton_props = active.utils.get_device_properties(device)
    target = active.get_current_target()
    import triton.language.target_info as target_info
    return {
        "filled": x.tolist() == [7] * 16,
        "name": props.name,
        "sms": props.multi_processor_count,
        "torch_current": torch.cuda.current_device(),
        "capability": list(torch.cuda.get_device_capability()),
        "device_name": torch.cuda.get_device_name(0),
        "available": torch.cuda.is_available(),
        "triton_sms": triton_props["multiprocessor_count"],
        "triton_smem": triton_props["max_shared_mem"],
        "warp": triton_props["warpSize"],
        "target": [target.backend, target.arch, target.warp_size],
        "torch_device": str(active.get_active_torch_device()),
        "is_cuda_constexpr": target_info.current_target() is not None,
    }


check("device", device_queries)


@triton.jit
def _double_rows(x_ptr, out_ptr, n_rows, n_cols, BLOCK: tl.constexpr, num_stages: tl.constexpr):
    start = tl.program_id(0)
    step = tl.num_programs(0)
    for row in tl.range(start, n_rows, step, num_stages=num_stages):
        cols = tl.arange(0, BLOCK)
        mask = cols < n_cols
        tl.store(out_ptr + row * n_cols + cols, tl.load(x_ptr + row * n_cols + cols, mask=mask) * 2, mask=mask)


def warmed_up():
    # The fused-softmax tutorial's occupancy computation, then a launch of the "compiled" kernel.
    x = torch.arange(60, dtype=torch.float32).reshape(6, 10)
    out = torch.zeros(6, 10)
    kernel = _double_rows.warmup(x, out, 6, 10, BLOCK=16, num_stages=2, num_warps=4, grid=(1,))
    kernel._init_handles()
    occupancy = 65536 // (kernel.n_regs * 32 * 4)
    occupancy = min(occupancy, 232448 // kernel.metadata.shared)
    kernel[(4, 1, 1)](x, out, 6, 10, 16, 2)
    return {"occupancy": occupancy, "ok": bool(torch.equal(out, 2 * x)), "name": kernel.name, "warps": kernel.metadata.num_warps}


check("warmup", warmed_up)


# --- program order ----------------------------------------------------------------------

@triton.jit
def _record_order(counter_ptr, order_ptr):
    pid = tl.program_id(0)
    slot = tl.atomic_add(counter_ptr, 1)
    tl.store(order_ptr + slot, pid)


def orders():
    runs = []
    for _ in range(3):
        counter = torch.zeros(1, dtype=torch.int32)
        order = torch.full((64,), -1, dtype=torch.int32)
        _record_order[(64,)](counter, order)
        runs.append(order.tolist())
    return runs


check("order", orders)


@triton.jit
def _float_atomic_sum(x_ptr, out_ptr):
    pid = tl.program_id(0)
    tl.atomic_add(out_ptr, tl.load(x_ptr + pid))


def atomic_sums():
    x = torch.tensor([1e8, 1.0, -1e8, 3.5, 1e-3, -7.25, 2.0**-20, 1e7] * 8, dtype=torch.float32)
    sums = set()
    for _ in range(12):
        out = torch.zeros(1)
        _float_atomic_sum[(64,)](x, out)
        sums.add(out.item())
    return sorted(sums)


check("atomic_sums", atomic_sums)


@triton.jit
def _grid_cover(out_ptr):
    x = tl.program_id(0)
    y = tl.program_id(1)
    z = tl.program_id(2)
    index = (z * tl.num_programs(1) + y) * tl.num_programs(0) + x
    tl.atomic_add(out_ptr + index, 1)


def cover():
    counts = {}
    for grid in ((5,), (3, 4), (2, 3, 4)):
        out = torch.zeros(24, dtype=torch.int32)
        _grid_cover[grid](out)
        counts[str(grid)] = out.tolist()
    return counts


check("cover", cover)


@triton.jit
def _chain(values_ptr, prefix_ptr, flags_ptr, VOLATILE: tl.constexpr):
    # A chained scan: program i waits for program i - 1's prefix (decoupled look-back, one step).
    pid = tl.program_id(0)
    total = tl.load(values_ptr + pid)
    if pid > 0:
        if VOLATILE:
            while tl.load(flags_ptr + pid - 1, volatile=True) == 0:
                pass
        else:
            while tl.atomic_add(flags_ptr + pid - 1, 0) == 0:
                pass
        total += tl.load(prefix_ptr + pid - 1)
    tl.store(prefix_ptr + pid, total)
    tl.atomic_xchg(flags_ptr + pid, 1)


def chain(volatile):
    values = torch.arange(1, 33, dtype=torch.int32)
    prefix = torch.zeros(32, dtype=torch.int32)
    flags = torch.zeros(32, dtype=torch.int32)
    start = time.perf_counter()
    _chain[(32,)](values, prefix, flags, VOLATILE=volatile)
    return {"ok": prefix.tolist() == torch.cumsum(values, 0).tolist(), "seconds": time.perf_counter() - start}


check("chain_atomic", lambda: chain(False))
check("chain_volatile", lambda: chain(True))


@triton.jit
def _deadlock(flags_ptr):
    pid = tl.program_id(0)
    if pid == 0:
        while tl.atomic_add(flags_ptr, 0) == 0:
            pass


check("deadlock", lambda: _deadlock[(4,)](torch.zeros(1, dtype=torch.int32)))


# --- TF32 -------------------------------------------------------------------------------

@triton.jit
def _dot(a_ptr, b_ptr, c_ptr, BLOCK: tl.constexpr, PRECISION: tl.constexpr):
    r = tl.arange(0, BLOCK)
    a = tl.load(a_ptr + r[:, None] * BLOCK + r[None, :])
    b = tl.load(b_ptr + r[:, None] * BLOCK + r[None, :])
    if PRECISION == "default":
        c = tl.dot(a, b)
    elif PRECISION == "no_tf32":
        c = tl.dot(a, b, allow_tf32=False)
    else:
        c = tl.dot(a, b, input_precision=PRECISION)
    tl.store(c_ptr + r[:, None] * BLOCK + r[None, :], c)


def dots():
    block = 16
    # 1 + 2**-11 is a tie at TF32 precision (rounds to even: 1.0); 1 + 2**-11 + 2**-20 rounds up to 1 + 2**-10.
    a = torch.full((block, block), 1 + 2.0**-11, dtype=torch.float32)
    a[::2] = 1 + 2.0**-11 + 2.0**-20
    b = torch.ones(block, block, dtype=torch.float32)
    exact = (a.double() @ b.double()).float()
    tf32 = torch.where(torch.arange(block)[:, None] % 2 == 0, torch.tensor(block * (1 + 2.0**-10)), torch.tensor(float(block))).expand(block, block)
    report = {}
    for precision in ("default", "tf32", "ieee", "tf32x3", "no_tf32", "bf16x3", "bf16x6"):
        c = torch.zeros(block, block)
        _dot[(1,)](a, b, c, BLOCK=block, PRECISION=precision)
        report[precision] = {"exact": bool(torch.equal(c, exact)), "tf32": bool(torch.equal(c, tf32)), "error": float((c - exact).abs().max())}
    os.environ["TRITON_F32_DEFAULT"] = "ieee"
    try:
        c = torch.zeros(block, block)
        _dot[(1,)](a, b, c, BLOCK=block, PRECISION="default")
        report["env_ieee"] = {"exact": bool(torch.equal(c, exact))}
    finally:
        del os.environ["TRITON_F32_DEFAULT"]
    return report


check("dot", dots)


@triton.jit
def _fp8(x_ptr, xb_ptr, bits_ptr, back_ptr, half_ptr, brain_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    q = x.to(tl.float8e4nv)
    tl.store(bits_ptr + offs, q.to(tl.uint8, bitcast=True), mask=mask)
    tl.store(back_ptr + offs, q.to(tl.float32), mask=mask)
    tl.store(half_ptr + offs, x.to(tl.float16).to(tl.float8e5).to(tl.float32), mask=mask)
    # bfloat16 in and out (the interpreter keeps bfloat16 as its bits).
    tl.store(brain_ptr + offs, tl.load(xb_ptr + offs, mask=mask).to(tl.float8e4nv).to(tl.bfloat16), mask=mask)


def float8_casts():
    # Ties (exact e4m3 midpoints: 1 + 1/16 lies between 1 and 1.125), a carry into the exponent
    # (1.9375 rounds up to 2), values past 448 (saturate), NaN, -0.0, subnormals, and N(0, 100).
    special = torch.tensor([1.0625, 1.1875, -1.0625, 1.9375, 1e4, -1e4, 464.0, float("nan"), -0.0, 2.0**-9, 3 * 2.0**-10])
    x = torch.cat([special, torch.randn(20000, generator=torch.Generator().manual_seed(3)) * 100])
    bits = torch.empty(x.numel(), dtype=torch.uint8)
    back, half, brain = torch.empty_like(x), torch.empty_like(x), torch.empty(x.numel(), dtype=torch.bfloat16)
    _fp8[(triton.cdiv(x.numel(), 1024),)](x, x.to(torch.bfloat16), bits, back, half, brain, x.numel(), BLOCK=1024)
    expected = torch.where(x.isnan(), x, x.clamp(-448.0, 448.0)).to(torch.float8_e4m3fn)
    e5 = torch.where(x.isnan(), x, x.clamp(-57344.0, 57344.0)).to(torch.float16).to(torch.float8_e5m2).to(torch.float32)
    same_back = (back == expected.to(torch.float32)) | (back.isnan() & expected.to(torch.float32).isnan())
    same_half = (half == e5) | (half.isnan() & e5.isnan())
    via_bf16 = x.to(torch.bfloat16).float()
    via_bf16 = torch.where(via_bf16.isnan(), via_bf16, via_bf16.clamp(-448.0, 448.0)).to(torch.float8_e4m3fn).to(torch.float32)
    brain = brain.float()
    same_brain = (brain == via_bf16) | (brain.isnan() & via_bf16.isnan())
    return {
        "bits_differ": int((bits != expected.view(torch.uint8)).sum()),
        "back_differ": int((~same_back).sum()),
        "e5m2_differ": int((~same_half).sum()),
        "bfloat16_differ": int((~same_brain).sum()),
        "special_bits": bits[: special.numel()].tolist(),
    }


check("float8", float8_casts)

identities = op_trace.hook_identities()
RESULTS["fingerprinted"] = sorted(name for name in identities if "interpreter" in name or "libdevice" in name or "torch.cuda" in name)
print(json.dumps(RESULTS))
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("interpreter_gaps")
    path = folder / "gaps_script.py"
    path.write_text(textwrap.dedent(SCRIPT))
    env = {key: value for key, value in os.environ.items() if key not in {"PYTHONPATH", "TRITON_F32_DEFAULT"}}
    env.update(TRITON_INTERPRET="1", PYTHONPATH=str(REPO), TRITON_CACHE_DIR=str(folder / "triton-cache"))
    done = subprocess.run([sys.executable, str(path)], env=env, cwd=folder, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-6000:]
    parsed: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return parsed


def _value(results: dict[str, Any], label: str) -> Any:
    entry = results[label]
    assert entry["ok"], entry["error"]
    return entry["value"]


def _error(results: dict[str, Any], label: str) -> str:
    entry = results[label]
    assert not entry["ok"], f"{label} should have raised"
    return str(entry["error"])


def test_libdevice_and_tl_math_functions_run_by_name(results: dict[str, Any]) -> None:
    report = _value(results, "libdevice")
    bad = {index: error for index, (ok, error) in report.items() if not ok}
    assert not bad, bad


def test_libdevice_integer_intrinsics_and_conversions(results: dict[str, Any]) -> None:
    for index, (got, want) in _value(results, "integer").items():
        assert got == want, (index, got, want)


def test_a_libdevice_function_without_a_cpu_version_names_the_limit(results: dict[str, Any]) -> None:
    error = _error(results, "bessel")
    assert "interpreter limit" in error and "j0" in error and "GPU" in error


def test_inline_assembly_names_the_interpreter_limit(results: dict[str, Any]) -> None:
    error = _error(results, "inline_asm")
    assert "interpreter limit" in error and "inline_asm_elementwise" in error and "GPU path differs" in error


def test_warmup_returns_a_launchable_stand_in_for_the_compiled_kernel(results: dict[str, Any]) -> None:
    warm = _value(results, "warmup")
    assert warm["ok"] and warm["name"] == "_double_rows" and warm["warps"] == 4 and warm["occupancy"] > 0


def test_and_or_not_on_masks_mean_what_the_compiler_means(results: dict[str, Any]) -> None:
    untouched = -1.0
    x = list(range(32))
    # (offs < 10) and (offs < 7): only 0..6 written; plain Python `and` kept only the second mask.
    assert _value(results, "mask_0") == [float(v) if v < 7 else untouched for v in x]
    # (offs >= 10) or (offs < 3): a union, not the first operand.
    assert _value(results, "mask_1") == [float(v) if (v >= 10 or v < 3) else untouched for v in x]
    # not (offs >= 10): elementwise, not Python's `not` of an always-truthy block.
    assert _value(results, "mask_2") == [float(v) if v < 10 else untouched for v in x]
    # A falsy constexpr short-circuits to False: nothing written.
    assert _value(results, "mask_3") == [untouched] * 32
    assert _value(results, "mask_4") == [float(v) if v < 7 else untouched for v in x]


def test_conditions_on_blocks_and_chained_comparisons_are_refused_as_on_a_gpu(results: dict[str, Any]) -> None:
    assert "compiler refuses" in _error(results, "if_on_block") and "`if`" in _error(results, "if_on_block")
    assert "chained comparison" in _error(results, "chained_comparison")
    assert _value(results, "scalar_conditions") == [100, 111, 11]


def test_a_float_scalar_argument_is_an_fp32_scalar_tensor(results: dict[str, Any]) -> None:
    ok, error = _value(results, "float_scalar")
    assert ok, error


def test_device_queries_answer_for_the_documented_fake_device(results: dict[str, Any]) -> None:
    device = _value(results, "device")
    assert device["filled"]
    assert device["name"] == device["device_name"] == FAKE_DEVICE_NAME
    assert device["sms"] == device["triton_sms"] == 132
    assert device["triton_smem"] == 232448 and device["warp"] == 32
    assert device["torch_current"] == 0 and device["capability"] == [9, 0]
    assert device["target"] == ["cuda", 90, 32] and device["torch_device"] == "cpu"
    assert device["available"] is False
    # Kernels' constexpr target checks still see no target (portable code paths, no PTX inline asm).
    assert device["is_cuda_constexpr"] is False


def test_programs_run_in_a_fresh_shuffled_order_every_launch(results: dict[str, Any]) -> None:
    runs = _value(results, "order")
    for order in runs:
        assert sorted(order) == list(range(64))
    assert len({tuple(order) for order in runs}) == 3
    assert all(order != list(range(64)) for order in runs)
    # Float atomics sum in a run-dependent order, as on a GPU.
    assert len(_value(results, "atomic_sums")) > 1


def test_every_program_runs_exactly_once_on_1d_2d_and_3d_grids(results: dict[str, Any]) -> None:
    counts = _value(results, "cover")
    assert counts["(5,)"] == [1] * 5 + [0] * 19
    assert counts["(3, 4)"] == [1] * 12 + [0] * 12
    assert counts["(2, 3, 4)"] == [1] * 24


def test_spin_waiting_chains_complete_and_a_deadlock_raises(results: dict[str, Any]) -> None:
    for label in ("chain_atomic", "chain_volatile"):
        chain = _value(results, label)
        assert chain["ok"], label
        assert chain["seconds"] < 60
    error = _error(results, "deadlock")
    assert "interpreter limit" in error and "spins" in error and "GPU path differs: on a GPU programs run concurrently" in error


def test_tf32_rounding_unless_the_kernel_asks_for_ieee(results: dict[str, Any]) -> None:
    dots = _value(results, "dot")
    assert dots["default"]["tf32"] and dots["tf32"]["tf32"]
    assert not dots["default"]["exact"]
    for precision in ("ieee", "tf32x3", "no_tf32", "env_ieee"):
        assert dots[precision]["exact"], precision
    assert dots["bf16x3"]["error"] < 1e-4 and dots["bf16x6"]["error"] < 1e-5


def test_float8_casts_round_to_nearest_even_and_saturate_as_on_a_gpu(results: dict[str, Any]) -> None:
    casts = _value(results, "float8")
    assert casts["bits_differ"] == 0 and casts["back_differ"] == 0 and casts["e5m2_differ"] == 0, casts
    assert casts["bfloat16_differ"] == 0, casts
    # 1.0625 -> 1.0 (tie to even), 1.1875 -> 1.25 (tie to even), -1.0625 -> -1.0, 1.9375 -> 2.0 (carry),
    # +-1e4 and 464 -> +-448 (saturate), NaN -> NaN, -0.0 kept, 2^-9 (the smallest subnormal), 3 * 2^-10 -> a tie.
    assert casts["special_bits"] == [0x38, 0x3A, 0xB8, 0x40, 0x7E, 0xFE, 0x7E, 0x7F, 0x80, 0x01, 0x02]


def test_the_patches_verdicts_rest_on_are_in_the_tamper_fingerprint(results: dict[str, Any]) -> None:
    names = set(results["fingerprinted"])
    for name in (
        "triton.runtime.interpreter.GridExecutor.__init__",
        "triton.runtime.interpreter.InterpreterBuilder.set_grid_dim",
        "triton.runtime.interpreter.InterpreterBuilder.create_atomic_rmw",
        "triton.runtime.interpreter.InterpreterBuilder.create_dot",
        "triton.runtime.interpreter._implicit_cvt",
        "triton.runtime.interpreter.FunctionRewriter.ast_transformer",
    ):
        assert name in names, (name, sorted(names))
    # libdevice and the fake device only ever matter to the kernel that uses them: not watched (the fingerprint stays small).
    assert not any("libdevice" in name or "torch.cuda" in name for name in names)


# --- pieces that need no interpreter ------------------------------------------------------


def test_tf32_and_bf16_rounding_is_round_to_nearest_even() -> None:
    values = np.array([1 + 2.0**-11, 1 + 3 * 2.0**-11, 1 + 2.0**-11 + 2.0**-20, -(1 + 2.0**-10), np.inf, -np.inf, 3.0e38], dtype=np.float32)
    rounded = round_to_tf32(values)
    assert rounded.dtype == np.float32
    assert rounded[:4].tolist() == [1.0, 1 + 2.0**-9, 1 + 2.0**-10, -(1 + 2.0**-10)]
    assert np.isinf(rounded[4:6]).all() and np.isnan(round_to_tf32(np.array([np.nan], dtype=np.float32)))[0]
    assert (round_to_tf32(rounded) == rounded).all()
    assert (round_to_tf32(values).view(np.uint32) & 0x1FFF == 0)[np.isfinite(values)].all()
    assert round_to_bf16(np.array([1 + 2.0**-8, 1 + 3 * 2.0**-8], dtype=np.float32)).tolist() == [1.0, 1 + 2.0**-6]


def test_shuffled_is_a_fresh_permutation() -> None:
    orders = [shuffled(50) for _ in range(4)]
    assert all(sorted(order) == list(range(50)) for order in orders)
    assert len({tuple(order) for order in orders}) == 4
    assert shuffled(1) == [0] and shuffled(0) == []


def test_every_cuda_libdevice_symbol_has_a_cpu_version() -> None:
    import triton.language.extra.cuda.libdevice as cuda_libdevice

    source = Path(cuda_libdevice.__file__).read_text()
    names = set(symbol_names(source).values())
    assert len(names) > 150
    assert names <= set(IMPLEMENTATIONS), sorted(names - set(IMPLEMENTATIONS))
    assert symbol_names(source)["__nv_rsqrtf"] == "rsqrt" and symbol_names(source)["__nv_fast_expf"] == "fast_expf"


def test_interpreter_limits_are_sentences_and_the_error_names_the_limit() -> None:
    assert len(INTERPRETER_LIMITS) >= 5
    assert all(limit.strip() and limit.endswith(".") for limit in INTERPRETER_LIMITS)
    message = str(InterpreterLimitError("x is not there"))
    assert message.startswith("interpreter limit (CPU grading): x is not there") and "GPU path differs" in message


HONEST_THIRD_PARTY = """
import torch, triton, triton.language as tl
from triton.language.extra import libdevice

@triton.jit
def _add(x, y, out, n, scale, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = (offs < n) and (offs >= 0)
    s = scale.to(tl.float32)
    total = tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask)
    tl.store(out + offs, libdevice.fma(total, s, 0.0), mask=mask)

def kernel(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    sms = torch.cuda.get_device_properties(x.device).multi_processor_count
    props = triton.runtime.driver.active.utils.get_device_properties(triton.runtime.driver.active.get_current_device())
    block = 128 if sms * props["warpSize"] > 0 else 64
    with torch.cuda.device(x):
        _add[(triton.cdiv(n, block),)](x, y, out, n, 1.0, BLOCK=block)
    return out
"""


def test_honest_third_party_idioms_pass_a_cpu_grade(vector_add: Task, write_submission: Any) -> None:
    result = grade(vector_add, write_submission(HONEST_THIRD_PARTY), GradeOptions(timing_reps=1), secret=7)
    assert result.status == Status.passed, (result.error, result.feedback)


def test_the_prompt_lists_the_interpreter_limits_for_cpu_grading_only(vector_add: Task) -> None:
    from gym.tasks.prompt import render_prompt

    cpu = render_prompt(vector_add, cpu=True)
    gpu = render_prompt(vector_add, cpu=False)
    assert "## CPU grading (Triton interpreter)" in cpu and "## CPU grading" not in gpu
    assert all(limit in cpu for limit in INTERPRETER_LIMITS)
    # The section is appended: everything else is the GPU prompt, unchanged.
    assert cpu.startswith(gpu.rstrip("\n"))
    import torch

    assert render_prompt(vector_add) == (gpu if torch.cuda.is_available() else cpu)
