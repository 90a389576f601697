"""Layer norm as a KernelBench ModelNew: several rows per program, loaded through block pointers.

Style: KernelBench
Task: l1/layer_norm
Idioms: torch.nn Module wrapper whose forward launches the kernel, block pointers (tl.make_block_ptr), locals named like builtins (vars), torch.reshape function form
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def layer_norm_rows_kernel(
    x_ptr, w_ptr, b_ptr, y_ptr, M, N, stride_xm, stride_ym, eps,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
):
    pid = tl.program_id(0)
    x_block = tl.make_block_ptr(
        base=x_ptr, shape=(M, N), strides=(stride_xm, 1), offsets=(pid * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_N), order=(1, 0)
    )
    w_block = tl.make_block_ptr(base=w_ptr, shape=(N,), strides=(1,), offsets=(0,), block_shape=(BLOCK_N,), order=(0,))
    b_block = tl.make_block_ptr(base=b_ptr, shape=(N,), strides=(1,), offsets=(0,), block_shape=(BLOCK_N,), order=(0,))
    x = tl.load(x_block, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
    col_mask = tl.arange(0, BLOCK_N) < N
    means = tl.sum(x, axis=1) / N
    # Padded columns would contribute (0 - mean)^2: zero them.
    centered = tl.where(col_mask[None, :], x - means[:, None], 0.0)
    vars = tl.sum(centered * centered, axis=1) / N
    rstd = 1.0 / tl.sqrt(vars + eps)
    w = tl.load(w_block, boundary_check=(0,), padding_option="zero").to(tl.float32)
    b = tl.load(b_block, boundary_check=(0,), padding_option="zero").to(tl.float32)
    y = centered * rstd[:, None] * w[None, :] + b[None, :]
    y_block = tl.make_block_ptr(
        base=y_ptr, shape=(M, N), strides=(stride_ym, 1), offsets=(pid * BLOCK_M, 0), block_shape=(BLOCK_M, BLOCK_N), order=(1, 0)
    )
    tl.store(y_block, y.to(y_ptr.dtype.element_ty), boundary_check=(0, 1))


class ModelNew(nn.Module):
    def __init__(self, eps: float = 1e-5) -> None:
        super().__init__()
        self.eps = eps

    def forward(self, x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        N = x.shape[-1]
        x2d = torch.reshape(x.contiguous(), (-1, N))
        M = x2d.shape[0]
        y = torch.empty_like(x2d)
        BLOCK_N = triton.next_power_of_2(N)
        BLOCK_M = max(1, min(4, 4096 // BLOCK_N))
        grid = (triton.cdiv(M, BLOCK_M),)
        layer_norm_rows_kernel[grid](
            x2d, weight.contiguous(), bias.contiguous(), y, M, N, x2d.stride(0), y.stride(0), self.eps,
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N,
        )
        return torch.reshape(y, x.shape)


_model = ModelNew(eps=1e-5)


def kernel(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return _model(x, weight, bias)
