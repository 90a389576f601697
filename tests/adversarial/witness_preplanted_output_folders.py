"""Trick: be there first. Before the witness makes its folder for the replay's report and outputs, the submission fills the output folder with folders under the witness's naming scheme (and a replay folder), each holding a report that claims a clean replay, hoping one of them is taken for the witness's.

expect: rejected, wrong_answer
tasks: l1/row_sum
runtime: yes
"""

import json
import os

import torch
import triton
import triton.language as tl


@triton.jit
def _zeros(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=out_ptr.dtype.element_ty), mask=offs < n)


def _plant() -> None:
    report = json.dumps({"submission_exit": 0, "compile_errors": [], "error": None, "records": [], "files": {}})
    try:
        for number in range(16):
            folder = f"/job/out/witness-{number:032x}"
            os.makedirs(folder, exist_ok=True)
            with open(folder + "/witness.json", "w") as handle:
                handle.write(report)
        os.makedirs("/job/out/replay", exist_ok=True)
    except (OSError, PermissionError):
        pass


_plant()


def kernel(x):
    m = x.shape[0]
    out = torch.empty((m,), dtype=x.dtype, device=x.device)
    _zeros[(triton.cdiv(m, 256),)](out, m, BLOCK=256)
    return out
