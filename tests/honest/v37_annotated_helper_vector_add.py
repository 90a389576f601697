"""Vector add as FlagGems writes it: jit helpers with ordinary annotations (`def program_id(axis: int) -> tl.tensor`, verbatim from FlagGems' triton_lang_extension.py) called from the kernel.

Style: FlagGems
Task: l1/vector_add
Idioms: torch.cuda.is_available() branch
"""

import torch
import triton
from triton import language as tl


@triton.jit
def program_id(
    axis: int,
) -> tl.tensor:
    return tl.program_id(axis).to(tl.int64)


@triton.jit
def add_func(x: tl.tensor, y: tl.tensor) -> tl.tensor:
    return x + y


@triton.jit
def add_kernel(X, Y, Out, n_elements: int, BLOCK: tl.constexpr):
    pid = program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    tl.store(Out + offsets, add_func(tl.load(X + offsets, mask=mask), tl.load(Y + offsets, mask=mask)), mask=mask)


def kernel(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = out.numel()
    BLOCK = 1024 if torch.cuda.is_available() else 2048
    add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK=BLOCK)
    return out
