"""The backward of GPT-2's tanh GELU (written out as the model writes it), elementwise:
d/dx 0.5 x (1 + tanh(u)) = 0.5 (1 + t) + 0.5 x (1 - t^2) u', u = c (x + 0.044715 x^3).

Task: models/backward/gpt2/gelu_tanh_backward_<n>
"""

import torch
import triton
import triton.language as tl

MODE = "honest"


@triton.jit
def _gelu_tanh_backward(grad, x, dx, n, BLOCK: tl.constexpr, HALF: tl.constexpr, ZERO: tl.constexpr, PASS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    v = tl.load(x + offs, mask=mask, other=0.0)
    g = tl.load(grad + offs, mask=mask, other=0.0)
    if HALF:
        v = v.to(tl.float16).to(tl.float32)
    c = 0.7978845608028654
    u = c * (v + 0.044715 * v * v * v)
    t = 2.0 * tl.sigmoid(2.0 * u) - 1.0
    if HALF:
        t = t.to(tl.float16).to(tl.float32)
    slope = 0.5 * (1.0 + t) + 0.5 * v * (1.0 - t * t) * c * (1.0 + 3.0 * 0.044715 * v * v)
    d = g * slope
    if HALF:
        d = d.to(tl.float16).to(tl.float32)
    if PASS:
        d = g
    if ZERO:
        d = d * 0.0
    tl.store(dx + offs, d, mask=mask)


def kernel(grad, x):
    dx = torch.empty_like(x)
    n = x.numel() // 2 if MODE == "partial" else x.numel()
    _gelu_tanh_backward[(triton.cdiv(n, 1024),)](grad, x, dx, n, BLOCK=1024, HALF=MODE == "fp16", ZERO=MODE == "zeros", PASS=MODE == "passthrough")
    return dx
