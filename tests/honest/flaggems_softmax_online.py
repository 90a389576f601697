"""Softmax in FlagGems' style: an online (running max / running sum) pass over row tiles, then a write pass.

Style: FlagGems
Task: l1/softmax
Idioms: triton.heuristics, itertools.product autotune configs, getattr(torch, device.type)
"""

import contextlib
import itertools
import logging

import torch
import triton
import triton.language as tl

logger = logging.getLogger(__name__)


def heur_tile_n(args):
    return min(512, triton.next_power_of_2(args["N"]))


def heur_one_tile_per_cta(args):
    return args["TILE_N"] >= args["N"]


# The configs only change the launch, never the arithmetic.
SOFTMAX_CONFIGS = [triton.Config({}, num_warps=w, num_stages=s) for w, s in itertools.product((4, 8), (1, 2))]


@triton.autotune(configs=SOFTMAX_CONFIGS, key=["M", "N"])
@triton.heuristics(values={"TILE_N": heur_tile_n, "ONE_TILE_PER_CTA": heur_one_tile_per_cta})
@triton.jit
def softmax_kernel_inner(output_ptr, input_ptr, M, N, TILE_N: tl.constexpr, ONE_TILE_PER_CTA: tl.constexpr):
    pid_m = tl.program_id(0).to(tl.int64)
    if ONE_TILE_PER_CTA:
        n_offsets = tl.arange(0, TILE_N)
        offset = pid_m * N + n_offsets
        mask = n_offsets < N
        inp = tl.load(input_ptr + offset, mask=mask, other=-float("inf")).to(tl.float32)
        m = tl.max(inp, 0)
        e = tl.exp(inp - m)
        z = tl.sum(e, 0)
        out = e / z
        tl.store(output_ptr + offset, out.to(output_ptr.dtype.element_ty), mask=mask)
    else:
        m = tl.full([TILE_N], value=float("-inf"), dtype=tl.float32)
        z = tl.full([TILE_N], value=0.0, dtype=tl.float32)
        for start_n in range(0, N, TILE_N):
            n_offsets = start_n + tl.arange(0, TILE_N)
            mask = n_offsets < N
            inp = tl.load(input_ptr + pid_m * N + n_offsets, mask=mask, other=-float("inf")).to(tl.float32)
            new_m = tl.maximum(m, inp)
            # Lanes that have only seen -inf so far keep z = 0 (avoid exp(-inf - -inf) = nan).
            all_neg_inf = new_m == float("-inf")
            z = tl.where(all_neg_inf, z, z * tl.exp(m - new_m) + tl.exp(inp - new_m))
            m = new_m
        m_reduced = tl.max(m, 0)
        z = tl.sum(z * tl.exp(m - m_reduced), 0)
        m = m_reduced
        for start_n in range(0, N, TILE_N):
            n_offsets = start_n + tl.arange(0, TILE_N)
            mask = n_offsets < N
            offset = pid_m * N + n_offsets
            inp = tl.load(input_ptr + offset, mask=mask, other=-float("inf")).to(tl.float32)
            out = tl.exp(inp - m) / z
            tl.store(output_ptr + offset, out.to(output_ptr.dtype.element_ty), mask=mask)


def softmax(self: torch.Tensor, dim: int = -1) -> torch.Tensor:
    logger.debug("GEMS SOFTMAX")
    assert dim in (-1, self.ndim - 1), "this kernel reduces the last dimension"
    inp = self.contiguous()
    N = inp.shape[-1]
    M = inp.numel() // N
    out = torch.empty_like(inp)
    torch_device_fn = getattr(torch, inp.device.type)
    with torch_device_fn.device(inp.device) if inp.is_cuda else contextlib.nullcontext():
        softmax_kernel_inner[(M, 1, 1)](out, inp, M, N)
    return out


def kernel(x: torch.Tensor) -> torch.Tensor:
    return softmax(x, dim=-1)
