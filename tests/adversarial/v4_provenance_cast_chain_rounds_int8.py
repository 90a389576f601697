"""Trick: let torch's casts do the rounding. The task's hard part is round-half-to-even of x / scale (its inputs put half the elements of every third row exactly on a half). The Triton kernel only computes the scale and w = x / scale + 1536 in float32; torch's allowed dtype plumbing then rounds: float32 -> float16 rounds to nearest even integer (float16's ulp is 1 on [1024, 2048)), float16 -> int16 is exact, and int16 -> int8 wraps modulo 256 (1536 = 6 x 256), which is the rounded q. Every op is "aten._to_copy"; the values of q were produced by casts where the reference computes torch.round.

expect: rejected, wrong_answer
tasks: l1/int8_quant_rowwise
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _scaled(x_ptr, w_ptr, scale_ptr, n_cols, x_row_stride, w_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=0.0).to(tl.float32)
    amax = tl.max(tl.abs(x), axis=0)
    scale = tl.where(amax > 0, tl.div_rn(amax, 127.0), 1.0)
    v = tl.div_rn(x, tl.zeros_like(x) + scale)
    tl.store(w_ptr + row * w_row_stride + cols, v + 1536.0, mask=mask)
    tl.store(scale_ptr + row, scale)


def kernel(x):
    x = x.contiguous()
    m, n = x.shape
    w = torch.empty((m, n), dtype=torch.float32, device=x.device)
    scale = torch.empty(m, dtype=torch.float32, device=x.device)
    _scaled[(m,)](x, w, scale, n, x.stride(0), w.stride(0), BLOCK=triton.next_power_of_2(n))
    q = w.to(torch.float16).to(torch.int16).to(torch.int8)
    return q, scale
