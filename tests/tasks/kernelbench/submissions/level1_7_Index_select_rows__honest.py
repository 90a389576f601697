# expect: passed
# why: a Triton row gather: one program per (index, column block) loads the int64 row index and copies that table row, masked on the row tail.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _gather_rows_kernel(table_ptr, idx_ptr, out_ptr, D, BLOCK: tl.constexpr):
    i = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < D
    row = tl.load(idx_ptr + i).to(tl.int64)
    vals = tl.load(table_ptr + row * D + cols, mask=mask, other=0.0)
    tl.store(out_ptr + i.to(tl.int64) * D + cols, vals, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, table: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
        table = table.contiguous()
        idx = idx.contiguous()
        D = table.shape[1]
        out = torch.empty(list(idx.shape) + [D], dtype=table.dtype, device=table.device)
        n = idx.numel()
        block = 128
        _gather_rows_kernel[(n, triton.cdiv(D, block))](table, idx, out, D, BLOCK=block)
        return out
