import torch
import triton
import triton.language as tl


@triton.jit
def _embedding_bag(
    idx_ptr, weight_ptr, offsets_ptr, out_ptr, N, B, D,
    stride_wv, stride_wd, stride_ob, stride_od,
    MEAN: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):
    # One program per (bag, column block): gather the bag's rows BLOCK_N at a time and
    # accumulate in float32. The last bag ends at N; an empty bag stores zeros.
    bag = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    col_mask = cols < D
    start = tl.load(offsets_ptr + bag)
    end = tl.load(offsets_ptr + bag + 1, mask=bag + 1 < B, other=N)
    acc = tl.zeros((BLOCK_N, BLOCK_D), dtype=tl.float32)
    for n0 in range(start, end, BLOCK_N):
        offs = n0 + tl.arange(0, BLOCK_N)
        idx_mask = offs < end
        idx = tl.load(idx_ptr + offs, mask=idx_mask, other=0)
        rows_mask = idx_mask[:, None] & col_mask[None, :]
        rows = tl.load(weight_ptr + idx[:, None] * stride_wv + cols[None, :] * stride_wd, mask=rows_mask, other=0.0)
        acc += rows.to(tl.float32)
    total = tl.sum(acc, axis=0)
    if MEAN:
        count = (end - start).to(tl.float32)
        total = total / tl.maximum(count, 1.0)
    tl.store(out_ptr + bag * stride_ob + cols * stride_od, total.to(out_ptr.dtype.element_ty), mask=col_mask)


def kernel(indices: torch.Tensor, weight: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    N = indices.shape[0]
    B = offsets.shape[0]
    D = weight.shape[1]
    out = torch.empty((B, D), dtype=weight.dtype, device=weight.device)
    BLOCK_N = 16
    BLOCK_D = min(triton.next_power_of_2(D), 128)
    grid = (B, triton.cdiv(D, BLOCK_D))
    _embedding_bag[grid](
        indices, weight, offsets, out, N, B, D,
        weight.stride(0), weight.stride(1), out.stride(0), out.stride(1),
        MEAN=False, BLOCK_N=BLOCK_N, BLOCK_D=BLOCK_D,
    )
    return out
