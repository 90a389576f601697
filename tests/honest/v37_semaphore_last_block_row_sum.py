"""Row sum where the last block of each row reduces: every (row, block) program writes its partial sum
into a workspace, takes a ticket from the row's counter with an atomic add, and the program that draws
the last ticket sums the row's partials and resets the counter to zero for the next call. The workspace
and the counters are made once and kept between calls (split-K and "last block reduces" kernels do this).

Style: Triton tutorials
Task: l1/row_sum
Idioms: self-resetting semaphore kept between calls
"""

import torch
import triton
import triton.language as tl

BLOCK_N = 128
_STATE: dict[tuple[str, int, int], tuple[torch.Tensor, torch.Tensor]] = {}


@triton.jit
def row_sum_last_block_kernel(x_ptr, ws_ptr, count_ptr, out_ptr, N, stride_m, BLOCKS, BLOCK: tl.constexpr, BLOCK_B: tl.constexpr):
    row = tl.program_id(0)
    block = tl.program_id(1)
    cols = block * BLOCK + tl.arange(0, BLOCK)
    values = tl.load(x_ptr + row * stride_m + cols, mask=cols < N, other=0.0).to(tl.float32)
    tl.store(ws_ptr + row * BLOCKS + block, tl.sum(values, axis=0))
    ticket = tl.atomic_add(count_ptr + row, 1, sem="acq_rel")
    if ticket == BLOCKS - 1:
        offs = tl.arange(0, BLOCK_B)
        acc = tl.zeros([BLOCK_B], dtype=tl.float32)
        for start in range(0, BLOCKS, BLOCK_B):
            idx = start + offs
            acc += tl.load(ws_ptr + row * BLOCKS + idx, mask=idx < BLOCKS, other=0.0, volatile=True)
        tl.store(out_ptr + row, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))
        tl.atomic_xchg(count_ptr + row, 0, sem="relaxed")


def kernel(x: torch.Tensor) -> torch.Tensor:
    x = x.contiguous()
    N = x.shape[-1]
    M = x.numel() // max(N, 1)
    blocks = triton.cdiv(N, BLOCK_N)
    key = (str(x.device), M, blocks)
    if key not in _STATE:
        _STATE[key] = (torch.empty((M, blocks), dtype=torch.float32, device=x.device), torch.zeros((M,), dtype=torch.int32, device=x.device))
    ws, counters = _STATE[key]
    out = torch.empty(x.shape[:-1], dtype=x.dtype, device=x.device)
    row_sum_last_block_kernel[(M, blocks)](x, ws, counters, out, N, N, blocks, BLOCK=BLOCK_N, BLOCK_B=triton.next_power_of_2(min(blocks, 64)))
    return out
