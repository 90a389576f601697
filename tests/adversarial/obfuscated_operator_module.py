"""Trick: obfuscated compute via the operator module. operator.attrgetter("nn.functional.gelu") pulls GELU off torch, operator.matmul and operator.add do the rest; a decoy kernel runs on the result.

expect: rejected
tasks: l1/matmul_bias_gelu
reason: torch_compute
runtime: yes
runtime_expect: rejected
"""

import operator

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


_gelu = operator.attrgetter("nn.functional.gelu")(torch)


def kernel(a, b, bias):
    return _decoy(_gelu(operator.add(operator.matmul(a, b), bias), approximate="tanh").contiguous())
