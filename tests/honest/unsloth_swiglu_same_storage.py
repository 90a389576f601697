"""SwiGLU after unsloth's fused gate kernel (e = gate, g = up), with 64-bit indexing for huge tensors.

Style: unsloth
Task: l1/swiglu
Idioms: data_ptr equality, do_not_specialize, torch.cuda.is_available() branch, torch.flatten function form
"""

import contextlib

import torch
import triton
import triton.language as tl

# Above this many elements the offsets need 64 bits.
MAX_INT32 = 2**31 - 1


@triton.jit(do_not_specialize=["n_elements"])
def _fg_kernel(e, g, h, n_elements, BLOCK_SIZE: tl.constexpr, LONG_INDEXING: tl.constexpr, SAME_STORAGE: tl.constexpr):
    block_idx = tl.program_id(0)
    if LONG_INDEXING:
        offsets = block_idx.to(tl.int64) * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE).to(tl.int64)
    else:
        offsets = block_idx * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements

    e_row = tl.load(e + offsets, mask=mask, other=0).to(tl.float32)
    if SAME_STORAGE:
        # gate and up are one tensor: do not read it twice.
        g_row = e_row
    else:
        g_row = tl.load(g + offsets, mask=mask, other=0).to(tl.float32)

    # f = e * sigmoid(e), h = f * g, rounded once.
    f_row = e_row * tl.sigmoid(e_row)
    h_row = f_row * g_row
    tl.store(h + offsets, h_row.to(h.dtype.element_ty), mask=mask)


def swiglu_fg_kernel(e: torch.Tensor, g: torch.Tensor) -> torch.Tensor:
    shape = e.shape
    e = torch.flatten(e.contiguous())
    g = torch.flatten(g.contiguous())
    n_elements = e.numel()
    h = torch.empty_like(e)
    same = e.data_ptr() == g.data_ptr()
    BLOCK_SIZE = 1024
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    device_ctx = torch.cuda.device(e.device) if torch.cuda.is_available() and e.is_cuda else contextlib.nullcontext()
    with device_ctx:
        _fg_kernel[grid](e, g, h, n_elements, BLOCK_SIZE=BLOCK_SIZE, LONG_INDEXING=n_elements > MAX_INT32, SAME_STORAGE=same)
    return h.view(shape)


def kernel(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    return swiglu_fg_kernel(gate, up)
