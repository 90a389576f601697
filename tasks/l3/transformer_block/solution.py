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
def _rms_norm(x_ptr, g_ptr, out_ptr, R, D, eps, BLOCK_R: tl.constexpr, BLOCK_D: tl.constexpr):
    # One program: BLOCK_R rows of x [R, D] (one block covers a row): x * rsqrt(mean(x^2) + eps) * g.
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    cols = tl.arange(0, BLOCK_D)
    mask = (rows[:, None] < R) & (cols[None, :] < D)
    x = tl.load(x_ptr + rows[:, None] * D + cols[None, :], mask=mask, other=0.0)
    g = tl.load(g_ptr + cols, mask=cols < D, other=0.0)
    r = 1.0 / tl.sqrt(tl.sum(x * x, axis=1) / D + eps)
    tl.store(out_ptr + rows[:, None] * D + cols[None, :], x * r[:, None] * g[None, :], mask=mask)


@triton.jit
def _matmul(
    a_ptr, w_ptr, res_ptr, out_ptr, sum_ptr, M, N, K,
    STORE_OUT: tl.constexpr, HAS_RES: tl.constexpr, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # out [M, N] = a [M, K] @ w [K, N] and/or sum = res + a @ w (res [M, N]); all row-major.
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a_mask = (rows[:, None] < M) & (offs_k[None, :] < K - k)
        w_mask = (offs_k[:, None] < K - k) & (cols[None, :] < N)
        a = tl.load(a_ptr + rows[:, None] * K + k + offs_k[None, :], mask=a_mask, other=0.0)
        w = tl.load(w_ptr + (k + offs_k[:, None]) * N + cols[None, :], mask=w_mask, other=0.0)
        acc += tl.dot(a, w, input_precision="ieee")
    out_mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * N + cols[None, :]
    if STORE_OUT:
        tl.store(out_ptr + offs, acc, mask=out_mask)
    if HAS_RES:
        tl.store(sum_ptr + offs, tl.load(res_ptr + offs, mask=out_mask, other=0.0) + acc, mask=out_mask)


@triton.jit
def _qkv(
    a_ptr, wq_ptr, wk_ptr, wv_ptr, q_ptr, k_ptr, v_ptr, M, N, K,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
):
    # q, k, v [M, N] = a [M, K] @ wq, wk, wv [K, N]: one pass over each tile of a.
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    acc_q = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc_k = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    acc_v = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a_mask = (rows[:, None] < M) & (offs_k[None, :] < K - k)
        w_mask = (offs_k[:, None] < K - k) & (cols[None, :] < N)
        a = tl.load(a_ptr + rows[:, None] * K + k + offs_k[None, :], mask=a_mask, other=0.0)
        w_offs = (k + offs_k[:, None]) * N + cols[None, :]
        acc_q += tl.dot(a, tl.load(wq_ptr + w_offs, mask=w_mask, other=0.0), input_precision="ieee")
        acc_k += tl.dot(a, tl.load(wk_ptr + w_offs, mask=w_mask, other=0.0), input_precision="ieee")
        acc_v += tl.dot(a, tl.load(wv_ptr + w_offs, mask=w_mask, other=0.0), input_precision="ieee")
    out_mask = (rows[:, None] < M) & (cols[None, :] < N)
    offs = rows[:, None] * N + cols[None, :]
    tl.store(q_ptr + offs, acc_q, mask=out_mask)
    tl.store(k_ptr + offs, acc_k, mask=out_mask)
    tl.store(v_ptr + offs, acc_v, mask=out_mask)


@triton.jit
def _gate_up(a_ptr, wg_ptr, wu_ptr, out_ptr, M, N, K, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr):
    # out [M, N] = silu(a @ w_gate) * (a @ w_up), a [M, K], w_gate and w_up [K, N].
    rows = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    offs_k = tl.arange(0, BLOCK_K)
    gate = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    up = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a_mask = (rows[:, None] < M) & (offs_k[None, :] < K - k)
        w_mask = (offs_k[:, None] < K - k) & (cols[None, :] < N)
        a = tl.load(a_ptr + rows[:, None] * K + k + offs_k[None, :], mask=a_mask, other=0.0)
        w_offs = (k + offs_k[:, None]) * N + cols[None, :]
        gate += tl.dot(a, tl.load(wg_ptr + w_offs, mask=w_mask, other=0.0), input_precision="ieee")
        up += tl.dot(a, tl.load(wu_ptr + w_offs, mask=w_mask, other=0.0), input_precision="ieee")
    out_mask = (rows[:, None] < M) & (cols[None, :] < N)
    tl.store(out_ptr + rows[:, None] * N + cols[None, :], gate * tl.sigmoid(gate) * up, mask=out_mask)


@triton.jit
def _rope(
    q_ptr, k_ptr, cos_ptr, sin_ptr, qo_ptr, ko_ptr, R, S, H, HALF,
    BLOCK_R: tl.constexpr, BLOCK_H: tl.constexpr, BLOCK_P: tl.constexpr,
):
    # One program: BLOCK_R token rows of q and k [R = B * S, H, 2 * HALF]; row r is position r % S.
    # Half-split: element i turns with element i + HALF by the angle of (position, i).
    rows = tl.program_id(0) * BLOCK_R + tl.arange(0, BLOCK_R)
    heads = tl.arange(0, BLOCK_H)
    pairs = tl.arange(0, BLOCK_P)
    pos = rows % S
    t_mask = (rows[:, None] < R) & (pairs[None, :] < HALF)
    c = tl.load(cos_ptr + pos[:, None] * HALF + pairs[None, :], mask=t_mask, other=0.0)[:, None, :]
    s = tl.load(sin_ptr + pos[:, None] * HALF + pairs[None, :], mask=t_mask, other=0.0)[:, None, :]
    mask = (rows[:, None, None] < R) & (heads[None, :, None] < H) & (pairs[None, None, :] < HALF)
    lo = rows[:, None, None] * (H * 2 * HALF) + heads[None, :, None] * (2 * HALF) + pairs[None, None, :]
    q1 = tl.load(q_ptr + lo, mask=mask, other=0.0)
    q2 = tl.load(q_ptr + lo + HALF, mask=mask, other=0.0)
    tl.store(qo_ptr + lo, q1 * c - q2 * s, mask=mask)
    tl.store(qo_ptr + lo + HALF, q2 * c + q1 * s, mask=mask)
    k1 = tl.load(k_ptr + lo, mask=mask, other=0.0)
    k2 = tl.load(k_ptr + lo + HALF, mask=mask, other=0.0)
    tl.store(ko_ptr + lo, k1 * c - k2 * s, mask=mask)
    tl.store(ko_ptr + lo + HALF, k2 * c + k1 * s, mask=mask)


@triton.jit
def _attention(
    q_ptr, k_ptr, v_ptr, o_ptr, S, H, HD, scale,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):
    # One program: BLOCK_M queries of one (batch, head); q, k, v, o are [B, S, H, HD] (row stride H * HD).
    # Flash attention: stream over the causal key blocks with an online softmax.
    pid_m = tl.program_id(0)
    b = tl.program_id(1) // H
    h = tl.program_id(1) % H
    row_stride = H * HD
    base = b.to(tl.int64) * S * row_stride + h * HD
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    q_mask = (offs_m[:, None] < S) & (offs_d[None, :] < HD)
    q = tl.load(q_ptr + base + offs_m[:, None] * row_stride + offs_d[None, :], mask=q_mask, other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    hi = tl.minimum((pid_m + 1) * BLOCK_M, S)
    for start in range(0, hi, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        kv_mask = (offs_n[:, None] < S) & (offs_d[None, :] < HD)
        k = tl.load(k_ptr + base + offs_n[:, None] * row_stride + offs_d[None, :], mask=kv_mask, other=0.0)
        v = tl.load(v_ptr + base + offs_n[:, None] * row_stride + offs_d[None, :], mask=kv_mask, other=0.0)
        scores = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        # Key j is visible to query i when j <= i (and j is a real key).
        s_mask = (offs_n[None, :] < S) & (offs_n[None, :] <= offs_m[:, None])
        scores = tl.where(s_mask, scores, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(scores, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(scores - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p, v, input_precision="ieee")
        m_i = m_new
    tl.store(o_ptr + base + offs_m[:, None] * row_stride + offs_d[None, :], acc / l_i[:, None], mask=q_mask)


def kernel(x, g1, wq, wk, wv, wo, cos, sin, g2, w_gate, w_up, w_down, n_heads):
    B, S, DM = x.shape
    DF = w_gate.shape[1]
    H = n_heads
    HD = DM // H
    R = B * S
    dev = x.device

    def empty(*shape):
        return torch.empty(shape, dtype=torch.float32, device=dev)

    attn_norm, q, k, v = empty(B, S, DM), empty(B, S, H, HD), empty(B, S, H, HD), empty(B, S, H, HD)
    q_rope, k_rope, attn, h = empty(B, S, H, HD), empty(B, S, H, HD), empty(B, S, DM), empty(B, S, DM)
    mlp_norm, act, mlp, out = empty(B, S, DM), empty(B, S, DF), empty(B, S, DM), empty(B, S, DM)
    big = x.is_cuda
    # On CPU (the interpreter) every program instance costs ~1 ms: use few, large blocks there.
    BLOCK_R = 4 if big else 64
    BM, BN, BK = 64, 64, 32
    norm_grid = (triton.cdiv(R, BLOCK_R),)

    def matmul(a, w, n, kdim, o=None, res=None, total=None):
        # o = a @ w and/or total = res + a @ w.
        _matmul[(triton.cdiv(R, BM), triton.cdiv(n, BN))](
            a, w, res if res is not None else a, o if o is not None else a, total if total is not None else a, R, n, kdim,
            STORE_OUT=o is not None, HAS_RES=res is not None, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK,
        )

    _rms_norm[norm_grid](x, g1, attn_norm, R, DM, 1e-5, BLOCK_R=BLOCK_R, BLOCK_D=triton.next_power_of_2(DM))
    _qkv[(triton.cdiv(R, BM), triton.cdiv(DM, BN))](attn_norm, wq, wk, wv, q, k, v, R, DM, DM, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK)
    BLOCK_RR = 4 if big else 64
    _rope[(triton.cdiv(R, BLOCK_RR),)](
        q, k, cos, sin, q_rope, k_rope, R, S, H, HD // 2,
        BLOCK_R=BLOCK_RR, BLOCK_H=triton.next_power_of_2(H), BLOCK_P=triton.next_power_of_2(HD // 2),
    )
    BLOCK_Q = 64 if big else 32
    _attention[(triton.cdiv(S, BLOCK_Q), B * H)](
        q_rope, k_rope, v, attn, S, H, HD, HD**-0.5,
        BLOCK_M=BLOCK_Q, BLOCK_N=BLOCK_Q, BLOCK_D=max(16, triton.next_power_of_2(HD)),
    )
    matmul(attn, wo, DM, DM, res=x, total=h)
    _rms_norm[norm_grid](h, g2, mlp_norm, R, DM, 1e-5, BLOCK_R=BLOCK_R, BLOCK_D=triton.next_power_of_2(DM))
    _gate_up[(triton.cdiv(R, BM), triton.cdiv(DF, BN))](mlp_norm, w_gate, w_up, act, R, DF, DM, BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK)
    matmul(act, w_down, DM, DF, o=mlp, res=h, total=out)
    stages = (attn_norm, q_rope, k_rope, v, attn, h, mlp_norm, mlp)
    if RETURN_STAGES and sum(t.numel() * t.element_size() for t in stages) <= STAGE_BYTES_LIMIT:
        return (out, *stages)
    return out

