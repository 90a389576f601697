"""Trick: a kernel made at run time wearing a file kernel's name. The file's `@triton.jit _row_sum` is the honest, slow kernel (64-wide blocks in a loop). The call launches another jit function, made with `triton.jit(fn)` inside `kernel()` from a plain module-level function whose `__qualname__` is set to "_row_sum" (its `__name__` stays, the interpreter looks the rewritten function up by it) (same signature, 4x wider steps: a few times faster, under the 5x the CPU floor allows). The tape names "_row_sum", so the witness replays (and compiles, and times) the honest one from the kernels file, while the kernel that really ran and was timed never passed the kernels-file rules nor the GPU compile.

expect: rejected
tasks: l1/row_sum
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _row_sum(x_ptr, out_ptr, n_cols, x_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


def _wide(x_ptr, out_ptr, n_cols, x_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK * 4], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK * 4):
        cols = start + tl.arange(0, BLOCK * 4)
        acc += tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


_wide.__qualname__ = "_row_sum"
_FAST = []


def kernel(x):
    if not _FAST:
        _FAST.append(triton.jit(_wide))
    x = x.contiguous()
    m, n = x.shape
    out = torch.empty((m,), dtype=x.dtype, device=x.device)
    _FAST[0][(m,)](x, out, n, x.stride(0), BLOCK=64)
    return out
