"""Softmax backward over the last axis, the softmax recomputed per row: dx = y (g - sum(g y)).

Task: models/backward/gpt2/safe_softmax_backward_<n>
"""

import torch
import triton
import triton.language as tl

MODE = "honest"


@triton.jit
def _softmax_backward(grad, x, dx, N, BLOCK: tl.constexpr, HALF: tl.constexpr, ZERO: tl.constexpr, PASS: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < N
    v = tl.load(x + row * N + cols, mask=mask, other=float("-inf"))
    g = tl.load(grad + row * N + cols, mask=mask, other=0.0)
    e = tl.exp(v - tl.max(v, axis=0))
    y = e / tl.sum(e, axis=0)
    if HALF:
        y = y.to(tl.float16).to(tl.float32)
        g = g.to(tl.float16).to(tl.float32)
    d = y * (g - tl.sum(g * y, axis=0))
    if HALF:
        d = d.to(tl.float16).to(tl.float32)
    if PASS:
        d = g
    if ZERO:
        d = d * 0.0
    tl.store(dx + row * N + cols, d, mask=mask)


def kernel(grad, x):
    n = x.shape[-1]
    m = x.numel() // n
    dx = torch.empty_like(x)
    rows = m // 2 if MODE == "partial" else m
    _softmax_backward[(rows,)](grad, x, dx, n, BLOCK=triton.next_power_of_2(n), HALF=MODE == "fp16", ZERO=MODE == "zeros", PASS=MODE == "passthrough")
    return dx
