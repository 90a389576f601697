"""LayerNorm backward as GPT-2 trains it: the row statistics recomputed, dx per row, and the weight
and bias gradients as column sums of per-row partials (Liger-Kernel's two-stage layer norm backward).

Task: models/backward/gpt2/native_layer_norm_backward_<n>
"""

import torch
import triton
import triton.language as tl

MODE = "honest"


@triton.jit
def _rows(grad, x, w, dx, partial_w, partial_b, N, eps, BLOCK: tl.constexpr, HALF: tl.constexpr, ZERO: tl.constexpr, PASS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    xs = tl.load(x + row * N + cols, mask=mask, other=0.0)
    g = tl.load(grad + row * N + cols, mask=mask, other=0.0)
    if HALF:
        xs = xs.to(tl.float16).to(tl.float32)
        g = g.to(tl.float16).to(tl.float32)
    mean = tl.sum(xs, axis=0) / N
    centred = tl.where(mask, xs - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(centred * centred, axis=0) / N + eps)
    xhat = centred * rstd
    wg = g * tl.load(w + cols, mask=mask, other=0.0)
    if HALF:
        xhat = xhat.to(tl.float16).to(tl.float32)
        wg = wg.to(tl.float16).to(tl.float32)
    d = rstd * (wg - tl.sum(wg, axis=0) / N - xhat * (tl.sum(wg * xhat, axis=0) / N))
    if PASS:
        d = g
    if ZERO:
        d = d * 0.0
    tl.store(dx + row * N + cols, d, mask=mask)
    tl.store(partial_w + row * N + cols, g * xhat, mask=mask)
    tl.store(partial_b + row * N + cols, g, mask=mask)


@triton.jit
def _column_sums(partial, out, M, N, BLOCK_N: tl.constexpr, ZERO: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < N
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for row in range(M):
        acc += tl.load(partial + row * N + cols, mask=mask, other=0.0)
    if ZERO:
        acc = acc * 0.0
    tl.store(out + cols, acc, mask=mask)


def kernel(grad, x, ln_1_weight, ln_1_bias):
    n = ln_1_weight.shape[0]
    m = x.numel() // n
    dx = torch.empty_like(x)
    partial_w = torch.empty((m, n), dtype=torch.float32, device=x.device)
    partial_b = torch.empty((m, n), dtype=torch.float32, device=x.device)
    rows = m // 2 if MODE == "partial" else m
    flags = dict(HALF=MODE == "fp16", ZERO=MODE == "zeros")
    _rows[(rows,)](grad, x, ln_1_weight, dx, partial_w, partial_b, n, 1e-5, BLOCK=triton.next_power_of_2(n), PASS=MODE == "passthrough", **flags)
    dw = torch.empty_like(ln_1_weight)
    db = torch.empty_like(ln_1_bias)
    _column_sums[(triton.cdiv(n, 64),)](partial_w, dw, rows, n, BLOCK_N=64, ZERO=MODE == "zeros")
    _column_sums[(triton.cdiv(n, 64),)](partial_b, db, rows, n, BLOCK_N=64, ZERO=MODE == "zeros")
    return dx, dw, db
