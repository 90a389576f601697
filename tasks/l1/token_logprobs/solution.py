import torch
import triton
import triton.language as tl


@triton.jit
def _token_logprobs(logits_ptr, tokens_ptr, out_ptr, V, stride_t, BLOCK: tl.constexpr):
    # One program per token: an online log-sum-exp over the row in BLOCK steps (running
    # max m and sum s of exp(x - m), rescaled when the max grows), then
    # logprob = x[token] - m - log(s). Masked lanes load as -inf and add exp(-inf) = 0.
    row = tl.program_id(0)
    base = logits_ptr + row.to(tl.int64) * stride_t
    m = -float("inf")
    s = 0.0
    for start in range(0, V, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < V
        x = tl.load(base + cols, mask=mask, other=-float("inf")).to(tl.float32)
        m_new = tl.maximum(m, tl.max(x, axis=0))
        s = s * tl.exp(m - m_new) + tl.sum(tl.exp(x - m_new), axis=0)
        m = m_new
    token = tl.load(tokens_ptr + row)
    picked = tl.load(base + token).to(tl.float32)
    tl.store(out_ptr + row, picked - m - tl.log(s))


def kernel(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    logits = logits.contiguous()
    T, V = logits.shape
    out = torch.empty((T,), dtype=torch.float32, device=logits.device)
    BLOCK = min(triton.next_power_of_2(V), 4096)
    _token_logprobs[(T,)](logits, tokens, out, V, logits.stride(0), BLOCK=BLOCK, num_warps=8)
    return out
