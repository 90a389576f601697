import torch
import triton
import triton.language as tl


@triton.jit
def _rope_interleaved(q_ptr, cos_ptr, sin_ptr, out_ptr, H, HALF, stride_qt, stride_qh, stride_ct, stride_ot, stride_oh,
                      BLOCK_H: tl.constexpr, BLOCK_HALF: tl.constexpr):
    # One program per token: every head of that token; pair i is elements (2i, 2i + 1).
    t = tl.program_id(0)
    heads = tl.arange(0, BLOCK_H)
    pairs = tl.arange(0, BLOCK_HALF)
    pair_mask = pairs < HALF
    mask = (heads[:, None] < H) & (pairs[None, :] < HALF)
    c = tl.load(cos_ptr + t * stride_ct + pairs, mask=pair_mask, other=0.0).to(tl.float32)[None, :]
    s = tl.load(sin_ptr + t * stride_ct + pairs, mask=pair_mask, other=0.0).to(tl.float32)[None, :]
    even = q_ptr + t * stride_qt + heads[:, None] * stride_qh + 2 * pairs[None, :]
    x1 = tl.load(even, mask=mask, other=0.0).to(tl.float32)
    x2 = tl.load(even + 1, mask=mask, other=0.0).to(tl.float32)
    oeven = out_ptr + t * stride_ot + heads[:, None] * stride_oh + 2 * pairs[None, :]
    tl.store(oeven, (x1 * c - x2 * s).to(out_ptr.dtype.element_ty), mask=mask)
    tl.store(oeven + 1, (x2 * c + x1 * s).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(q: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    q = q.contiguous()
    cos = cos.contiguous()
    sin = sin.contiguous()
    T, H, D = q.shape
    half = D // 2
    out = torch.empty_like(q)
    _rope_interleaved[(T,)](
        q, cos, sin, out, H, half, q.stride(0), q.stride(1), cos.stride(0), out.stride(0), out.stride(1),
        BLOCK_H=triton.next_power_of_2(H), BLOCK_HALF=triton.next_power_of_2(half),
    )
    return out
