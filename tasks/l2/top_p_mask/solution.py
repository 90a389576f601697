import torch
import triton
import triton.language as tl


@triton.jit
def _order_key(x):
    # float32 -> int32 with the same order (negative floats have their magnitude bits flipped).
    bits = x.to(tl.int32, bitcast=True)
    return tl.where(bits < 0, bits ^ 0x7FFFFFFF, bits)


@triton.jit
def _top_p_mask(logits_ptr, p_ptr, out_ptr, V, stride_l, stride_o, BLOCK: tl.constexpr, ONE_BLOCK: tl.constexpr, PAIRWISE: tl.constexpr):
    # One program per row. The kept set is {i : key(x_i) >= k*}, where k* is the smallest
    # key whose strictly-greater tokens hold less than top_p of the mass; k* is found by
    # bisection over the 32-bit keys, each step one masked reduction over the row.
    # Invariant of the bisection: k* lies in [lo, hi]; each step halves the range (at most 32).
    row = tl.program_id(0)
    base = logits_ptr + row * stride_l
    offs = tl.arange(0, BLOCK)
    if PAIRWISE:
        # A short row: each token's mass above it directly, from a [BLOCK, BLOCK] comparison.
        mask = offs < V
        x = tl.load(base + offs, mask=mask, other=float("-inf"))
        key = _order_key(x)
        e = tl.exp(x - tl.max(x, axis=0))  # padded lanes: exp(-inf) = 0
        target = tl.load(p_ptr + row) * tl.sum(e, axis=0)
        above = tl.sum(tl.where(key[None, :] > key[:, None], e[None, :], 0.0), axis=1)
        tl.store(out_ptr + row * stride_o + offs, above < target, mask=mask)
    elif ONE_BLOCK:
        # The row fits one block: load it once and bisect on registers.
        mask = offs < V
        x = tl.load(base + offs, mask=mask, other=float("-inf"))
        key = _order_key(x)
        e = tl.exp(x - tl.max(x, axis=0))  # padded lanes: exp(-inf) = 0
        target = tl.load(p_ptr + row) * tl.sum(e, axis=0)
        lo = tl.min(tl.where(mask, key, 2147483647), axis=0).to(tl.int64)
        hi = tl.max(tl.where(mask, key, -2147483647 - 1), axis=0).to(tl.int64)
        while lo < hi:
            mid = lo + (hi - lo) // 2
            above = tl.sum(tl.where(key > mid, e, 0.0), axis=0)
            if above < target:
                hi = mid
            else:
                lo = mid + 1
        tl.store(out_ptr + row * stride_o + offs, key >= lo, mask=mask)
    else:
        # Long rows: every pass streams the row block by block.
        m = float("-inf")
        kmin = 2147483647
        kmax = -2147483647 - 1
        for start in range(0, V, BLOCK):
            cols = start + offs
            mask = cols < V
            x = tl.load(base + cols, mask=mask, other=float("-inf"))
            key = _order_key(x)
            m = tl.maximum(m, tl.max(x, axis=0))
            kmin = tl.minimum(kmin, tl.min(tl.where(mask, key, 2147483647), axis=0))
            kmax = tl.maximum(kmax, tl.max(tl.where(mask, key, -2147483647 - 1), axis=0))
        z = 0.0
        for start in range(0, V, BLOCK):
            cols = start + offs
            mask = cols < V
            x = tl.load(base + cols, mask=mask, other=float("-inf"))
            z += tl.sum(tl.exp(x - m), axis=0)
        target = tl.load(p_ptr + row) * z
        lo = kmin.to(tl.int64)
        hi = kmax.to(tl.int64)
        while lo < hi:
            mid = lo + (hi - lo) // 2
            above = 0.0
            for start in range(0, V, BLOCK):
                cols = start + offs
                mask = cols < V
                x = tl.load(base + cols, mask=mask, other=float("-inf"))
                above += tl.sum(tl.where(mask & (_order_key(x) > mid), tl.exp(x - m), 0.0), axis=0)
            if above < target:
                hi = mid
            else:
                lo = mid + 1
        for start in range(0, V, BLOCK):
            cols = start + offs
            mask = cols < V
            x = tl.load(base + cols, mask=mask, other=float("-inf"))
            tl.store(out_ptr + row * stride_o + cols, _order_key(x) >= lo, mask=mask)


def kernel(logits: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    B, V = logits.shape
    out = torch.empty((B, V), dtype=torch.bool, device=logits.device)
    block = min(triton.next_power_of_2(V), 4096 if logits.is_cuda else 1024)
    _top_p_mask[(B,)](
        logits, top_p, out, V, logits.stride(0), out.stride(0),
        BLOCK=block, ONE_BLOCK=V <= block, PAIRWISE=block <= 128, num_warps=8 if block >= 2048 else 4,
    )
    return out
