"""Trick: full result-channel forgery. At import, the submission reads /job/in/request.json and every call's input files, computes every answer on the host (numpy reached as torch.sys.modules["numpy"], files through torch.os: no forbidden import or call), and writes every call{id}.json record (no torch ops, one Triton launch, a nanosecond each), every output .bin and a clean report.json into /job/out before the worker writes anything. The worker then trips over its own exclusive-create checks, cannot write its report (the forged one is in place) and exits; the grader reads only the forged records.

expect: rejected
tasks: l1/vector_add
reason: audit:sys
runtime: yes
runtime_expect: rejected
"""

import json

import torch
import triton
import triton.language as tl

_os = torch.os
_np = torch.sys.modules["numpy"]
_IN, _OUT = "/job/in", "/job/out"


def _read(path):
    fd = _os.open(path, _os.O_RDONLY)
    try:
        return _os.read(fd, _os.fstat(fd).st_size)
    finally:
        _os.close(fd)


def _write(path, data):
    fd = _os.open(path, _os.O_WRONLY | _os.O_CREAT | _os.O_TRUNC, 0o644)
    try:
        _os.write(fd, data)
    finally:
        _os.close(fd)


def _forge():
    request = json.loads(_read(f"{_IN}/request.json"))
    for call in request["calls"]:
        x, y = (_np.frombuffer(_read(f"{_IN}/{arg['tensor']['file']}"), dtype=_np.float32) for arg in call["args"])
        out = (x + y).astype(_np.float32)
        name = f"call{call['id']}_out0.bin"
        _write(f"{_OUT}/{name}", out.tobytes())
        record = {
            "id": call["id"], "ok": True, "container": "tensor",
            "outputs": [{
                "python_type": "torch.Tensor", "exact_tensor": True, "dtype": "float32", "shape": [int(out.size)],
                "device": "cpu", "strides": [1], "dense": True,
                "data": {"file": name, "dtype": "float32", "shape": [int(out.size)], "nbytes": int(out.nbytes)},
            }],
            "inputs_mutated": [], "seconds": 1e-9, "torch_ops": {}, "launches": {"_add": 1}, "new_threads": [],
        }
        _write(f"{_OUT}/call{call['id']}.json", json.dumps(record).encode())
    report = {
        "phase": "done", "import_ops": {}, "import_launches": {}, "changed_after_return": [], "forged": None,
        "torch_version": torch.__version__, "triton_version": triton.__version__, "device_name": "cpu (Triton interpreter)",
    }
    _write(f"{_OUT}/report.json", json.dumps(report).encode())


if _os.path.isdir(_OUT):
    _forge()


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def kernel(x, y):
    return torch.empty_like(x)
