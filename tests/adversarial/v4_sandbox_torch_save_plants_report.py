"""Trick: a file written by torch's C++ serializer. `torch.save(obj, path)` with a path opens the file in C++ (PyTorchFileWriter), so no Python `open` audit event fires. The first call plants the worker's report.json in the output folder (and a stray file beside it), hoping the grader reads a planted report or the worker's exclusive create fails silently. The kernel itself is honest.

expect: rejected
tasks: l1/vector_add
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


_DONE = []


def kernel(x, y):
    if not _DONE:
        _DONE.append(True)
        payload = {"phase": "done", "tampered": [], "files": {}}
        for name in ("report.json", "witness.tape.json"):
            try:
                torch.save(payload, "/job/out/" + name)
            except Exception:
                pass
    out = torch.empty_like(x)
    n = out.numel()
    _add[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out
