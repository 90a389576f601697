import torch
import triton
import triton.language as tl


@triton.jit
def _sliding_window_attention(
    q_ptr, k_ptr, v_ptr, o_ptr, S, H, W, scale,
    sqb, sqh, sqs, sqd, skb, skh, sks, skd, svb, svh, svs, svd, sob, soh, sos, sod,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):
    # One program: BLOCK_M queries of one (batch, head), streaming over the key blocks
    # that meet their windows with an online softmax.
    pid_m = tl.program_id(0)
    bh = tl.program_id(1)
    b = bh // H
    h = bh % H
    offs_m = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_d = tl.arange(0, BLOCK_D)
    q_mask = offs_m[:, None] < S
    q = tl.load(q_ptr + b * sqb + h * sqh + offs_m[:, None] * sqs + offs_d[None, :] * sqd, mask=q_mask, other=0.0)
    m_i = tl.full((BLOCK_M,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_M,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_M, BLOCK_D), dtype=tl.float32)
    # Keys from the first query's window start (i - W + 1) to the last query of the block.
    lo = tl.maximum(pid_m * BLOCK_M - W + 1, 0)
    lo = (lo // BLOCK_N) * BLOCK_N
    hi = tl.minimum((pid_m + 1) * BLOCK_M, S)
    for start in range(lo, hi, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        kv_mask = offs_n[:, None] < S
        k = tl.load(k_ptr + b * skb + h * skh + offs_n[:, None] * sks + offs_d[None, :] * skd, mask=kv_mask, other=0.0)
        v = tl.load(v_ptr + b * svb + h * svh + offs_n[:, None] * svs + offs_d[None, :] * svd, mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        # Key j is visible to query i when i - W < j <= i (and j is a real key).
        s_mask = (offs_n[None, :] < S) & (offs_n[None, :] <= offs_m[:, None]) & (offs_n[None, :] > offs_m[:, None] - W)
        s = tl.where(s_mask, s, float("-inf"))
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        # A row whose window has not started yet sees only -inf: subtract 0 there, not
        # -inf (exp(-inf - -inf) would be NaN); its p and alpha then stay 0.
        m_safe = tl.where(m_new == float("-inf"), 0.0, m_new)
        alpha = tl.exp(m_i - m_safe)
        p = tl.exp(s - m_safe[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p, v.to(tl.float32), input_precision="ieee")
        m_i = m_new
    # Padding rows past S saw no key at all (l = 0); they are never stored.
    out = acc / tl.where(l_i == 0.0, 1.0, l_i)[:, None]
    tl.store(o_ptr + b * sob + h * soh + offs_m[:, None] * sos + offs_d[None, :] * sod, out.to(o_ptr.dtype.element_ty), mask=q_mask)


def kernel(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int) -> torch.Tensor:
    B, H, S, D = q.shape
    out = torch.empty_like(q)
    BLOCK_M, BLOCK_N = (64, 64) if q.is_cuda else (32, 32)
    grid = (triton.cdiv(S, BLOCK_M), B * H)
    _sliding_window_attention[grid](
        q, k, v, out, S, H, window, D**-0.5,
        *q.stride(), *k.stride(), *v.stride(), *out.stride(),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=D,
    )
    return out
