import torch
import triton
import triton.language as tl


@triton.jit
def _group_norm(x_ptr, w_ptr, b_ptr, out_ptr, num_groups, channels, length, eps, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    batch = pid // num_groups
    group = pid % num_groups
    per_group = channels // num_groups
    n = per_group * length
    # A (batch, group) slice is contiguous: per_group channels of length elements each.
    base = batch * channels * length + group * n
    # Pass 1: the mean.
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        acc += tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(acc, axis=0) / n
    # Pass 2: the variance of the centred values (masked lanes contribute 0).
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
        d = tl.where(mask, x - mean, 0.0)
        acc += d * d
    rstd = 1.0 / tl.sqrt(tl.sum(acc, axis=0) / n + eps)
    # Pass 3: normalise and apply the per-channel affine.
    for start in range(0, n, BLOCK):
        offs = start + tl.arange(0, BLOCK)
        mask = offs < n
        x = tl.load(x_ptr + base + offs, mask=mask, other=0.0).to(tl.float32)
        ch = group * per_group + offs // length
        w = tl.load(w_ptr + ch, mask=mask, other=0.0).to(tl.float32)
        b = tl.load(b_ptr + ch, mask=mask, other=0.0).to(tl.float32)
        y = (x - mean) * rstd * w + b
        tl.store(out_ptr + base + offs, y.to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor, num_groups: int) -> torch.Tensor:
    x = x.contiguous()
    b, c, length = x.shape
    out = torch.empty_like(x)
    block = min(triton.next_power_of_2((c // num_groups) * length), 1024)
    _group_norm[(b * num_groups,)](x, weight.contiguous(), bias.contiguous(), out, num_groups, c, length, 1e-5, BLOCK=block, num_warps=4)
    return out
