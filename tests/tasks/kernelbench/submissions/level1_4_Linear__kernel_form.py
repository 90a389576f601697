# expect: passed
# why: the gym kernel(x, linear_weight, linear_bias) form of the Linear fixture, one blocked fp32 tl.dot kernel with the bias fused.
import torch
import triton
import triton.language as tl


@triton.jit
def _linear_kernel(
    x_ptr,
    w_ptr,
    b_ptr,
    y_ptr,
    M,
    N,
    K,
    stride_xm,
    stride_xk,
    stride_wn,
    stride_wk,
    stride_ym,
    stride_yn,
    BLOCK_M: tl.constexpr,
    BLOCK_N: tl.constexpr,
    BLOCK_K: tl.constexpr,
):
    # y[m, n] = sum_k x[m, k] * w[n, k] + b[n]
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    rk = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k0 in range(0, K, BLOCK_K):
        ks = k0 + rk
        x = tl.load(x_ptr + rm[:, None] * stride_xm + ks[None, :] * stride_xk, mask=(rm[:, None] < M) & (ks[None, :] < K), other=0.0)
        w = tl.load(w_ptr + ks[:, None] * stride_wk + rn[None, :] * stride_wn, mask=(ks[:, None] < K) & (rn[None, :] < N), other=0.0)
        acc += tl.dot(x, w, input_precision="ieee")
    bias = tl.load(b_ptr + rn, mask=rn < N, other=0.0)
    acc += bias[None, :]
    tl.store(y_ptr + rm[:, None] * stride_ym + rn[None, :] * stride_yn, acc, mask=(rm[:, None] < M) & (rn[None, :] < N))


def _linear(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    weight = weight.contiguous()
    bias = bias.contiguous()
    M, K = x.shape
    N = weight.shape[0]
    y = torch.empty((M, N), dtype=torch.float32, device=x.device)
    bm, bn, bk = 32, 32, 32
    grid = (triton.cdiv(M, bm), triton.cdiv(N, bn))
    _linear_kernel[grid](
        x, weight, bias, y, M, N, K, x.stride(0), x.stride(1), weight.stride(0), weight.stride(1), y.stride(0), y.stride(1), BLOCK_M=bm, BLOCK_N=bn, BLOCK_K=bk
    )
    return y


def kernel(x: torch.Tensor, linear_weight: torch.Tensor, linear_bias: torch.Tensor) -> torch.Tensor:
    return _linear(x, linear_weight, linear_bias)
