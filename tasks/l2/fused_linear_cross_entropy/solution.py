import torch
import triton
import triton.language as tl


@triton.jit
def _linear_cross_entropy(
    h_ptr, w_ptr, t_ptr, out_ptr, T, V, H,
    stride_ht, stride_hh, stride_wv, stride_wh,
    BLOCK_T: tl.constexpr, BLOCK_V: tl.constexpr, BLOCK_H: tl.constexpr, IEEE: tl.constexpr,
):
    # One program per BLOCK_T tokens walks the vocabulary in BLOCK_V chunks: each chunk's
    # logits tile [BLOCK_T, BLOCK_V] is computed over H in BLOCK_H steps, folded into a
    # running max / rescaled running sum (online log-sum-exp) and the target's logit is
    # picked out on the way; the full logits never exist.
    rows = tl.program_id(0) * BLOCK_T + tl.arange(0, BLOCK_T)
    row_mask = rows < T
    targets = tl.load(t_ptr + rows, mask=row_mask, other=0)
    offs_v = tl.arange(0, BLOCK_V)
    offs_h = tl.arange(0, BLOCK_H)
    m = tl.full((BLOCK_T,), float("-inf"), dtype=tl.float32)
    s = tl.zeros((BLOCK_T,), dtype=tl.float32)
    target_logit = tl.zeros((BLOCK_T,), dtype=tl.float32)
    for v0 in range(0, V, BLOCK_V):
        cols = v0 + offs_v
        col_mask = cols < V
        logits = tl.zeros((BLOCK_T, BLOCK_V), dtype=tl.float32)
        for h0 in range(0, H, BLOCK_H):
            h_mask = offs_h < H - h0
            x = tl.load(
                h_ptr + rows[:, None] * stride_ht + (h0 + offs_h)[None, :] * stride_hh,
                mask=row_mask[:, None] & h_mask[None, :], other=0.0,
            )  # [BLOCK_T, BLOCK_H]
            w = tl.load(
                w_ptr + cols[None, :] * stride_wv + (h0 + offs_h)[:, None] * stride_wh,
                mask=h_mask[:, None] & col_mask[None, :], other=0.0,
            )  # [BLOCK_H, BLOCK_V]: the weight read transposed
            if IEEE:
                # float32 inputs: full-precision products (GPUs default to TF32).
                logits = tl.dot(x, w, logits, input_precision="ieee")
            else:
                # float16/bfloat16 inputs: exact products, float32 accumulation.
                logits = tl.dot(x, w, logits)
        logits = tl.where(col_mask[None, :], logits, float("-inf"))
        m_new = tl.maximum(m, tl.max(logits, axis=1))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(logits - m_new[:, None]), axis=1)
        m = m_new
        target_logit += tl.sum(tl.where(cols[None, :] == targets[:, None], logits, 0.0), axis=1)
    # loss = lse - x[target] = (m - x[target]) + log(s): the two large terms cancel first.
    loss = (m - target_logit) + tl.log(s)
    tl.store(out_ptr + rows, loss, mask=row_mask)


def kernel(hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    T, H = hidden.shape
    V = weight.shape[0]
    out = torch.empty((T,), dtype=torch.float32, device=hidden.device)
    # Bigger token tiles on a GPU (each program streams the whole weight once per tile);
    # small ones under the CPU interpreter, where every program instance is costly.
    BLOCK_T = 64 if hidden.is_cuda else 16
    BLOCK_V, BLOCK_H = 128, 64
    _linear_cross_entropy[(triton.cdiv(T, BLOCK_T),)](
        hidden, weight, targets, out, T, V, H,
        hidden.stride(0), hidden.stride(1), weight.stride(0), weight.stride(1),
        BLOCK_T=BLOCK_T, BLOCK_V=BLOCK_V, BLOCK_H=BLOCK_H, IEEE=hidden.dtype == torch.float32,
    )
    return out
