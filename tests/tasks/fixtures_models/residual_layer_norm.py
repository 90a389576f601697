"""GPT-2's residual add and the LayerNorm after it in one row kernel: the sum (the next residual) and
its normalised, scaled and shifted copy.

Task: models/l2/gpt2/residual_layer_norm_<n> (the one that returns both)
"""

import torch
import triton
import triton.language as tl

MODE = "honest"


@triton.jit
def _add_layer_norm(x, y, w, b, h_out, out, N, eps, BLOCK: tl.constexpr, HALF: tl.constexpr, ZERO: tl.constexpr, NORM: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    h = tl.load(x + row * N + cols, mask=mask, other=0.0) + tl.load(y + row * N + cols, mask=mask, other=0.0)
    tl.store(h_out + row * N + cols, h, mask=mask)
    if HALF:
        h = h.to(tl.float16)
    mean = tl.sum(h, axis=0) / N
    centred = tl.where(mask, h - mean, 0.0)
    var = tl.sum(centred * centred, axis=0) / N
    rstd = 1.0 / tl.sqrt(var.to(tl.float32) + eps)
    if HALF:
        rstd = rstd.to(tl.float16)
    normed = centred * rstd * tl.load(w + cols, mask=mask, other=0.0) + tl.load(b + cols, mask=mask, other=0.0)
    if not NORM:
        normed = h
    if ZERO:
        normed = normed * 0.0
    tl.store(out + row * N + cols, normed.to(tl.float32), mask=mask)


def kernel(x, y, ln_2_weight, ln_2_bias):
    n = ln_2_weight.shape[0]
    m = x.numel() // n
    h = torch.empty((1, m, n), dtype=x.dtype, device=x.device)
    out = torch.empty((1, m, n), dtype=x.dtype, device=x.device)
    rows = m // 2 if MODE == "partial" else m
    _add_layer_norm[(rows,)](
        x,
        y,
        ln_2_weight,
        ln_2_bias,
        h,
        out,
        n,
        1e-5,
        BLOCK=triton.next_power_of_2(n),
        HALF=MODE == "fp16",
        ZERO=MODE == "zeros",
        NORM=MODE != "passthrough",
    )
    return h, out
