"""Fused matmul + bias + tanh-GELU as a KernelBench ModelNew, operands read through block pointers.

Style: KernelBench
Task: l1/matmul_bias_gelu
Idioms: torch.nn Module wrapper whose forward launches the kernel, block pointers (tl.make_block_ptr, tl.advance), torch.promote_types
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def fused_matmul_bias_gelu_kernel(
    a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    a_bp = tl.make_block_ptr(a_ptr, (M, K), (stride_am, stride_ak), (pid_m * BLOCK_M, 0), (BLOCK_M, BLOCK_K), (1, 0))
    b_bp = tl.make_block_ptr(b_ptr, (K, N), (stride_bk, stride_bn), (0, pid_n * BLOCK_N), (BLOCK_K, BLOCK_N), (1, 0))
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for _ in range(0, K, BLOCK_K):
        a = tl.load(a_bp, boundary_check=(0, 1), padding_option="zero")
        b = tl.load(b_bp, boundary_check=(0, 1), padding_option="zero")
        acc += tl.dot(a, b, input_precision="ieee")
        a_bp = tl.advance(a_bp, (0, BLOCK_K))
        b_bp = tl.advance(b_bp, (BLOCK_K, 0))
    cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    bias = tl.load(bias_ptr + cols, mask=cols < N, other=0.0).to(tl.float32)
    x = acc + bias[None, :]
    # gelu_tanh(x) = 0.5 x (1 + tanh(z)) = x * sigmoid(2 z): no cancellation for x << 0.
    z = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    y = x * tl.sigmoid(2.0 * z)
    c_bp = tl.make_block_ptr(c_ptr, (M, N), (stride_cm, stride_cn), (pid_m * BLOCK_M, pid_n * BLOCK_N), (BLOCK_M, BLOCK_N), (1, 0))
    tl.store(c_bp, y.to(c_ptr.dtype.element_ty), boundary_check=(0, 1))


class ModelNew(nn.Module):
    """gelu(a @ b + bias, approximate="tanh") in one Triton kernel."""

    def __init__(self, block_m: int = 32, block_n: int = 32, block_k: int = 32) -> None:
        super().__init__()
        self.blocks = (block_m, block_n, block_k)

    def forward(self, a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
        M, K = a.shape
        K2, N = b.shape
        assert K == K2 and bias.shape == (N,)
        out_dtype = torch.promote_types(torch.promote_types(a.dtype, b.dtype), bias.dtype)
        c = torch.empty((M, N), dtype=out_dtype, device=a.device)
        BLOCK_M, BLOCK_N, BLOCK_K = self.blocks
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
        fused_matmul_bias_gelu_kernel[grid](
            a, b, bias, c, M, N, K,
            a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K,
        )
        return c


model_new = ModelNew()


def kernel(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return model_new(a, b, bias)
