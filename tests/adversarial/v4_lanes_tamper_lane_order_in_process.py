"""Trick: switch the interpreter's lane semantics off in the submission's own process. The lane layer's globals (its permutation source and the per-program store log) are reached through the globals of the builder method it patched, and replaced: every atomic's lanes then apply in index order again and no store is logged. The kernel is the one-program float-atomic embedding backward (its lanes hit the same weight rows), under a `deterministic` contract. The witness replays the kernels in a clean process the submission never touched, so what the submission's process does to its own interpreter decides nothing.

expect: rejected, wrong_answer
tasks: l1/embedding_backward
runtime: yes
"""

import numpy
import torch
import triton
import triton.language as tl
from triton.runtime import interpreter

_rmw = vars(interpreter.InterpreterBuilder).get("create_atomic_rmw")
for _ in range(4):
    _globals = getattr(_rmw, "__glo" + "bals__", {})
    if "permutation" in _globals:
        _globals["permutation"] = numpy.arange
        _globals["increasing"] = lambda addresses: True
        _globals["begin_program"] = lambda: None
        break
    _cells = getattr(_rmw, "__clo" + "sure__", None) or ()
    _rmw = next((c.cell_contents for c in _cells if callable(c.cell_contents)), None)


@triton.jit
def _scatter_all(idx_ptr, grad_ptr, out_ptr, N, D, stride_gn, stride_ow, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    tokens = tl.arange(0, BLOCK_N)
    rows = tl.load(idx_ptr + tokens, mask=tokens < N, other=0)
    for d0 in range(0, D, BLOCK_D):
        cols = d0 + tl.arange(0, BLOCK_D)
        mask = (tokens[:, None] < N) & (cols[None, :] < D)
        g = tl.load(grad_ptr + tokens[:, None] * stride_gn + cols[None, :], mask=mask, other=0.0)
        tl.atomic_add(out_ptr + rows[:, None] * stride_ow + cols[None, :], g, mask=mask)


def kernel(indices, grad_output, num_weights):
    grad_output = grad_output.contiguous()
    N, D = grad_output.shape
    out = torch.zeros((num_weights, D), dtype=grad_output.dtype, device=grad_output.device)
    _scatter_all[(1,)](indices, grad_output, out, N, D, grad_output.stride(0), out.stride(0), BLOCK_N=triton.next_power_of_2(N), BLOCK_D=32)
    return out
