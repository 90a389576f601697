"""Rotary position embedding of the query and the key heads (GQA: fewer key heads), read straight out
of the projections' outputs as the model holds them; one program per (position, head), the
rotate-half partner loaded alongside (Liger-Kernel's rope forward, unfused from the transpose).

Task: models/l2/mistral_7b/rotary_<n>
"""

import torch
import triton
import triton.language as tl

MODE = "honest"


@triton.jit
def _rope(src, cos, sin, out, S, H, D, BLOCK_D: tl.constexpr, HALF: tl.constexpr, ZERO: tl.constexpr):
    s = tl.program_id(0)
    h = tl.program_id(1)
    d = tl.arange(0, BLOCK_D)
    mask = d < D
    half = D // 2
    partner = tl.where(d < half, d + half, d - half)
    sign = tl.where(d < half, -1.0, 1.0)
    x = tl.load(src + (s * H + h) * D + d, mask=mask, other=0.0)
    other = tl.load(src + (s * H + h) * D + partner, mask=mask, other=0.0)
    c = tl.load(cos + s * D + d, mask=mask, other=0.0)
    sn = tl.load(sin + s * D + d, mask=mask, other=0.0)
    if HALF:
        x, other, c, sn = x.to(tl.float16), other.to(tl.float16), c.to(tl.float16), sn.to(tl.float16)
    y = x * c + sign.to(x.dtype) * other * sn
    if ZERO:
        y = y * 0.0
    tl.store(out + (h * S + s) * D + d, y.to(tl.float32), mask=mask)


def _apply(projection, cos, sin, seq, dim):
    heads = projection.numel() // (seq * dim)
    out = torch.empty((1, heads, seq, dim), dtype=projection.dtype, device=projection.device)
    rows = seq // 2 if MODE == "partial" else seq
    if MODE == "passthrough":
        return projection.view(1, seq, heads, dim).transpose(1, 2).contiguous()
    _rope[(rows, heads)](projection, cos, sin, out, seq, heads, dim, BLOCK_D=triton.next_power_of_2(dim), HALF=MODE == "fp16", ZERO=MODE == "zeros")
    return out


def kernel(x, y, z, x3):
    _, seq, dim = y.shape
    return _apply(x, y, z, seq, dim), _apply(x3, y, z, seq, dim)
