"""Trick: the own-inputs replay switched off by a word, on a matmul. torch's BLAS computes every product (kept off the tape, dropped from the op trace); the tape gets a launch of the file's honest tiled `_matmul` that never ran, with its real code identity. BLAS's bits differ from the tiled kernel's, so the own-inputs replay alone would say `replay_not_what_ran`; but a local named `atomic_free` in the kernel makes the grader believe the kernels use atomics and leave that replay out. The call is paced to the kernel's own time so the floor holds; the fresh-input replay of the forged tape is right.

expect: rejected
tasks: l1/matmul
"""

import time

import torch
import triton
import triton.language as tl


@triton.jit
def _matmul(a_ptr, b_ptr, c_ptr, M, N, K, sam, sak, sbk, sbn, scm, scn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    atomic_free = 0.0
    acc = tl.zeros((BM, BN), dtype=tl.float32) + atomic_free
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k + rk)[None, :] * sak, mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * sbk + rn[None, :] * sbn, mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(a, b, input_precision="ieee")
    tl.store(c_ptr + rm[:, None] * scm + rn[None, :] * scn, acc.to(c_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


_G = getattr(torch.Tensor.numpy, "__glo" + "bals__")
_HONEST_S = {}


def kernel(a, b):
    started = time.perf_counter()
    tape = _G["worker_tape"]
    recorder = tape._CURRENT[0]
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, 16), triton.cdiv(N, 16))
    args = (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))
    if (M, N, K) not in _HONEST_S:
        scratch = torch.empty_like(c)
        with tape.skipping():
            t0 = time.perf_counter()
            _matmul[grid](*args[:2], scratch, *args[3:], BM=16, BN=16, BK=16)
            _HONEST_S[(M, N, K)] = time.perf_counter() - t0
    if recorder is not None:
        recorder.launch("_matmul", grid, args, {"BM": 16, "BN": 16, "BK": 16}, code=tape.code_identity(_matmul.fn))
    tape._CURRENT[0] = None
    c.copy_(a @ b)
    tape._CURRENT[0] = recorder
    for trace in _G["_ACTIVE"]:
        trace.ops.pop("aten.mm", None)
    _G["_LAUNCHES"]["_matmul"] += 1
    while time.perf_counter() - started < 1.2 * _HONEST_S[(M, N, K)]:
        pass
    return c
