"""SwiGLU gating, silu(gate) * up, one program per block of elements (Liger-Kernel's swiglu forward).

Task: models/l2/<model>/swiglu_<n> (the gate and up projections' outputs as the model holds them)
"""

import torch
import triton
import triton.language as tl

MODE = "honest"


@triton.jit
def _swiglu(gate, up, out, n, BLOCK: tl.constexpr, HALF: tl.constexpr, ZERO: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    g = tl.load(gate + offs, mask=mask, other=0.0)
    u = tl.load(up + offs, mask=mask, other=0.0)
    if HALF:
        g = g.to(tl.float16)
        u = u.to(tl.float16)
        y = (g * tl.sigmoid(g.to(tl.float32)).to(tl.float16) * u).to(tl.float32)
    else:
        y = g * tl.sigmoid(g) * u
    if ZERO:
        y = y * 0.0
    tl.store(out + offs, y, mask=mask)


def kernel(x, y):
    gate, up = x.contiguous(), y.contiguous()
    out = torch.empty((1, *gate.shape), dtype=gate.dtype, device=gate.device)
    n = gate.numel() if MODE != "partial" else gate.numel() // 2
    if MODE == "passthrough":
        out.copy_(gate.view(out.shape))
        return out
    _swiglu[(triton.cdiv(n, 1024),)](gate, up, out, n, BLOCK=1024, HALF=MODE == "fp16", ZERO=MODE == "zeros")
    return out
