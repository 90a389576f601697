import torch
import triton
import triton.language as tl

# Return the intermediate results after the output (the task's stage form): a failing grade then
# names the first stage that goes wrong. Only while they are small: at benchmark sizes the stages
# are hundreds of MiB per call, which would only fill the sandbox's output limit (every call's
# outputs count against it); the plain form is accepted on any call.
RETURN_STAGES = True
STAGE_BYTES_LIMIT = 64 << 20


@triton.jit
def _router(
    x_ptr, wr_ptr, logits_ptr, weights_ptr, ids_ptr, T, DM, E,
    TOP_K: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_E: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # One program: BLOCK_T tokens. logits = x @ w_router, softmax over the experts, top-k, renormalise.
    rows = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.arange(0, BLOCK_E)
    kcols = tl.arange(0, BLOCK_K)
    offs_d = tl.arange(0, BLOCK_D)
    acc = tl.zeros((BLOCK_T, BLOCK_E), dtype=tl.float32)
    for d in range(0, DM, BLOCK_D):
        x_mask = (rows[:, None] < T) & (offs_d[None, :] < DM - d)
        w_mask = (offs_d[:, None] < DM - d) & (cols[None, :] < E)
        xt = tl.load(x_ptr + rows[:, None] * DM + d + offs_d[None, :], mask=x_mask, other=0.0)
        wt = tl.load(wr_ptr + (d + offs_d[:, None]) * E + cols[None, :], mask=w_mask, other=0.0)
        acc += tl.dot(xt, wt, input_precision="ieee")
    out_mask = (rows[:, None] < T) & (cols[None, :] < E)
    tl.store(logits_ptr + rows[:, None] * E + cols[None, :], acc, mask=out_mask)
    # Softmax over the real experts only: padded columns are -inf (probability 0, never selected).
    z = tl.where(cols[None, :] < E, acc, float("-inf"))
    z = z - tl.max(z, axis=1)[:, None]
    p = tl.exp(z)
    p = p / tl.sum(p, axis=1)[:, None]
    remaining = tl.where(out_mask, p, -1.0)
    picked = tl.zeros((BLOCK_T, BLOCK_K), dtype=tl.float32)
    ids = tl.zeros((BLOCK_T, BLOCK_K), dtype=tl.int64)
    for k in tl.static_range(TOP_K):
        best = tl.max(remaining, axis=1)
        # The lowest column among equal maxima, as torch.topk.
        best_id = tl.min(tl.where(remaining == best[:, None], cols[None, :], BLOCK_E), axis=1)
        picked = tl.where(kcols[None, :] == k, best[:, None], picked)
        ids = tl.where(kcols[None, :] == k, best_id[:, None].to(tl.int64), ids)
        remaining = tl.where(cols[None, :] == best_id[:, None], -1.0, remaining)
    weights = picked / tl.sum(picked, axis=1)[:, None]
    k_mask = (rows[:, None] < T) & (kcols[None, :] < TOP_K)
    tl.store(weights_ptr + rows[:, None] * TOP_K + kcols[None, :], weights, mask=k_mask)
    tl.store(ids_ptr + rows[:, None] * TOP_K + kcols[None, :], ids, mask=k_mask)


@triton.jit
def _group_by_expert(ids_ptr, order_ptr, starts_ptr, N, E, BLOCK_E: tl.constexpr, BLOCK_N: tl.constexpr):
    # One program: a stable counting sort of the N = T * K (token, slot) pairs by expert.
    # order[starts[e]:starts[e + 1]] lists expert e's pairs (flat index t * K + k) in increasing order.
    experts = tl.arange(0, BLOCK_E)
    offs = tl.arange(0, BLOCK_N)
    # Pass 1: pairs per expert.
    counts = tl.zeros((BLOCK_E,), dtype=tl.int32)
    for start in range(0, N, BLOCK_N):
        in_mask = offs < N - start
        ids = tl.load(ids_ptr + start + offs, mask=in_mask, other=-1)
        counts += tl.sum((ids[None, :] == experts[:, None]).to(tl.int32), axis=1)
    starts = tl.cumsum(counts, axis=0) - counts
    e_mask = experts < E
    tl.store(starts_ptr + experts, starts, mask=e_mask)
    tl.store(starts_ptr + E, tl.sum(counts, axis=0))
    # Pass 2: each pair goes to its expert's start + the number of that expert's pairs before it.
    placed = starts
    for start in range(0, N, BLOCK_N):
        in_mask = offs < N - start
        ids = tl.load(ids_ptr + start + offs, mask=in_mask, other=-1)
        hit = (ids[None, :] == experts[:, None]).to(tl.int32)  # [BLOCK_E, BLOCK_N], one 1 per real pair
        pos = placed[:, None] + tl.cumsum(hit, axis=1) - 1
        pair = tl.broadcast_to((start + offs)[None, :].to(tl.int64), (BLOCK_E, BLOCK_N))
        tl.store(order_ptr + pos, pair, mask=hit != 0)
        placed += tl.sum(hit, axis=1)


@triton.jit
def _expert_up(
    x_ptr, wg_ptr, wu_ptr, order_ptr, starts_ptr, act_ptr, DM, DF,
    TOP_K: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_F: tl.constexpr,
):
    # One program: up to BLOCK_M pairs routed to expert e, BLOCK_F columns of silu(x @ w_gate[e]) * (x @ w_up[e]).
    e = tl.program_id(0)
    begin = tl.load(starts_ptr + e)
    end = tl.load(starts_ptr + e + 1)
    first = begin + tl.program_id(1) * BLOCK_M
    if first >= end:
        return
    rows = first + tl.arange(0, BLOCK_M)
    row_mask = rows < end
    pair = tl.load(order_ptr + rows, mask=row_mask, other=0)
    token = pair // TOP_K
    offs_d = tl.arange(0, BLOCK_D)
    cols = tl.program_id(2) * BLOCK_F + tl.arange(0, BLOCK_F)
    wg_base = wg_ptr + e.to(tl.int64) * DM * DF
    wu_base = wu_ptr + e.to(tl.int64) * DM * DF
    gate = tl.zeros((BLOCK_M, BLOCK_F), dtype=tl.float32)
    up = tl.zeros((BLOCK_M, BLOCK_F), dtype=tl.float32)
    for d in range(0, DM, BLOCK_D):
        x_mask = row_mask[:, None] & (offs_d[None, :] < DM - d)
        w_mask = (offs_d[:, None] < DM - d) & (cols[None, :] < DF)
        xt = tl.load(x_ptr + token[:, None] * DM + d + offs_d[None, :], mask=x_mask, other=0.0)
        w_offs = (d + offs_d[:, None]) * DF + cols[None, :]
        gate += tl.dot(xt, tl.load(wg_base + w_offs, mask=w_mask, other=0.0), input_precision="ieee")
        up += tl.dot(xt, tl.load(wu_base + w_offs, mask=w_mask, other=0.0), input_precision="ieee")
    act = gate * tl.sigmoid(gate) * up
    out_mask = row_mask[:, None] & (cols[None, :] < DF)
    tl.store(act_ptr + pair[:, None] * DF + cols[None, :], act, mask=out_mask)


@triton.jit
def _expert_down(
    act_ptr, wd_ptr, order_ptr, starts_ptr, eo_ptr, DM, DF,
    BLOCK_M: tl.constexpr, BLOCK_F: tl.constexpr, BLOCK_N: tl.constexpr,
):
    # One program: up to BLOCK_M pairs routed to expert e, BLOCK_N columns of act @ w_down[e].
    e = tl.program_id(0)
    begin = tl.load(starts_ptr + e)
    end = tl.load(starts_ptr + e + 1)
    first = begin + tl.program_id(1) * BLOCK_M
    if first >= end:
        return
    rows = first + tl.arange(0, BLOCK_M)
    row_mask = rows < end
    pair = tl.load(order_ptr + rows, mask=row_mask, other=0)
    offs_f = tl.arange(0, BLOCK_F)
    cols = tl.program_id(2) * BLOCK_N + tl.arange(0, BLOCK_N)
    wd_base = wd_ptr + e.to(tl.int64) * DF * DM
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for f in range(0, DF, BLOCK_F):
        a_mask = row_mask[:, None] & (offs_f[None, :] < DF - f)
        w_mask = (offs_f[:, None] < DF - f) & (cols[None, :] < DM)
        a = tl.load(act_ptr + pair[:, None] * DF + f + offs_f[None, :], mask=a_mask, other=0.0)
        w = tl.load(wd_base + (f + offs_f[:, None]) * DM + cols[None, :], mask=w_mask, other=0.0)
        acc += tl.dot(a, w, input_precision="ieee")
    out_mask = row_mask[:, None] & (cols[None, :] < DM)
    tl.store(eo_ptr + pair[:, None] * DM + cols[None, :], acc, mask=out_mask)


@triton.jit
def _combine(eo_ptr, weights_ptr, out_ptr, T, DM, TOP_K: tl.constexpr, BLOCK_T: tl.constexpr, BLOCK_N: tl.constexpr):
    # out[t] = sum_k weights[t, k] * expert_out[t, k], k in order.
    rows = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    row_mask = rows < T
    mask = row_mask[:, None] & (cols[None, :] < DM)
    acc = tl.zeros((BLOCK_T, BLOCK_N), dtype=tl.float32)
    for k in tl.static_range(TOP_K):
        w = tl.load(weights_ptr + rows * TOP_K + k, mask=row_mask, other=0.0)
        y = tl.load(eo_ptr + (rows[:, None] * TOP_K + k) * DM + cols[None, :], mask=mask, other=0.0)
        acc += w[:, None] * y
    tl.store(out_ptr + rows[:, None] * DM + cols[None, :], acc, mask=mask)


def kernel(x, w_router, w_gate, w_up, w_down, top_k):
    T, DM = x.shape
    E, _, DF = w_gate.shape
    dev = x.device
    logits = torch.empty((T, E), dtype=torch.float32, device=dev)
    weights = torch.empty((T, top_k), dtype=torch.float32, device=dev)
    ids = torch.empty((T, top_k), dtype=torch.int64, device=dev)
    # The grouping's index buffers start zeroed (the kernels write every entry they read), so even a
    # kernel bug can only misroute pairs, never index out of bounds.
    order = torch.zeros((T * top_k,), dtype=torch.int64, device=dev)
    starts = torch.zeros((E + 1,), dtype=torch.int32, device=dev)
    act = torch.empty((T, top_k, DF), dtype=torch.float32, device=dev)
    expert_out = torch.empty((T, top_k, DM), dtype=torch.float32, device=dev)
    out = torch.empty((T, DM), dtype=torch.float32, device=dev)
    big = x.is_cuda
    # On CPU (the interpreter) every program instance costs ~1 ms: use few, large blocks there.
    BLOCK_T = 32 if big else 64
    _router[(triton.cdiv(T, BLOCK_T),)](
        x, w_router, logits, weights, ids, T, DM, E,
        TOP_K=top_k, BLOCK_T=BLOCK_T, BLOCK_D=64 if big else 32,
        BLOCK_E=max(16, triton.next_power_of_2(E)), BLOCK_K=triton.next_power_of_2(top_k),
    )
    _group_by_expert[(1,)](
        ids, order, starts, T * top_k, E, BLOCK_E=max(16, triton.next_power_of_2(E)), BLOCK_N=256 if big else 128,
    )
    # Each expert gets at most T pairs (a token picks an expert once); programs past its count return at once.
    BLOCK_M = 64
    BLOCK_F = 64
    BLOCK_D = 64 if big else 32
    _expert_up[(E, triton.cdiv(T, BLOCK_M), triton.cdiv(DF, BLOCK_F))](
        x, w_gate, w_up, order, starts, act, DM, DF,
        TOP_K=top_k, BLOCK_M=BLOCK_M, BLOCK_D=BLOCK_D, BLOCK_F=BLOCK_F,
    )
    BLOCK_N = 64
    _expert_down[(E, triton.cdiv(T, BLOCK_M), triton.cdiv(DM, BLOCK_N))](
        act, w_down, order, starts, expert_out, DM, DF,
        BLOCK_M=BLOCK_M, BLOCK_F=BLOCK_F, BLOCK_N=BLOCK_N,
    )
    _combine[(triton.cdiv(T, BLOCK_T), triton.cdiv(DM, BLOCK_N))](
        expert_out, weights, out, T, DM, TOP_K=top_k, BLOCK_T=BLOCK_T, BLOCK_N=BLOCK_N,
    )
    stages = (logits, weights, ids, act, expert_out)
    if RETURN_STAGES and sum(t.numel() * t.element_size() for t in stages) <= STAGE_BYTES_LIMIT:
        return (out, *stages)
    return out
