"""Trick: write into the witness's private channel or memory through /proc. Its standard output is open as /proc/1/fd/1 and its memory as /proc/1/mem; a submission that could write there could announce a replay that never happened, or change what the witness reports.

expect: rejected, wrong_answer
tasks: l1/row_sum
runtime: yes
"""

import os

import torch
import triton
import triton.language as tl


@triton.jit
def _zeros(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=out_ptr.dtype.element_ty), mask=offs < n)


def _forge() -> None:
    for path in ("/proc/1/fd/1", "/proc/1/mem"):
        try:
            descriptor = os.open(path, os.O_WRONLY)
            os.write(descriptor, b"kgym-witness ready\n")
            os.close(descriptor)
        except (OSError, PermissionError):
            pass


_forge()


def kernel(x):
    m = x.shape[0]
    out = torch.empty((m,), dtype=x.dtype, device=x.device)
    _zeros[(triton.cdiv(m, 256),)](out, m, BLOCK=256)
    return out
