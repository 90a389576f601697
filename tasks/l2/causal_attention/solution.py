import torch
import triton
import triton.language as tl


@triton.jit
def _causal_attention(
    q_ptr, k_ptr, v_ptr, o_ptr, S, H, scale,
    sqb, sqh, sqs, sqd, skb, skh, sks, skd, svb, svh, svs, svd, sob, soh, sos, sod,
    BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_D: tl.constexpr,
):
    # One program: BLOCK_M queries of one (batch, head), streaming over key blocks
    # with an online softmax (running max m_i, running sum l_i, rescaled accumulator).
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
    # Causal: keys past this block's last query are never needed.
    hi = tl.minimum((pid_m + 1) * BLOCK_M, S)
    for start in range(0, hi, BLOCK_N):
        offs_n = start + tl.arange(0, BLOCK_N)
        kv_mask = offs_n[:, None] < S
        k = tl.load(k_ptr + b * skb + h * skh + offs_n[:, None] * sks + offs_d[None, :] * skd, mask=kv_mask, other=0.0)
        v = tl.load(v_ptr + b * svb + h * svh + offs_n[:, None] * svs + offs_d[None, :] * svd, mask=kv_mask, other=0.0)
        s = tl.dot(q, tl.trans(k), input_precision="ieee") * scale
        # Key j is visible to query i when j <= i (and j is a real key).
        s_mask = (offs_n[None, :] < S) & (offs_n[None, :] <= offs_m[:, None])
        s = tl.where(s_mask, s, float("-inf"))
        # Every query row sees key 0 in the first block, so m_new is finite from then on.
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.dot(p, v.to(tl.float32), input_precision="ieee")
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + b * sob + h * soh + offs_m[:, None] * sos + offs_d[None, :] * sod, out.to(o_ptr.dtype.element_ty), mask=q_mask)


def kernel(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    B, H, S, D = q.shape
    out = torch.empty_like(q)
    BLOCK_M, BLOCK_N = (64, 64) if q.is_cuda else (32, 32)
    grid = (triton.cdiv(S, BLOCK_M), B * H)
    _causal_attention[grid](
        q, k, v, out, S, H, D**-0.5,
        *q.stride(), *k.stride(), *v.stride(), *out.stride(),
        BLOCK_M=BLOCK_M, BLOCK_N=BLOCK_N, BLOCK_D=D,
    )
    return out
