# expect: passed
# why: training-mode batch norm in Triton: per-channel two-pass mean and biased variance over (N, H, W), then a fused normalise-scale-shift kernel.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _channel_stats_kernel(x_ptr, mean_ptr, rstd_ptr, N, C, HW, eps, BLOCK: tl.constexpr):
    c = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    count = N * HW
    # Pass 1: the mean.
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for n in range(N):
        base = x_ptr + (n * C + c) * HW
        for s in range(0, HW, BLOCK):
            idx = s + offs
            acc += tl.load(base + idx, mask=idx < HW, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / count
    # Pass 2: the biased variance about that mean.
    acc2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for n in range(N):
        base = x_ptr + (n * C + c) * HW
        for s in range(0, HW, BLOCK):
            idx = s + offs
            m = idx < HW
            v = tl.load(base + idx, mask=m, other=0.0).to(tl.float32)
            d = tl.where(m, v - mean, 0.0)
            acc2 += d * d
    var = tl.sum(acc2, axis=0) / count
    tl.store(mean_ptr + c, mean)
    tl.store(rstd_ptr + c, 1.0 / tl.sqrt(var + eps))


@triton.jit
def _bn_apply_kernel(x_ptr, y_ptr, mean_ptr, rstd_ptr, w_ptr, b_ptr, total, C, HW, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    c = (offs // HW) % C
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.load(mean_ptr + c, mask=mask, other=0.0)
    rstd = tl.load(rstd_ptr + c, mask=mask, other=0.0)
    w = tl.load(w_ptr + c, mask=mask, other=0.0)
    b = tl.load(b_ptr + c, mask=mask, other=0.0)
    tl.store(y_ptr + offs, (x - mean) * rstd * w + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, num_features: int):
        super().__init__()
        self.bn = nn.BatchNorm2d(num_features=num_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x.contiguous()
        N, C, H, W = x.shape
        HW = H * W
        mean = torch.empty(C, dtype=torch.float32, device=x.device)
        rstd = torch.empty(C, dtype=torch.float32, device=x.device)
        _channel_stats_kernel[(C,)](x, mean, rstd, N, C, HW, self.bn.eps, BLOCK=256)
        y = torch.empty_like(x)
        total = x.numel()
        block = 1024
        _bn_apply_kernel[(triton.cdiv(total, block),)](x, y, mean, rstd, self.bn.weight.contiguous(), self.bn.bias.contiguous(), total, C, HW, BLOCK=block)
        return y
