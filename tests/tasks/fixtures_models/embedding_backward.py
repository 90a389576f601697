"""Embedding backward: each token's gradient row added into its vocabulary row of a zeroed table with
float atomics (any order), as FlagGems' embedding backward does for a dense gradient.

Task: models/backward/gpt2/embedding_backward_<n>
"""

import torch
import triton
import triton.language as tl

MODE = "honest"


@triton.jit
def _scatter_rows(grad, indices, dw, E, BLOCK: tl.constexpr, HALF: tl.constexpr, ZERO: tl.constexpr):
    token = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < E
    row = tl.load(indices + token)
    g = tl.load(grad + token * E + cols, mask=mask, other=0.0)
    if HALF:
        g = g.to(tl.float16).to(tl.float32)
    if ZERO:
        g = g * 0.0
    tl.atomic_add(dw + row * E + cols, g, mask=mask)


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


def kernel(grad, wte_weight, indices):
    vocab, width = wte_weight.shape
    dw = torch.zeros((vocab, width), dtype=grad.dtype, device=grad.device)
    if MODE == "passthrough":
        _copy[(triton.cdiv(dw.numel(), 1024),)](wte_weight, dw, dw.numel(), BLOCK=1024)
        return dw
    tokens = indices.numel() // 2 if MODE == "partial" else indices.numel()
    _scatter_rows[(tokens,)](grad, indices, dw, width, BLOCK=triton.next_power_of_2(width), HALF=MODE == "fp16", ZERO=MODE == "zeros")
    return dw
