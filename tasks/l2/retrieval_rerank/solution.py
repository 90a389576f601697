import torch
import triton
import triton.language as tl


@triton.jit
def _coarse_scores(q_ptr, codes_ptr, scales_ptr, out_ptr, N, D, stride_q, stride_c, stride_o, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr):
    # out[i, j] = scale[j] * sum_d q[i, d] * codes[j, d], in float32.
    i = tl.program_id(0)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    col_mask = cols < N
    acc = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for start in range(0, D, BLOCK_D):
        ds = start + tl.arange(0, BLOCK_D)
        d_mask = ds < D
        qv = tl.load(q_ptr + i * stride_q + ds, mask=d_mask, other=0.0).to(tl.float32)
        c = tl.load(codes_ptr + cols[:, None] * stride_c + ds[None, :], mask=col_mask[:, None] & d_mask[None, :], other=0).to(tl.float32)
        acc += tl.sum(c * qv[None, :], axis=1)
    scale = tl.load(scales_ptr + cols, mask=col_mask, other=0.0)
    tl.store(out_ptr + i * stride_o + cols, acc * scale, mask=col_mask)


@triton.jit
def _order_key(x):
    # float32 -> int32 with the same order (negative floats have their magnitude bits flipped).
    bits = x.to(tl.int32, bitcast=True)
    return tl.where(bits < 0, bits ^ 0x7FFFFFFF, bits)


@triton.jit
def _select_candidates(s_ptr, cand_ptr, N, C, stride_s, stride_c, BLOCK: tl.constexpr):
    # One program per query: the C-th largest order key t by bisection (each step counts
    # the keys >= mid over the row), then every key > t and the lowest-index keys == t
    # fill the candidate list, in ascending key order.
    i = tl.program_id(0)
    base = s_ptr + i * stride_s
    offs = tl.arange(0, BLOCK)
    lo = (-2147483647 - 1) + tl.zeros((), dtype=tl.int64)
    hi = 2147483647 + tl.zeros((), dtype=tl.int64)
    # Invariant: count(key >= lo) >= C and count(key >= hi + 1) < C.
    while lo < hi:
        mid = lo + (hi - lo + 1) // 2
        count = tl.zeros((), dtype=tl.int32)
        for start in range(0, N, BLOCK):
            cols = start + offs
            mask = cols < N
            key = _order_key(tl.load(base + cols, mask=mask, other=0.0)).to(tl.int64)
            count += tl.sum((mask & (key >= mid)).to(tl.int32), axis=0)
        if count >= C:
            lo = mid
        else:
            hi = mid - 1
    # count(key > lo) < C; the rest of the C come from the keys equal to lo, lowest index first.
    greater = tl.zeros((), dtype=tl.int32)
    for start in range(0, N, BLOCK):
        cols = start + offs
        mask = cols < N
        key = _order_key(tl.load(base + cols, mask=mask, other=0.0)).to(tl.int64)
        greater += tl.sum((mask & (key > lo)).to(tl.int32), axis=0)
    need_equal = C - greater
    taken = tl.zeros((), dtype=tl.int32)
    equal_seen = tl.zeros((), dtype=tl.int32)
    for start in range(0, N, BLOCK):
        cols = start + offs
        mask = cols < N
        key = _order_key(tl.load(base + cols, mask=mask, other=0.0)).to(tl.int64)
        equal = (mask & (key == lo)).to(tl.int32)
        equal_rank = equal_seen + tl.cumsum(equal, axis=0) - equal
        keep = (mask & (key > lo)) | ((equal == 1) & (equal_rank < need_equal))
        keep_i = keep.to(tl.int32)
        pos = taken + tl.cumsum(keep_i, axis=0) - keep_i
        tl.store(cand_ptr + i * stride_c + pos, cols.to(tl.int64), mask=keep)
        taken += tl.sum(keep_i, axis=0)
        equal_seen += tl.sum(equal, axis=0)


@triton.jit
def _rerank(q_ptr, keys_ptr, cand_ptr, out_ptr, C, D, stride_q, stride_k, stride_c, stride_o, K: tl.constexpr, BLOCK_C: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_K: tl.constexpr):
    # One program per query: rescore its C candidates with the full keys (float32), then
    # pick the k best, ties by lower key index.
    i = tl.program_id(0)
    slots = tl.arange(0, BLOCK_C)
    slot_mask = slots < C
    cand = tl.load(cand_ptr + i * stride_c + slots, mask=slot_mask, other=0)
    acc = tl.zeros((BLOCK_C,), dtype=tl.float32)
    for start in range(0, D, BLOCK_D):
        ds = start + tl.arange(0, BLOCK_D)
        d_mask = ds < D
        qv = tl.load(q_ptr + i * stride_q + ds, mask=d_mask, other=0.0).to(tl.float32)
        kv = tl.load(keys_ptr + cand[:, None] * stride_k + ds[None, :], mask=slot_mask[:, None] & d_mask[None, :], other=0.0).to(tl.float32)
        acc += tl.sum(kv * qv[None, :], axis=1)
    # Padded slots are never picked.
    remaining = tl.where(slot_mask, acc, -float("inf"))
    big = 9223372036854775807
    kslots = tl.arange(0, BLOCK_K)
    ids = tl.zeros((BLOCK_K,), dtype=tl.int64)
    for r in range(K):
        best = tl.max(remaining, axis=0)
        best_id = tl.min(tl.where(slot_mask & (remaining == best), cand, big), axis=0)
        ids = tl.where(kslots == r, best_id, ids)
        remaining = tl.where(slot_mask & (cand == best_id), -float("inf"), remaining)
    out_mask = kslots < K
    tl.store(out_ptr + i * stride_o + kslots, ids, mask=out_mask)


