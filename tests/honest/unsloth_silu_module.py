"""SiLU as an unsloth-style flat elementwise kernel behind an nn.Module.

Style: unsloth
Task: l1/silu
Idioms: torch.nn Module wrapper whose forward launches the kernel, locals named like builtins (compile), torch.flatten function form, torch.reshape function form, torch.cuda.is_available() branch
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _silu_kernel(e, h, n_elements, BLOCK_SIZE: tl.constexpr):
    block_idx = tl.program_id(0)
    offsets = block_idx * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    e_row = tl.load(e + offsets, mask=mask, other=0).to(tl.float32)
    # f = e * sigmoid(e), written as e / (1 + exp(-e)) so tiny results stay accurate.
    f_row = e_row / (1.0 + tl.exp(-e_row))
    tl.store(h + offsets, f_row.to(h.dtype.element_ty), mask=mask)


class FastSiLU(torch.nn.Module):
    """Drop-in for nn.SiLU: no parameters, the forward is one Triton launch."""

    def forward(self, e: torch.Tensor) -> torch.Tensor:
        shape = e.shape
        e = torch.flatten(e.contiguous())
        n_elements = e.numel()
        h = torch.empty_like(e)
        # Compiled for a GPU: big blocks; Triton's CPU interpreter prefers smaller ones.
        compile = torch.cuda.is_available()
        BLOCK_SIZE = 1024 if compile else 512
        grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
        _silu_kernel[grid](e, h, n_elements, BLOCK_SIZE=BLOCK_SIZE)
        return torch.reshape(h, shape)


kernel = FastSiLU()
