import torch
import triton
import triton.language as tl


@triton.jit
def _paged_decode(
    q_ptr, k_ptr, v_ptr, table_ptr, lens_ptr, o_ptr, G, scale,
    sqb, sqh, sqd, skn, sks, skh, skd, svn, svs, svh, svd, stb, stn, sob, soh, sod,
    BLOCK_G: tl.constexpr, BLOCK_SIZE: tl.constexpr, BLOCK_D: tl.constexpr,
):
    # One program: the G query heads of one sequence that share KV head `kvh`, streaming
    # over the sequence's cache blocks (one block per step) with an online softmax.
    b = tl.program_id(0)
    kvh = tl.program_id(1)
    offs_g = tl.arange(0, BLOCK_G)
    offs_d = tl.arange(0, BLOCK_D)
    offs_s = tl.arange(0, BLOCK_SIZE)
    heads = kvh * G + offs_g
    g_mask = offs_g[:, None] < G
    q = tl.load(q_ptr + b * sqb + heads[:, None] * sqh + offs_d[None, :] * sqd, mask=g_mask, other=0.0).to(tl.float32)
    seq_len = tl.load(lens_ptr + b)
    m_i = tl.full((BLOCK_G,), float("-inf"), dtype=tl.float32)
    l_i = tl.zeros((BLOCK_G,), dtype=tl.float32)
    acc = tl.zeros((BLOCK_G, BLOCK_D), dtype=tl.float32)
    for page in range(0, tl.cdiv(seq_len, BLOCK_SIZE)):
        block = tl.load(table_ptr + b * stb + page * stn).to(tl.int64)
        pos = page * BLOCK_SIZE + offs_s
        pos_mask = pos < seq_len
        k = tl.load(k_ptr + block * skn + offs_s[:, None] * sks + kvh * skh + offs_d[None, :] * skd, mask=pos_mask[:, None], other=0.0).to(tl.float32)
        v = tl.load(v_ptr + block * svn + offs_s[:, None] * svs + kvh * svh + offs_d[None, :] * svd, mask=pos_mask[:, None], other=0.0).to(tl.float32)
        # [BLOCK_G, BLOCK_SIZE] scores, reduced over D explicitly (G is small).
        s = tl.sum(q[:, None, :] * k[None, :, :], axis=2) * scale
        s = tl.where(pos_mask[None, :], s, float("-inf"))
        # The first block holds position 0, so every row's maximum is finite from then on.
        m_new = tl.maximum(m_i, tl.max(s, axis=1))
        alpha = tl.exp(m_i - m_new)
        p = tl.exp(s - m_new[:, None])
        l_i = l_i * alpha + tl.sum(p, axis=1)
        acc = acc * alpha[:, None] + tl.sum(p[:, :, None] * v[None, :, :], axis=1)
        m_i = m_new
    out = acc / l_i[:, None]
    tl.store(o_ptr + b * sob + heads[:, None] * soh + offs_d[None, :] * sod, out.to(o_ptr.dtype.element_ty), mask=g_mask)


def kernel(q, k_cache, v_cache, block_table, seq_lens):
    B, Hq, D = q.shape
    block_size, Hkv = k_cache.shape[1], k_cache.shape[2]
    G = Hq // Hkv
    out = torch.empty_like(q)
    _paged_decode[(B, Hkv)](
        q, k_cache, v_cache, block_table, seq_lens, out, G, D**-0.5,
        *q.stride(), *k_cache.stride(), *v_cache.stride(), *block_table.stride(), *out.stride(),
        BLOCK_G=triton.next_power_of_2(G), BLOCK_SIZE=block_size, BLOCK_D=D,
    )
    return out
