import torch
import triton
import triton.language as tl


@triton.jit
def _embedding_backward(
    idx_ptr, grad_ptr, out_ptr, N, D, W,
    stride_gn, stride_gd, stride_ow, stride_od,
    BLOCK_W: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # Each program owns a [BLOCK_W, BLOCK_D] tile of the gradient and scans all
    # indices in a fixed order: no atomics, so the result is deterministic.
    rows = tl.program_id(0) * BLOCK_W + tl.arange(0, BLOCK_W)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    acc = tl.zeros((BLOCK_W, BLOCK_D), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        offs_n = n0 + tl.arange(0, BLOCK_N)
        idx = tl.load(idx_ptr + offs_n, mask=offs_n < N, other=-1)
        g_mask = (offs_n[:, None] < N) & (cols[None, :] < D)
        g = tl.load(grad_ptr + offs_n[:, None] * stride_gn + cols[None, :] * stride_gd, mask=g_mask, other=0.0)
        # One-hot [BLOCK_W, BLOCK_N] selection matrix; the dot sums the matching rows.
        onehot = (rows[:, None] == idx[None, :]).to(tl.float32)
        acc = tl.dot(onehot, g.to(tl.float32), acc, input_precision="ieee")
    out_mask = (rows[:, None] < W) & (cols[None, :] < D)
    tl.store(out_ptr + rows[:, None] * stride_ow + cols[None, :] * stride_od, acc.to(out_ptr.dtype.element_ty), mask=out_mask)


def kernel(indices: torch.Tensor, grad_output: torch.Tensor, num_weights: int) -> torch.Tensor:
    N = indices.shape[0]
    D = grad_output.shape[1]
    out = torch.empty((num_weights, D), dtype=grad_output.dtype, device=grad_output.device)
    BLOCK_W, BLOCK_D, BLOCK_N = 32, 64, 64
    grid = (triton.cdiv(num_weights, BLOCK_W), triton.cdiv(D, BLOCK_D))
    _embedding_backward[grid](
        indices, grad_output, out, N, D, num_weights,
        grad_output.stride(0), grad_output.stride(1), out.stride(0), out.stride(1),
        BLOCK_W=BLOCK_W, BLOCK_D=BLOCK_D, BLOCK_N=BLOCK_N,
    )
    return out
