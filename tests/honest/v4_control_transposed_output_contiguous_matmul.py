"""Matmul that writes C^T (an [N, M] buffer, a layout some epilogues prefer) and returns `.t().contiguous()` of its own output to give the reference's row-major layout.

Style: KernelBench
Task: l1/matmul
Idioms: torch.cuda.is_available() branch
"""

import torch
import triton
import triton.language as tl


@triton.jit
def matmul_t_kernel(a_ptr, b_ptr, ct_ptr, M, N, K, sam, sak, sbk, sbn, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        a = tl.load(a_ptr + rm[:, None] * sam + (k + rk)[None, :] * sak, mask=(rm[:, None] < M) & ((k + rk)[None, :] < K), other=0.0)
        b = tl.load(b_ptr + (k + rk)[:, None] * sbk + rn[None, :] * sbn, mask=((k + rk)[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.sum(a[:, :, None].to(tl.float32) * b[None, :, :].to(tl.float32), axis=1)
    # C^T[n, m] = C[m, n]
    tl.store(ct_ptr + rn[None, :] * M + rm[:, None], acc.to(ct_ptr.dtype.element_ty), mask=(rm[:, None] < M) & (rn[None, :] < N))


def kernel(a, b):
    M, K = a.shape
    N = b.shape[1]
    ct = torch.empty((N, M), dtype=a.dtype, device=a.device)
    BM, BN, BK = (64, 64, 32) if torch.cuda.is_available() else (16, 16, 16)
    matmul_t_kernel[(triton.cdiv(M, BM), triton.cdiv(N, BN))](a, b, ct, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), BM=BM, BN=BN, BK=BK)
    return ct.t().contiguous()
