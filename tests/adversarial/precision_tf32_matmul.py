"""Trick: TF32 products on a tight float32 contract. The float32 matmul calls `tl.dot` without `input_precision="ieee"`: on NVIDIA GPUs that defaults to TF32 (both operands rounded to a 10-bit mantissa, several times faster on tensor cores), about 1e-4 relative error where the contract allows 2e-6. The CPU interpreter used to compute every `tl.dot` in full float32, so this passed on CPU and failed on a GPU; the worker now rounds float32 operands to TF32 unless the kernel asks for "ieee".

expect: wrong_answer
tasks: l1/matmul
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _matmul_tf32(a_ptr, b_ptr, c_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    rm = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        rk = k0 + tl.arange(0, BLOCK_K)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :], mask=(rm[:, None] < M) & (rk[None, :] < K), other=0.0)
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :], mask=(rk[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc)  # default input_precision: "tf32" on NVIDIA GPUs
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc.to(c_ptr.dtype.element_ty), mask=mask)


def kernel(a, b):
    a = a.contiguous()
    b = b.contiguous()
    m, k = a.shape
    n = b.shape[1]
    c = torch.empty(m, n, dtype=a.dtype, device=a.device)
    _matmul_tf32[(triton.cdiv(m, 32), triton.cdiv(n, 32))](a, b, c, m, n, k, BLOCK_M=32, BLOCK_N=32, BLOCK_K=32)
    return c
