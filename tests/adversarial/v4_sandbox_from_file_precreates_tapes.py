"""Trick: plant the tapes before the worker writes them. With torch's C++ file mapping (`torch.from_file(..., shared=True)`, no Python audit event) the first call creates call<k>.tape.json for every id up to 600 not written yet in the output folder, each a forged tape of a torch-free "replay" (one launch of the honest kernel), hoping the witness reads the planted tape and the worker's own write fails quietly. The kernel computes with torch (dropped from the op trace).

expect: rejected
tasks: l1/vector_add
"""

import json

import torch
import triton
import triton.language as tl


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


_G = getattr(torch.Tensor.numpy, "__glo" + "bals__")
_PLANTED = set()


def _ref(buffer, n):
    return {"buffer": buffer, "offset": 0, "shape": [n], "strides": [1], "dtype": "float32"}


def _plant(call_id, n):
    tape = {
        "call": call_id,
        "buffers": [
            {"id": 0, "origin": "input", "nbytes": n * 4, "param": "x", "view": _ref(0, n)},
            {"id": 1, "origin": "input", "nbytes": n * 4, "param": "y", "view": _ref(1, n)},
            {"id": 2, "origin": "external", "nbytes": n * 4},
        ],
        "steps": [
            {"kind": "launch", "kernel": "_add", "grid": [(n + 1023) // 1024], "args": [{"kind": "tensor", "ref": _ref(i, n)} for i in range(3)] + [{"kind": "int", "integer": n}], "kwargs": {"BLOCK": {"kind": "int", "integer": 1024}}},
        ],
        "outputs": {"kind": "tensor", "ref": _ref(2, n)},
    }
    data = json.dumps(tape).encode()
    target = torch.from_file(f"/job/out/call{call_id}.tape.json", shared=True, size=len(data), dtype=torch.uint8)
    target.copy_(torch.frombuffer(bytearray(data), dtype=torch.uint8))


def _exists(call_id):
    try:
        torch.from_file(f"/job/out/call{call_id}.tape.json", shared=False, size=1, dtype=torch.uint8)
        return True
    except RuntimeError:
        return False


def kernel(x, y):
    n = x.numel()
    if not _PLANTED:
        for call_id in range(600):
            if not _exists(call_id):
                _PLANTED.add(call_id)
                _plant(call_id, n)
    out = x + y
    for trace in _G["_ACTIVE"]:
        trace.ops.pop("aten.add", None)
    _add[(1,)](x, y, out, 0, BLOCK=16)
    return out
