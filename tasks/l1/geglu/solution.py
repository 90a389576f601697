import torch
import triton
import triton.language as tl


@triton.jit
def _geglu(gate_ptr, up_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    g = tl.load(gate_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(up_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    # Exact GELU: g * Phi(g) = g * 0.5 * (1 + erf(g / sqrt(2))).
    y = g * 0.5 * (1.0 + tl.erf(g * 0.7071067811865476)) * u
    tl.store(out_ptr + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(gate: torch.Tensor, up: torch.Tensor) -> torch.Tensor:
    gate = gate.contiguous()
    up = up.contiguous()
    out = torch.empty_like(gate)
    n = gate.numel()
    _geglu[(triton.cdiv(n, 1024),)](gate, up, out, n, BLOCK=1024)
    return out
