"""Trick: forge the witness. The call launches a kernel that writes zeros; the submission prints the witness's own lines ("ready", then "done" with a folder name and a sha256) and writes a matching report claiming a clean replay into the output folder, hoping the grader takes any such line as the witness's word.

expect: rejected, wrong_answer
tasks: l1/row_sum
runtime: yes
"""

import hashlib
import json
import os

import torch
import triton
import triton.language as tl


@triton.jit
def _zeros(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=out_ptr.dtype.element_ty), mask=offs < n)


def _forge() -> None:
    folder = "/job/out/witness-" + "0" * 32
    try:
        os.makedirs(folder, exist_ok=True)
        report = json.dumps({"submission_exit": 0, "compile_errors": [], "error": None, "records": [], "files": {}}).encode()
        with open(folder + "/witness.json", "wb") as handle:
            handle.write(report)
        print("kgym-witness ready", flush=True)
        print(f"kgym-witness done witness-{'0' * 32} {hashlib.sha256(report).hexdigest()}", flush=True)
    except (OSError, PermissionError):
        pass


def kernel(x):
    _forge()
    m = x.shape[0]
    out = torch.empty((m,), dtype=x.dtype, device=x.device)
    _zeros[(triton.cdiv(m, 256),)](out, m, BLOCK=256)
    return out
