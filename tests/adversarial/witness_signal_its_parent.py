"""Trick: silence the witness. The submission's parent process (the witness, which replays the kernels after the submission's process is gone) is sent SIGKILL and SIGTERM, by a built name; with no witness left to replay anything, a kernel that writes zeros hopes to be judged by its own records alone.

expect: rejected, runtime_error, wrong_answer
tasks: l1/row_sum
runtime: yes
"""

import importlib

import torch
import triton
import triton.language as tl


@triton.jit
def _zeros(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=out_ptr.dtype.element_ty), mask=offs < n)


_os = importlib.import_module("o" + "s")
for _signal in (9, 15):
    try:
        getattr(_os, "ki" + "ll")(getattr(_os, "getp" + "pid")(), _signal)
    except (OSError, PermissionError):
        pass


def kernel(x):
    m = x.shape[0]
    out = torch.empty((m,), dtype=x.dtype, device=x.device)
    _zeros[(triton.cdiv(m, 256),)](out, m, BLOCK=256)
    return out
