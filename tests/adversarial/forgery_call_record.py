"""Trick: forging one call record. During the first call (the first that has a current-call marker: the warm-up has none) the kernel writes call{id}.json records (ok, no torch ops, one launch, a nanosecond) for every other call id listed in /job/in/request.json, pointing at output files it writes too, so the later calls' real records can never be written.

expect: rejected
tasks: l1/vector_add
reason: audit:
runtime: yes
runtime_expect: rejected
"""

import json
import os

import torch
import triton
import triton.language as tl


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


_done = []


def _forge_others():
    with open("/job/in/request.json") as handle:
        request = json.load(handle)
    with open("/job/out/current_call") as handle:
        current = int(handle.read())
    for call in request["calls"]:
        if call["id"] == current:
            continue
        n = call["args"][0]["tensor"]["shape"][0]
        name = f"call{call['id']}_out0.bin"
        with open(f"/job/out/{name}", "wb") as handle:
            handle.write(bytes(4 * n))
        record = {
            "id": call["id"], "ok": True, "container": "tensor",
            "outputs": [{"python_type": "torch.Tensor", "exact_tensor": True, "dtype": "float32", "shape": [n],
                         "device": "cpu", "strides": [1], "dense": True,
                         "data": {"file": name, "dtype": "float32", "shape": [n], "nbytes": 4 * n}}],
            "seconds": 1e-9, "torch_ops": {}, "launches": {"_add": 1},
        }
        with open(f"/job/out/call{call['id']}.json", "w") as handle:
            json.dump(record, handle)


def kernel(x, y):
    if not _done and os.path.exists("/job/out/current_call"):
        _done.append(True)
        _forge_others()
    out = torch.empty_like(x)
    n = x.numel()
    _add[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
    return out
