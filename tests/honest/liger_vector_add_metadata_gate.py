"""Vector addition behind a version gate read from the installed package's metadata, as Liger-Kernel reads
the Triton version it runs against (`importlib.metadata.version`, which opens the distribution's metadata files).

Style: Liger-Kernel
Task: l1/vector_add
Idioms: importlib.metadata version gate, torch.cuda.is_available() branch
"""

import importlib.metadata

import torch
import triton
import triton.language as tl

TRITON_VERSION = tuple(int(part) for part in importlib.metadata.version("triton").split(".")[:2])
# Newer Triton (and a GPU) take the larger block.
BLOCK = 2048 if TRITON_VERSION >= (3, 0) and torch.cuda.is_available() else 512


@triton.jit
def _add_kernel(x_ptr, y_ptr, out_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    tl.store(out_ptr + offsets, tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask), mask=mask)


def kernel(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    n = out.numel()
    _add_kernel[(triton.cdiv(n, BLOCK),)](x, y, out, n, BLOCK_SIZE=BLOCK)
    return out
