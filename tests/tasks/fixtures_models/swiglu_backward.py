"""SwiGLU backward (Liger-Kernel's): with s = sigmoid(gate), d gate = g up s (1 + gate (1 - s)) and
d up = g gate s, in one elementwise pass.

Task: models/backward/mistral_7b/swiglu_backward_<n>
"""

import torch
import triton
import triton.language as tl

MODE = "honest"


@triton.jit
def _swiglu_backward(grad, gate, up, d_gate, d_up, n, BLOCK: tl.constexpr, HALF: tl.constexpr, ZERO: tl.constexpr, PASS: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    g = tl.load(grad + offs, mask=mask, other=0.0)
    a = tl.load(gate + offs, mask=mask, other=0.0)
    b = tl.load(up + offs, mask=mask, other=0.0)
    if HALF:
        g, a, b = g.to(tl.float16).to(tl.float32), a.to(tl.float16).to(tl.float32), b.to(tl.float16).to(tl.float32)
    s = tl.sigmoid(a)
    if HALF:
        s = s.to(tl.float16).to(tl.float32)
    da = g * b * s * (1.0 + a * (1.0 - s))
    db = g * a * s
    if HALF:
        da, db = da.to(tl.float16).to(tl.float32), db.to(tl.float16).to(tl.float32)
    if PASS:
        da, db = g, g
    if ZERO:
        da, db = da * 0.0, db * 0.0
    tl.store(d_gate + offs, da, mask=mask)
    tl.store(d_up + offs, db, mask=mask)


def kernel(grad, x, y):
    d_gate = torch.empty_like(x)
    d_up = torch.empty_like(y)
    n = x.numel() // 2 if MODE == "partial" else x.numel()
    _swiglu_backward[(triton.cdiv(n, 1024),)](grad, x, y, d_gate, d_up, n, BLOCK=1024, HALF=MODE == "fp16", ZERO=MODE == "zeros", PASS=MODE == "passthrough")
    return d_gate, d_up
