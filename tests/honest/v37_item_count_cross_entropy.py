"""Cross-entropy that compacts the valid positions first: one kernel gives every valid position a slot
(an atomic ticket) and counts them, the host reads the count with `.item()`, a second launch of exactly
that many programs computes each valid position's loss, and a third sums them and divides by the count.

Style: Liger-Kernel
Task: l1/cross_entropy
Idioms: .item() of a count a kernel computed (sizing a later launch)
"""

import torch
import triton
import triton.language as tl

IGNORE_INDEX = -100
BLOCK_V = 1024


@triton.jit
def compact_valid_kernel(targets_ptr, rows_ptr, count_ptr, IGNORE: tl.constexpr):
    row = tl.program_id(0)
    target = tl.load(targets_ptr + row)
    if target != IGNORE:
        slot = tl.atomic_add(count_ptr, 1)
        tl.store(rows_ptr + slot, row)


@triton.jit
def row_loss_kernel(logits_ptr, targets_ptr, rows_ptr, losses_ptr, V, stride, BLOCK: tl.constexpr):
    slot = tl.program_id(0)
    row = tl.load(rows_ptr + slot).to(tl.int64)
    base = logits_ptr + row * stride
    running_max = float("-inf")
    running_sum = 0.0
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        x = tl.load(base + cols, mask=cols < V, other=float("-inf")).to(tl.float32)
        new_max = tl.maximum(running_max, tl.max(x, axis=0))
        running_sum = running_sum * tl.exp(running_max - new_max) + tl.sum(tl.exp(x - new_max), axis=0)
        running_max = new_max
    target = tl.load(targets_ptr + row)
    picked = tl.load(base + target).to(tl.float32)
    tl.store(losses_ptr + slot, tl.log(running_sum) + running_max - picked)


@triton.jit
def mean_kernel(losses_ptr, out_ptr, n, BLOCK: tl.constexpr):
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        idx = start + tl.arange(0, BLOCK)
        acc += tl.load(losses_ptr + idx, mask=idx < n, other=0.0)
    tl.store(out_ptr, tl.sum(acc, axis=0) / n)


def kernel(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    logits = logits.contiguous()
    T, V = logits.shape
    rows = torch.empty((T,), dtype=torch.int32, device=logits.device)
    count = torch.zeros((1,), dtype=torch.int32, device=logits.device)
    compact_valid_kernel[(T,)](targets, rows, count, IGNORE=IGNORE_INDEX)
    n = int(count.item())
    losses = torch.empty((max(n, 1),), dtype=torch.float32, device=logits.device)
    if n > 0:
        row_loss_kernel[(n,)](logits, targets, rows, losses, V, logits.stride(0), BLOCK=BLOCK_V)
    out = torch.empty((), dtype=torch.float32, device=logits.device)
    mean_kernel[(1,)](losses, out, n, BLOCK=256)
    return out
