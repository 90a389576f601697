"""Fused linear + tanh-GELU behind an autograd Function; tanh from libdevice when compiled for a GPU
(as Liger-Kernel's GEGLU does), the equivalent sigmoid form under the interpreter.

Style: Liger-Kernel
Task: l1/matmul_bias_gelu
Idioms: libdevice math (tanh, behind a torch.cuda.is_available() constexpr), packaging version gate on triton.__version__, import operator, triton.heuristics, torch.autograd.Function wrapper called via .apply
"""

import operator

import torch
import triton
import triton.language as tl
from packaging.version import Version
from triton.language.extra import libdevice


def compare_version(version: str, op, target: str) -> bool:
    return op(Version(version), Version(target))


USE_LIBDEVICE_TANH = torch.cuda.is_available() and compare_version(triton.__version__, operator.ge, "3.0.0")
# A jit function may read a global only when it is a constexpr.
SQRT_2_OVER_PI = tl.constexpr(0.7978845608028654)


@triton.jit
def _gelu_tanh(x, USE_LIBDEVICE: tl.constexpr):
    z = SQRT_2_OVER_PI * (x + 0.044715 * x * x * x)
    if USE_LIBDEVICE:
        return 0.5 * x * (1.0 + libdevice.tanh(z))
    else:
        # 0.5 * (1 + tanh(z)) == sigmoid(2 z)
        return x / (1.0 + tl.exp(-2.0 * z))


@triton.heuristics(values={"EVEN_K": lambda args: args["K"] % args["BLOCK_K"] == 0})
@triton.jit
def _linear_gelu_forward_kernel(
    a_ptr, b_ptr, bias_ptr, c_ptr, M, N, K,
    stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
    EVEN_K: tl.constexpr, USE_LIBDEVICE: tl.constexpr,
):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    a_ptrs = a_ptr + rm[:, None] * stride_am + rk[None, :] * stride_ak
    b_ptrs = b_ptr + rk[:, None] * stride_bk + rn[None, :] * stride_bn
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        if EVEN_K:
            a = tl.load(a_ptrs, mask=rm[:, None] < M, other=0.0)
            b = tl.load(b_ptrs, mask=rn[None, :] < N, other=0.0)
        else:
            a = tl.load(a_ptrs, mask=(rm[:, None] < M) & (rk[None, :] < K - k), other=0.0)
            b = tl.load(b_ptrs, mask=(rk[:, None] < K - k) & (rn[None, :] < N), other=0.0)
        acc = tl.dot(a, b, acc, input_precision="ieee")
        a_ptrs += BLOCK_K * stride_ak
        b_ptrs += BLOCK_K * stride_bk
    bias = tl.load(bias_ptr + rn, mask=rn < N, other=0.0).to(tl.float32)
    y = _gelu_tanh(acc + bias[None, :], USE_LIBDEVICE)
    c_mask = (rm[:, None] < M) & (rn[None, :] < N)
    tl.store(c_ptr + rm[:, None] * stride_cm + rn[None, :] * stride_cn, y.to(c_ptr.dtype.element_ty), mask=c_mask)


class LinearGELUFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a, b, bias):
        M, K = a.shape
        N = b.shape[1]
        c = torch.empty((M, N), dtype=a.dtype, device=a.device)
        BLOCK_M, BLOCK_N, BLOCK_K = 32, 32, 32
        grid = (triton.cdiv(M, BLOCK_M), triton.cdiv(N, BLOCK_N))
        _linear_gelu_forward_kernel[grid](
            a, b, bias, c, M, N, K,
            a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1),
            BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_K=BLOCK_K, USE_LIBDEVICE=USE_LIBDEVICE_TANH,
        )
        ctx.save_for_backward(a, b, bias)
        return c


def kernel(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    return LinearGELUFunction.apply(a, b, bias)
