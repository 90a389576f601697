"""Deterministic embedding backward in FlagGems' style: each program owns a tile of weight rows and scans
all indices in order, summing the matching gradient rows (no atomics, so every run is bit-identical).

Style: FlagGems
Task: l1/embedding_backward
Idioms: triton.heuristics, torch.flatten function form, functools.reduce over a shape, import operator, getattr(torch, device.type)
"""

import contextlib
import functools
import logging
import operator

import torch
import triton
import triton.language as tl

logger = logging.getLogger(__name__)


@triton.heuristics(
    values={
        "BLOCK_D": lambda args: min(64, triton.next_power_of_2(args["D"])),
        "BLOCK_W": lambda args: 16,
        "BLOCK_N": lambda args: 32,
    }
)
@triton.jit
def embedding_grad_owner_kernel(
    indices_ptr, grad_ptr, grad_weight_ptr, N, D, num_weights, stride_gn, stride_wn,
    BLOCK_W: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):
    w_rows = tl.program_id(0) * BLOCK_W + tl.arange(0, BLOCK_W)
    d_cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    d_mask = d_cols < D
    acc = tl.zeros((BLOCK_W, BLOCK_D), dtype=tl.float32)
    for n0 in range(0, N, BLOCK_N):
        n_offs = n0 + tl.arange(0, BLOCK_N)
        n_mask = n_offs < N
        idx = tl.load(indices_ptr + n_offs, mask=n_mask, other=-1)
        g = tl.load(grad_ptr + n_offs[:, None] * stride_gn + d_cols[None, :], mask=n_mask[:, None] & d_mask[None, :], other=0.0).to(tl.float32)
        # hit[w, n]: index n looks up weight row w. Sum the hit gradient rows, in index order.
        hit = w_rows[:, None] == idx[None, :]
        acc += tl.sum(tl.where(hit[:, :, None], g[None, :, :], 0.0), axis=1)
    out_mask = (w_rows[:, None] < num_weights) & d_mask[None, :]
    tl.store(grad_weight_ptr + w_rows[:, None] * stride_wn + d_cols[None, :], acc.to(grad_weight_ptr.dtype.element_ty), mask=out_mask)


def embedding_backward(grad_outputs: torch.Tensor, indices: torch.Tensor, num_weights: int) -> torch.Tensor:
    logger.debug("GEMS EMBEDDING BACKWARD")
    D = grad_outputs.shape[-1]
    N = functools.reduce(operator.mul, grad_outputs.shape[:-1], 1)
    indices = torch.flatten(indices.contiguous())
    grad_outputs = grad_outputs.contiguous().view(N, D)
    grad_weight = torch.empty((num_weights, D), dtype=grad_outputs.dtype, device=grad_outputs.device)
    grid = lambda meta: (triton.cdiv(num_weights, meta["BLOCK_W"]), triton.cdiv(D, meta["BLOCK_D"]))
    torch_device_fn = getattr(torch, grad_outputs.device.type)
    with torch_device_fn.device(grad_outputs.device) if grad_outputs.is_cuda else contextlib.nullcontext():
        embedding_grad_owner_kernel[grid](indices, grad_outputs, grad_weight, N, D, num_weights, grad_outputs.stride(0), grad_weight.stride(0))
    return grad_weight


def kernel(indices: torch.Tensor, grad_output: torch.Tensor, num_weights: int) -> torch.Tensor:
    return embedding_backward(grad_output, indices, num_weights)
