# expect: passed
# why: a row softmax in Triton with three blocked passes per row (max, sum of exp(x - max), normalise), so any row length works.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _softmax_rows_kernel(x_ptr, y_ptr, D, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x_row = x_ptr + row * D
    y_row = y_ptr + row * D
    run_max = tl.full((BLOCK,), float("-inf"), dtype=tl.float32)
    for s in range(0, D, BLOCK):
        idx = s + offs
        run_max = tl.maximum(run_max, tl.load(x_row + idx, mask=idx < D, other=float("-inf")).to(tl.float32))
    row_max = tl.max(run_max, axis=0)
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(0, D, BLOCK):
        idx = s + offs
        m = idx < D
        v = tl.load(x_row + idx, mask=m, other=float("-inf")).to(tl.float32)
        acc += tl.where(m, tl.exp(v - row_max), 0.0)
    denom = tl.sum(acc, axis=0)
    for s in range(0, D, BLOCK):
        idx = s + offs
        m = idx < D
        v = tl.load(x_row + idx, mask=m, other=0.0).to(tl.float32)
        tl.store(y_row + idx, tl.exp(v - row_max) / denom, mask=m)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        rows, D = x.shape
        y = torch.empty_like(x)
        _softmax_rows_kernel[(rows,)](x, y, D, BLOCK=256)
        return y
