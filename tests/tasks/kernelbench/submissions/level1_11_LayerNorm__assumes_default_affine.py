# expect: wrong_answer
# why: layer norm that assumes the default affine parameters (weight ones, bias zeros) and never loads them: right for every
# freshly constructed Model, wrong once the weights are anything else (the grade's re-initialised trial).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _layer_norm_kernel(x_ptr, w_ptr, b_ptr, y_ptr, D, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    x_row = x_ptr + row * D
    y_row = y_ptr + row * D
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(0, D, BLOCK):
        idx = s + offs
        acc += tl.load(x_row + idx, mask=idx < D, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / D
    acc2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for s in range(0, D, BLOCK):
        idx = s + offs
        m = idx < D
        v = tl.load(x_row + idx, mask=m, other=0.0).to(tl.float32)
        d = tl.where(m, v - mean, 0.0)
        acc2 += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc2, axis=0) / D + eps)
    for s in range(0, D, BLOCK):
        idx = s + offs
        m = idx < D
        v = tl.load(x_row + idx, mask=m, other=0.0).to(tl.float32)
        tl.store(y_row + idx, (v - mean) * rstd, mask=m)


class ModelNew(nn.Module):
    def __init__(self, normalized_shape: tuple):
        super().__init__()
        self.ln = nn.LayerNorm(normalized_shape=normalized_shape)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        D = 1
        for s in self.ln.normalized_shape:
            D *= s
        rows = x.numel() // D
        y = torch.empty_like(x)
        _layer_norm_kernel[(rows,)](x, self.ln.weight.contiguous(), self.ln.bias.contiguous(), y, D, self.ln.eps, BLOCK=256)
        return y
