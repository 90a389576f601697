"""Blocked matmul after Triton's matmul tutorial: grouped program ordering, autotuned tiles, fp32 accumulation.

Style: Triton tutorials
Task: l1/matmul
Idioms: itertools.product autotune configs, packaging version gate on triton.__version__, torch.cuda.is_available() branch
"""

import itertools

import torch
import triton
import triton.language as tl
from packaging.version import Version

# tl.dot takes input_precision= from Triton 3.0; 2.x only had allow_tf32=.
HAS_INPUT_PRECISION = Version(triton.__version__) >= Version("3.0.0")


def get_autotune_config():
    if torch.cuda.is_available():
        tiles = [(128, 128, 32), (64, 128, 32)]
        stages_warps = [(3, 8), (4, 4)]
    else:
        # Few, small tiles: the interpreter benchmarks every config.
        tiles = [(32, 32, 32)]
        stages_warps = [(1, 4), (2, 4)]
    return [
        triton.Config({"BLOCK_SIZE_M": m, "BLOCK_SIZE_N": n, "BLOCK_SIZE_K": k, "GROUP_SIZE_M": 4}, num_stages=s, num_warps=w)
        for (m, n, k), (s, w) in itertools.product(tiles, stages_warps)
    ]


@triton.autotune(configs=get_autotune_config(), key=["M", "N", "K"])
@triton.jit
def matmul_kernel(
    a_ptr, b_ptr, c_ptr,
    M, N, K,
    stride_am, stride_ak,
    stride_bk, stride_bn,
    stride_cm, stride_cn,
    BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
    GROUP_SIZE_M: tl.constexpr,
    IEEE: tl.constexpr, HAS_INPUT_PRECISION: tl.constexpr,
):
    # Map program ids to the block of C it should compute, in grouped ordering to promote L2 reuse.
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m

    offs_am = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_bn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)

    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        # Load the next block of A and B, masking the M/N edges and the K tail with zeros.
        a_mask = (offs_am[:, None] < M) & (offs_k[None, :] < K - k * BLOCK_SIZE_K)
        b_mask = (offs_k[:, None] < K - k * BLOCK_SIZE_K) & (offs_bn[None, :] < N)
        a = tl.load(a_ptrs, mask=a_mask, other=0.0)
        b = tl.load(b_ptrs, mask=b_mask, other=0.0)
        if IEEE:
            if HAS_INPUT_PRECISION:
                accumulator = tl.dot(a, b, accumulator, input_precision="ieee")
            else:
                accumulator = tl.dot(a, b, accumulator, allow_tf32=False)
        else:
            accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(c_ptr.dtype.element_ty)

    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    assert a.shape[1] == b.shape[0], "Incompatible dimensions"
    M, K = a.shape
    K, N = b.shape
    c = torch.empty((M, N), device=a.device, dtype=a.dtype)
    grid = lambda META: (triton.cdiv(M, META["BLOCK_SIZE_M"]) * triton.cdiv(N, META["BLOCK_SIZE_N"]),)
    matmul_kernel[grid](
        a, b, c, M, N, K,
        a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
        # Full float32 products for float32 inputs (TF32 would be far too coarse).
        IEEE=a.dtype == torch.float32, HAS_INPUT_PRECISION=HAS_INPUT_PRECISION,
    )
    return c


def kernel(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return matmul(a, b)
