"""Trick: blinding the op trace. torch.sys.modules["__main__"] is the grader's worker module; at import the submission replaces its OpTrace (looked up afresh for every call) with a do-nothing context manager that reports no ops, so x.softmax (a method) runs unseen behind a decoy launch.

expect: rejected
tasks: l1/softmax
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


class _BlindTrace:
    def __init__(self):
        self.ops = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def update(self, *args, **kwargs):
        pass


for _name in ("__main__", "gym.worker", "gym.worker.submission"):
    _host = torch.sys.modules.get(_name)
    if _host is not None and hasattr(_host, "OpTrace"):
        _host.OpTrace = _BlindTrace


def kernel(x):
    return _decoy(x.softmax(dim=-1).contiguous())
