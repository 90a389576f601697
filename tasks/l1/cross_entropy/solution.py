import torch
import triton
import triton.language as tl


@triton.jit
def _row_losses(logits_ptr, targets_ptr, losses_ptr, valid_ptr, V, stride_t, IGNORE_INDEX: tl.constexpr, BLOCK: tl.constexpr):
    # One program per position: online log-sum-exp over the row (running max m and
    # rescaled sum s of exp(x - m)); loss = (m - x[target]) + log(s), or 0 when ignored.
    # m - x[target] first: it is exact when the target is (near) the max, where the loss
    # is small and rounding m + log(s) at the logits' magnitude would dominate it.
    row = tl.program_id(0)
    base = logits_ptr + row.to(tl.int64) * stride_t
    m = -float("inf")
    s = 0.0
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < V
        x = tl.load(base + cols, mask=mask, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    target = tl.load(targets_ptr + row)
    valid = target != IGNORE_INDEX
    picked = tl.load(base + tl.where(valid, target, 0)).to(tl.float32)
    loss = tl.where(valid, (m - picked) + tl.log(s), 0.0)
    tl.store(losses_ptr + row, loss)
    tl.store(valid_ptr + row, valid.to(tl.float32))


@triton.jit
def _mean(losses_ptr, valid_ptr, out_ptr, T, BLOCK: tl.constexpr):
    # A single program sums the per-row losses and the valid count in a fixed order
    # (deterministic), then divides.
    total = tl.zeros((BLOCK,), dtype=tl.float32)
    count = tl.zeros((BLOCK,), dtype=tl.float32)
    for start in range(0, T, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < T
        total += tl.load(losses_ptr + offs, mask=mask, other=0.0)
        count += tl.load(valid_ptr + offs, mask=mask, other=0.0)
    tl.store(out_ptr, tl.sum(total, axis=0) / tl.sum(count, axis=0))


def kernel(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    logits = logits.contiguous()
    T, V = logits.shape
    losses = torch.empty((T,), dtype=torch.float32, device=logits.device)
    valid = torch.empty((T,), dtype=torch.float32, device=logits.device)
    out = torch.empty((), dtype=torch.float32, device=logits.device)
    BLOCK = min(triton.next_power_of_2(V), 4096)
    _row_losses[(T,)](logits, targets, losses, valid, V, logits.stride(0), IGNORE_INDEX=-100, BLOCK=BLOCK, num_warps=8)
    _mean[(1,)](losses, valid, out, T, BLOCK=1024)
    return out
