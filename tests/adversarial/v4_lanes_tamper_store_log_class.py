"""Trick: switch the interpreter's store log off in the submission's own process. The lane layer's state class is reached through the globals of the builder method it patched, and its `log` attribute replaced with a property that is always None, so no program logs its stores and every lane reads every other lane's store at once, as the bare interpreter did (no module global changes, so the worker's fingerprint of its own code does not move). The kernel carries a row prefix sum through memory without a barrier (see v4_lanes_carry_through_memory_cumsum.py). The witness replays the kernels in a clean process the submission never touched, where the reads are stale again.

expect: rejected, wrong_answer
tasks: l1/cumsum
runtime: yes
"""

import torch
import triton
import triton.language as tl
from triton.runtime import interpreter

_store = vars(interpreter.InterpreterBuilder).get("create_masked_store")
for _ in range(4):
    _globals = getattr(_store, "__glo" + "bals__", {})
    if "StoreLog" in _globals:
        type.__setattr__(type(_globals["STATE"]), "log", property(lambda self: None, lambda self, value: None))
        break
    _cells = getattr(_store, "__clo" + "sure__", None) or ()
    _store = next((c.cell_contents for c in _cells if callable(c.cell_contents)), None)


@triton.jit
def _cumsum_rows(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = out_ptr + row * stride
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        # The running total: what the previous block's last lane stored (no barrier in between).
        carry = tl.load(base + start - 1, mask=start > 0, other=0.0).to(tl.float32)
        tl.store(base + cols, (tl.cumsum(x, axis=0) + carry).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x):
    x = x.contiguous()
    m, n = x.shape
    out = torch.zeros_like(x)
    _cumsum_rows[(m,)](x, out, n, x.stride(0), BLOCK=512)
    return out