@triton.jit
def _short_rows(q_ptr, codes_ptr, scales_ptr, keys_ptr, out_ptr, N, D, C, stride_q, stride_c, stride_k, stride_o, K: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_K: tl.constexpr):
    # All N keys fit one block: one program per query scores every key both ways, keeps the
    # keys whose coarse rank (by (-coarse, index)) is below C, and picks the k best kept.
    i = tl.program_id(0)
    cols = tl.arange(0, BLOCK_N)
    mask = cols < N
    coarse = tl.zeros((BLOCK_N,), dtype=tl.float32)
    fine = tl.zeros((BLOCK_N,), dtype=tl.float32)
    for start in range(0, D, BLOCK_D):
        ds = start + tl.arange(0, BLOCK_D)
        d_mask = ds < D
        qv = tl.load(q_ptr + i * stride_q + ds, mask=d_mask, other=0.0).to(tl.float32)
        tile_mask = mask[:, None] & d_mask[None, :]
        c = tl.load(codes_ptr + cols[:, None] * stride_c + ds[None, :], mask=tile_mask, other=0).to(tl.float32)
        kv = tl.load(keys_ptr + cols[:, None] * stride_k + ds[None, :], mask=tile_mask, other=0.0).to(tl.float32)
        coarse += tl.sum(c * qv[None, :], axis=1)
        fine += tl.sum(kv * qv[None, :], axis=1)
    coarse = coarse * tl.load(scales_ptr + cols, mask=mask, other=0.0)
    # rank[j] = number of real keys ordered before j: higher coarse score, or equal and lower index.
    ahead = (coarse[None, :] > coarse[:, None]) | ((coarse[None, :] == coarse[:, None]) & (cols[None, :] < cols[:, None]))
    rank = tl.sum((ahead & mask[None, :]).to(tl.int32), axis=1)
    in_top_c = rank < C
    keep = in_top_c & mask
    remaining = tl.where(keep, fine, -float("inf"))
    kslots = tl.arange(0, BLOCK_K)
    ids = tl.zeros((BLOCK_K,), dtype=tl.int64)
    for r in range(K):
        best = tl.max(remaining, axis=0)
        best_id = tl.min(tl.where(keep & (remaining == best), cols, BLOCK_N), axis=0)
        ids = tl.where(kslots == r, best_id.to(tl.int64), ids)
        remaining = tl.where(cols == best_id, -float("inf"), remaining)
        keep = keep & (cols != best_id)
    out_mask = kslots < K
    tl.store(out_ptr + i * stride_o + kslots, ids, mask=out_mask)


def kernel(q: torch.Tensor, key_codes: torch.Tensor, key_scales: torch.Tensor, keys: torch.Tensor, num_candidates: int, k: int) -> torch.Tensor:
    q = q.contiguous()
    key_codes = key_codes.contiguous()
    key_scales = key_scales.contiguous()
    keys = keys.contiguous()
    nq, d = q.shape
    n = key_codes.shape[0]
    c = num_candidates
    if n <= 256:
        # Short rows: one fused pass (the pairwise rank is a [N, N] comparison).
        out = torch.empty((nq, k), dtype=torch.int64, device=q.device)
        block_n = triton.next_power_of_2(n)
        _short_rows[(nq,)](q, key_codes, key_scales, keys, out, n, d, c, q.stride(0), key_codes.stride(0), keys.stride(0), out.stride(0), K=k, BLOCK_N=block_n, BLOCK_D=min(32, triton.next_power_of_2(d)), BLOCK_K=triton.next_power_of_2(k))
        return out
    coarse = torch.empty((nq, n), dtype=torch.float32, device=q.device)
    block_n = 256
    block_d = min(64, triton.next_power_of_2(d))
    _coarse_scores[(nq, triton.cdiv(n, block_n))](q, key_codes, key_scales, coarse, n, d, q.stride(0), key_codes.stride(0), coarse.stride(0), BLOCK_N=block_n, BLOCK_D=block_d)
    cand = torch.empty((nq, c), dtype=torch.int64, device=q.device)
    block = min(4096, triton.next_power_of_2(n))
    _select_candidates[(nq,)](coarse, cand, n, c, coarse.stride(0), cand.stride(0), BLOCK=block)
    out = torch.empty((nq, k), dtype=torch.int64, device=q.device)
    block_c = triton.next_power_of_2(c)
    _rerank[(nq,)](q, keys, cand, out, c, d, q.stride(0), keys.stride(0), cand.stride(0), out.stride(0), K=k, BLOCK_C=block_c, BLOCK_D=min(32, block_d), BLOCK_K=triton.next_power_of_2(k))
    return out
