"""Qwen3's QK-norm and rotary embedding in one pass over each head of the query projection: the RMS of
the head's row, the norm's weight, then the rotate-half with cos and sin (the partner element is
normalised with the same row statistic).

Task: models/l2/qwen3_8b/qk_norm_rotary_<n>
"""

import torch
import triton
import triton.language as tl

MODE = "honest"


@triton.jit
def _qk_norm_rope(src, weight, cos, sin, out, S, H, D, eps, BLOCK_D: tl.constexpr, HALF: tl.constexpr, ZERO: tl.constexpr):
    s = tl.program_id(0)
    h = tl.program_id(1)
    d = tl.arange(0, BLOCK_D)
    mask = d < D
    half = D // 2
    partner = tl.where(d < half, d + half, d - half)
    sign = tl.where(d < half, -1.0, 1.0)
    base = src + (s * H + h) * D
    x = tl.load(base + d, mask=mask, other=0.0)
    other = tl.load(base + partner, mask=mask, other=0.0)
    if HALF:
        x = x.to(tl.float16).to(tl.float32)
        other = other.to(tl.float16).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / D + eps)
    if HALF:
        rstd = rstd.to(tl.float16).to(tl.float32)
    n = tl.load(weight + d, mask=mask, other=0.0) * (x * rstd)
    n_other = tl.load(weight + partner, mask=mask, other=0.0) * (other * rstd)
    y = n * tl.load(cos + s * D + d, mask=mask, other=0.0) + sign * n_other * tl.load(sin + s * D + d, mask=mask, other=0.0)
    if HALF:
        y = y.to(tl.float16).to(tl.float32)
    if ZERO:
        y = y * 0.0
    tl.store(out + (h * S + s) * D + d, y, mask=mask)


def kernel(x, q_norm_weight, z, x3):
    _, seq, dim = z.shape
    heads = x.numel() // (seq * dim)
    if MODE == "passthrough":
        return x.view(1, seq, heads, dim).transpose(1, 2).contiguous()
    out = torch.empty((1, heads, seq, dim), dtype=x.dtype, device=x.device)
    rows = seq // 2 if MODE == "partial" else seq
    _qk_norm_rope[(rows, heads)](
        x,
        q_norm_weight,
        z,
        x3,
        out,
        seq,
        heads,
        dim,
        1e-6,
        BLOCK_D=triton.next_power_of_2(dim),
        HALF=MODE == "fp16",
        ZERO=MODE == "zeros",
    )
    return out
