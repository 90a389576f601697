"""Trick: obfuscated import with importlib. importlib.import_module loads torch.nn.functional under a built name and silu() does the work; a decoy kernel runs on the result.

expect: rejected
tasks: l1/silu
reason: torch_compute
runtime: yes
runtime_expect: rejected
"""

import importlib

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


_functional = importlib.import_module(".".join(["torch", "nn", "functional"]))


def kernel(x):
    return _decoy(_functional.silu(x).contiguous())
