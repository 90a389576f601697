# expect: passed
# why: a Triton scan down dim 1 keeping the running max and the first index that reached it (strict >, NaN wins), like torch.max.
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def _max_dim1_kernel(x_ptr, val_ptr, idx_ptr, R, INNER, BLOCK: tl.constexpr):
    outer = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK + tl.arange(0, BLOCK)
    mask = cols < INNER
    base = x_ptr + outer * R * INNER
    best = tl.load(base + cols, mask=mask, other=0.0).to(tl.float32)
    best_idx = tl.zeros((BLOCK,), dtype=tl.int64)
    for r in range(1, R):
        v = tl.load(base + r * INNER + cols, mask=mask, other=0.0).to(tl.float32)
        # Replace only on a strictly larger value (ties keep the first index), or on the first NaN.
        take = (v > best) | ((v != v) & (best == best))
        best = tl.where(take, v, best)
        best_idx = tl.where(take, r, best_idx)
    tl.store(val_ptr + outer * INNER + cols, best, mask=mask)
    tl.store(idx_ptr + outer * INNER + cols, best_idx, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor):
        x = x.contiguous()
        shape = list(x.shape)
        outer = shape[0]
        R = shape[1]
        inner = 1
        for s in shape[2:]:
            inner *= s
        out_shape = shape[:1] + shape[2:]
        values = torch.empty(out_shape, dtype=x.dtype, device=x.device)
        indices = torch.empty(out_shape, dtype=torch.int64, device=x.device)
        block = 128
        _max_dim1_kernel[(outer, triton.cdiv(inner, block))](x, values, indices, R, inner, BLOCK=block)
        return values, indices
