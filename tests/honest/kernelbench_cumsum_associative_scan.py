"""Row prefix sum as a KernelBench ModelNew: a blocked scan (tl.cumsum inside chunks, tl.associative_scan with a
jit combine function over the chunk totals), carried across blocks.

Style: KernelBench
Task: l1/cumsum
Idioms: class used as a namespace of jit functions, torch.nn Module wrapper whose forward launches the kernel
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _add_combine(a, b):
    return a + b


class ScanKernels:
    """Launchable kernels of this file (jit code only reaches module-level helpers such as _add_combine)."""

    @triton.jit
    def inclusive_scan_rows(x_ptr, out_ptr, n_cols, stride_x, stride_out, BLOCK: tl.constexpr, CHUNKS: tl.constexpr, CHUNK: tl.constexpr):
        # A blocked scan: each block of CHUNKS * CHUNK columns is viewed as [CHUNKS, CHUNK]; every chunk is
        # scanned on its own, the chunk totals are scanned with tl.associative_scan, and the exclusive
        # prefix of the totals is added back (the warp-then-block scheme of a GPU scan).
        tl.static_assert(BLOCK == CHUNKS * CHUNK)
        row = tl.program_id(0).to(tl.int64)
        carry = tl.zeros((), dtype=tl.float32)
        for start in range(0, n_cols, BLOCK):
            cols = start + tl.arange(0, BLOCK)
            mask = cols < n_cols
            x = tl.load(x_ptr + row * stride_x + cols, mask=mask, other=0.0).to(tl.float32)
            chunks = tl.reshape(x, (CHUNKS, CHUNK))
            inner = tl.cumsum(chunks, axis=1)
            totals = tl.sum(chunks, axis=1)
            before = tl.associative_scan(totals, 0, _add_combine) - totals
            prefix = tl.reshape(inner + before[:, None], (BLOCK,))
            tl.store(out_ptr + row * stride_out + cols, (prefix + carry).to(out_ptr.dtype.element_ty), mask=mask)
            # The block total (masked lanes are 0) carries into the next block.
            carry += tl.sum(totals, axis=0)


class ModelNew(nn.Module):
    """torch.cumsum(x, dim=-1) for a 2-D tensor."""

    def __init__(self, chunks: int = 16, chunk: int = 64) -> None:
        super().__init__()
        self.chunks = chunks
        self.chunk = chunk

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        n_rows, n_cols = x.shape
        out = torch.empty_like(x)
        ScanKernels.inclusive_scan_rows[(n_rows,)](
            x, out, n_cols, x.stride(0), out.stride(0),
            BLOCK=self.chunks * self.chunk, CHUNKS=self.chunks, CHUNK=self.chunk,
        )
        return out


_model = ModelNew()


def kernel(x: torch.Tensor) -> torch.Tensor:
    return _model(x)
