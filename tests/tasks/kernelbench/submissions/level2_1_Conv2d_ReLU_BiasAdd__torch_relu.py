# expect: rejected
# why: the convolution in torch is allowed, but the ReLU is left to torch.relu (a non-anchor compute op); only the bias add runs in Triton.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _bias_kernel(x_ptr, bias_ptr, y_ptr, total, C, HW, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < total
    c = (offs // HW) % C
    x = tl.load(x_ptr + offs, mask=mask, other=0.0)
    b = tl.load(bias_ptr + c, mask=mask, other=0.0)
    tl.store(y_ptr + offs, x + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int, bias_shape: tuple):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.bias = nn.Parameter(torch.randn(bias_shape))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = torch.relu(self.conv(x)).contiguous()
        N, C, H, W = x.shape
        y = torch.empty_like(x)
        total = x.numel()
        block = 1024
        _bias_kernel[(triton.cdiv(total, block),)](x, self.bias.contiguous(), y, total, C, H * W, BLOCK=block)
        return y
