"""Log-softmax in FlagGems' style: [BLOCK_M, N] row tiles through block pointers, autotuned rows per tile.

Style: FlagGems
Task: l1/log_softmax
Idioms: block pointers (tl.make_block_ptr, tl.advance), itertools.product autotune configs, getattr(torch, device.type)
"""

import itertools
import logging

import torch
import triton
import triton.language as tl

logger = logging.getLogger(__name__)

TILES_PER_PROGRAM = 2


def cfggen():
    # BLOCK_M only groups rows; every row is reduced the same way whatever the config.
    return [triton.Config({"BLOCK_M": m}, num_warps=w) for m, w in itertools.product((1, 2), (4, 8))]


@triton.autotune(configs=cfggen(), key=["M", "N"])
@triton.jit
def log_softmax_kernel(output_ptr, input_ptr, M, N, stride_im, stride_om, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, TILES: tl.constexpr):
    pid = tl.program_id(0)
    row0 = pid * BLOCK_M * TILES
    in_block = tl.make_block_ptr(input_ptr, shape=(M, N), strides=(stride_im, 1), offsets=(row0, 0), block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    out_block = tl.make_block_ptr(output_ptr, shape=(M, N), strides=(stride_om, 1), offsets=(row0, 0), block_shape=(BLOCK_M, BLOCK_N), order=(1, 0))
    n_mask = tl.arange(0, BLOCK_N)[None, :] < N
    for _ in range(TILES):
        # Block pointers pad with zeros; the max and the sum need -inf in the padded columns.
        inp = tl.load(in_block, boundary_check=(0, 1), padding_option="zero").to(tl.float32)
        inp = tl.where(n_mask, inp, -float("inf"))
        row_max = tl.max(inp, axis=1)
        shifted = inp - row_max[:, None]
        log_z = tl.log(tl.sum(tl.exp(shifted), axis=1))
        out = shifted - log_z[:, None]
        tl.store(out_block, out.to(output_ptr.dtype.element_ty), boundary_check=(0, 1))
        in_block = tl.advance(in_block, (BLOCK_M, 0))
        out_block = tl.advance(out_block, (BLOCK_M, 0))


def log_softmax(self: torch.Tensor, dim: int = -1) -> torch.Tensor:
    logger.debug("GEMS LOG_SOFTMAX")
    inp = self.contiguous()
    M, N = inp.shape
    out = torch.empty_like(inp)
    torch_device_fn = getattr(torch, inp.device.type)
    grid = lambda meta: (triton.cdiv(M, meta["BLOCK_M"] * TILES_PER_PROGRAM),)
    if torch_device_fn.is_available():
        log_softmax_kernel[grid](out, inp, M, N, inp.stride(0), out.stride(0), BLOCK_N=triton.next_power_of_2(N), TILES=TILES_PER_PROGRAM)
    return out


def kernel(x: torch.Tensor) -> torch.Tensor:
    return log_softmax(x, dim=-1)
