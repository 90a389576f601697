"""Trick: another compute library reached without importing it. numpy is already loaded by the Triton interpreter, so torch.sys.modules["numpy"] (sys as an attribute of torch) hands it over; np.asarray views the input and output tensors' memory without any .numpy() call, numpy's BLAS does the float32 matmul straight into the output, and a decoy kernel launches. No aten op runs.

expect: rejected
tasks: l1/matmul
runtime: yes
runtime_expect: rejected
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _touch(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask), mask=mask)


def _decoy(out):
    _touch[(triton.cdiv(out.numel(), 1024),)](out, out.numel(), BLOCK=1024)
    return out


_np = torch.sys.modules["numpy"]


def kernel(a, b):
    out = torch.empty(a.shape[0], b.shape[1], dtype=a.dtype, device=a.device)
    _np.asarray(out)[...] = _np.asarray(a) @ _np.asarray(b)
    return _decoy(out)
