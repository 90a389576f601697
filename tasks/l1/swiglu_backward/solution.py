import torch
import triton
import triton.language as tl


@triton.jit
def _swiglu_backward(dy_ptr, gate_ptr, up_ptr, d_gate_ptr, d_up_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    dy = tl.load(dy_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    g = tl.load(gate_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    u = tl.load(up_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    # sigmoid(g) = 1 / (1 + exp(-g)): exp overflowing to inf gives 0, underflowing gives 1 (no inf / inf).
    s = 1.0 / (1.0 + tl.exp(-g))
    d_up = dy * (g * s)
    d_gate = dy * u * (s * (1.0 + g * (1.0 - s)))
    tl.store(d_gate_ptr + offs, d_gate.to(d_gate_ptr.dtype.element_ty), mask=mask)
    tl.store(d_up_ptr + offs, d_up.to(d_up_ptr.dtype.element_ty), mask=mask)


def kernel(grad_out: torch.Tensor, gate: torch.Tensor, up: torch.Tensor):
    grad_out = grad_out.contiguous()
    gate = gate.contiguous()
    up = up.contiguous()
    d_gate = torch.empty_like(gate)
    d_up = torch.empty_like(up)
    n = gate.numel()
    _swiglu_backward[(triton.cdiv(n, 4096),)](grad_out, gate, up, d_gate, d_up, n, BLOCK=4096)
    return d_gate, d_up
