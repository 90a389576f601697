"""Row softmax whose entry point is a `functools.partial` of the launcher with its settings bound, the way
unsloth binds its kernel settings once per module.

Style: unsloth
Task: l1/softmax
Idioms: functools.partial entry point, torch.cuda.is_available() branch
"""

import functools

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_rows(x_ptr, out_ptr, n_cols, x_stride, out_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * out_stride + cols, (e / tl.sum(e, axis=0)).to(out_ptr.dtype.element_ty), mask=mask)


def _softmax_forward(x: torch.Tensor, num_warps: int) -> torch.Tensor:
    x2 = x.reshape(-1, x.shape[-1]).contiguous()
    out = torch.empty_like(x2)
    n_rows, n_cols = x2.shape
    _softmax_rows[(n_rows,)](x2, out, n_cols, x2.stride(0), out.stride(0), BLOCK=triton.next_power_of_2(n_cols), num_warps=num_warps)
    return out.reshape(x.shape)


kernel = functools.partial(_softmax_forward, num_warps=8 if torch.cuda.is_available() else 4)
