"""SiLU in FlagGems' pointwise style: the block size and the unmasked fast path come from heuristics.

Style: FlagGems
Task: l1/silu
Idioms: triton.heuristics, functools.reduce over a shape, import operator, torch.reshape function form, getattr(torch, device.type)
"""

import functools
import logging
import operator

import torch
import triton
import triton.language as tl

logger = logging.getLogger(__name__)


def heur_block_size(args):
    return 1024 if args["n_elements"] >= 1 << 16 else 256


def heur_even(args):
    return args["n_elements"] % args["BLOCK_SIZE"] == 0


@triton.heuristics(values={"BLOCK_SIZE": heur_block_size, "EVEN": heur_even})
@triton.jit
def silu_forward_kernel(X, Y, n_elements, BLOCK_SIZE: tl.constexpr, EVEN: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    if EVEN:
        x = tl.load(X + offsets)
    else:
        x = tl.load(X + offsets, mask=offsets < n_elements, other=0.0)
    x_fp32 = x.to(tl.float32)
    y = x_fp32 / (1.0 + tl.exp(-x_fp32))
    if EVEN:
        tl.store(Y + offsets, y.to(Y.dtype.element_ty))
    else:
        tl.store(Y + offsets, y.to(Y.dtype.element_ty), mask=offsets < n_elements)


def silu(A: torch.Tensor) -> torch.Tensor:
    logger.debug("GEMS SILU FORWARD")
    n_elements = functools.reduce(operator.mul, A.shape, 1)
    flat = torch.reshape(A.contiguous(), (n_elements,))
    out = torch.empty_like(flat)
    # Device-agnostic lookup of the backend module (torch.cuda, torch.xpu, torch.cpu, ...).
    torch_device_fn = getattr(torch, A.device.type)
    assert torch_device_fn.is_available(), f"no {A.device.type} backend"
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    silu_forward_kernel[grid](flat, out, n_elements)
    return torch.reshape(out, A.shape)


def kernel(x: torch.Tensor) -> torch.Tensor:
    return silu(x)
