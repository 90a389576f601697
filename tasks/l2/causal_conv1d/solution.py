import torch
import triton
import triton.language as tl


@triton.jit
def _causal_conv1d(
    x_ptr, w_ptr, b_ptr, out_ptr, C, L,
    sxb, sxc, sxl, swc, sww, sob, soc, sol,
    W: tl.constexpr, SILU: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_L: tl.constexpr,
):
    # One program: a [BLOCK_C, BLOCK_L] tile of one sequence's channels x positions.
    b = tl.program_id(0)
    chans = tl.program_id(1) * BLOCK_C + tl.arange(0, BLOCK_C)
    pos = tl.program_id(2) * BLOCK_L + tl.arange(0, BLOCK_L)
    c_mask = chans < C
    acc = tl.load(b_ptr + chans, mask=c_mask, other=0.0).to(tl.float32)[:, None] + tl.zeros((BLOCK_C, BLOCK_L), dtype=tl.float32)
    for j in tl.static_range(W):
        # Tap j reads position t - (W - 1) + j; positions before 0 are the zero padding.
        src = pos - (W - 1) + j
        x_mask = c_mask[:, None] & (src[None, :] >= 0) & (src[None, :] < L)
        x = tl.load(x_ptr + b * sxb + chans[:, None] * sxc + src[None, :] * sxl, mask=x_mask, other=0.0).to(tl.float32)
        w = tl.load(w_ptr + chans * swc + j * sww, mask=c_mask, other=0.0).to(tl.float32)
        acc += w[:, None] * x
    if SILU:
        acc = acc * tl.sigmoid(acc)
    out_mask = c_mask[:, None] & (pos[None, :] < L)
    tl.store(out_ptr + b * sob + chans[:, None] * soc + pos[None, :] * sol, acc.to(out_ptr.dtype.element_ty), mask=out_mask)


def kernel(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    B, C, L = x.shape
    W = weight.shape[1]
    out = torch.empty_like(x)
    BLOCK_C, BLOCK_L = 32, 256
    grid = (B, triton.cdiv(C, BLOCK_C), triton.cdiv(L, BLOCK_L))
    _causal_conv1d[grid](
        x, weight, bias, out, C, L,
        *x.stride(), *weight.stride(), *out.stride(),
        W=W, SILU=True, BLOCK_C=BLOCK_C, BLOCK_L=BLOCK_L,
    )
    return out
