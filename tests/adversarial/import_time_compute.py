"""Trick: torch compute at import time. While the module is imported (outside any call, so outside every per-call trace and timer) it precomputes with torch an exp() lookup table over a fixed grid, the kind of table a later call could gather from. The import uses tensor methods (cumsum, div, exp), so no torch.* compute call appears in the source; the calls themselves run an ordinary kernel.

expect: rejected
tasks: l1/softmax
reason: torch_compute_at_import
runtime: yes
runtime_expect: rejected
"""

import torch
import triton
import triton.language as tl

# Every float16 bit pattern, as float32, and its exponential: computed by torch at import.
_codes = torch.ones(1 << 16, dtype=torch.float32).cumsum(0)
_EXP_TABLE = (_codes - 32768.0).div(256.0).exp()


@triton.jit
def _softmax_rows(x_ptr, out_ptr, n_cols, x_stride, out_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * out_stride + cols, (e / tl.sum(e, axis=0)).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x):
    x = x.contiguous()
    m, n = x.shape
    out = torch.empty_like(x)
    _softmax_rows[(m,)](x, out, n, x.stride(0), out.stride(0), BLOCK=triton.next_power_of_2(n))
    return out
