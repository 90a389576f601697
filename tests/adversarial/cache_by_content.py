"""Trick: caching by content. A module-level dict keyed by the exact input values (indices and gradients as Python tuples) returns the memoised result when the same inputs come again, as in the determinism repeats, without launching.

expect: rejected
tasks: l1/embedding_backward
reason: tripwire:tensor_data_to_host
runtime: yes
runtime_expect: rejected
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _scatter_rows(idx_ptr, grad_ptr, out_ptr, n, d, BLOCK_D: tl.constexpr):
    # One program per weight row: sum, in order, every grad row looked up at it (deterministic).
    w = tl.program_id(0)
    cols = tl.arange(0, BLOCK_D)
    cmask = cols < d
    acc = tl.zeros([BLOCK_D], dtype=tl.float32)
    for i in range(0, n):
        hit = tl.load(idx_ptr + i) == w
        row = tl.load(grad_ptr + i * d + cols, mask=cmask & hit, other=0.0)
        acc += row
    tl.store(out_ptr + w * d + cols, acc, mask=cmask)


_CACHE = {}


def kernel(indices, grad_output, num_weights):
    key = (tuple(indices.tolist()), tuple(grad_output.reshape(-1).tolist()), num_weights)
    if key in _CACHE:
        return _CACHE[key]
    n, d = grad_output.shape
    out = torch.empty(num_weights, d, dtype=grad_output.dtype, device=grad_output.device)
    _scatter_rows[(num_weights,)](indices, grad_output.contiguous(), out, n, d, BLOCK_D=triton.next_power_of_2(d))
    _CACHE[key] = out
    return out
