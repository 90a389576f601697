# expect: passed
# why: both convolutions stay in torch (anchor ops); each training-mode batch norm runs in Triton (stats kernel, then a fused apply with ReLU, or with the residual add and ReLU).
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _channel_stats_kernel(x_ptr, mean_ptr, rstd_ptr, N, C, HW, eps, BLOCK: tl.constexpr):
    c = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    count = N * HW
    acc = tl.zeros((BLOCK,), dtype=tl.float32)
    for n in range(N):
        base = x_ptr + (n * C + c) * HW
        for s in range(0, HW, BLOCK):
            idx = s + offs
            acc += tl.load(base + idx, mask=idx < HW, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / count
    acc2 = tl.zeros((BLOCK,), dtype=tl.float32)
    for n in range(N):
        base = x_ptr + (n * C + c) * HW
        for s in range(0, HW, BLOCK):
            idx = s + offs
            m = idx < HW
            d = tl.where(m, tl.load(base + idx, mask=m, other=0.0).to(tl.float32) - mean, 0.0)
            acc2 += d * d
    var = tl.sum(acc2, axis=0) / count
    tl.store(mean_ptr + c, mean)
    tl.store(rstd_ptr + c, 1.0 / tl.sqrt(var + eps))


@triton.jit
def _bn_apply_kernel(x_ptr, res_ptr, y_ptr, mean_ptr, rstd_ptr, w_ptr, b_ptr, total, C, HW, HAS_RES: tl.constexpr, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    c = (offs // HW) % C
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.load(mean_ptr + c, mask=mask, other=0.0)
    rstd = tl.load(rstd_ptr + c, mask=mask, other=0.0)
    w = tl.load(w_ptr + c, mask=mask, other=0.0)
    b = tl.load(b_ptr + c, mask=mask, other=0.0)
    y = (x - mean) * rstd * w + b
    if HAS_RES:
        y = y + tl.load(res_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, tl.maximum(y, 0.0), mask=mask)


def _bn_relu(x: torch.Tensor, bn: nn.BatchNorm2d, residual: torch.Tensor | None = None) -> torch.Tensor:
    x = x.contiguous()
    N, C, H, W = x.shape
    HW = H * W
    mean = torch.empty(C, dtype=torch.float32, device=x.device)
    rstd = torch.empty(C, dtype=torch.float32, device=x.device)
    _channel_stats_kernel[(C,)](x, mean, rstd, N, C, HW, bn.eps, BLOCK=256)
    y = torch.empty_like(x)
    total = x.numel()
    block = 1024
    res = residual.contiguous() if residual is not None else x
    _bn_apply_kernel[(triton.cdiv(total, block),)](
        x, res, y, mean, rstd, bn.weight.contiguous(), bn.bias.contiguous(), total, C, HW, HAS_RES=residual is not None, BLOCK=block
    )
    return y


class ModelNew(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(channels, channels, kernel_size=3, stride=1, padding=1, bias=False)
        self.bn2 = nn.BatchNorm2d(channels)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = _bn_relu(self.conv1(x), self.bn1)
        return _bn_relu(self.conv2(out), self.bn2, residual=x)
