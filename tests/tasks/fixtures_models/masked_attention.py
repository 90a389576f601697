"""GPT-2's causal attention as its math decomposition runs it: the two batched matmuls stay in torch
(the task's anchors); the query and key scaling and the masked softmax are Triton kernels. The query
is read straight out of the fused QKV projection's output (its first third, head by head).

Task: models/l2/gpt2/masked_attention_<n>
"""

import torch
import triton
import triton.language as tl

MODE = "honest"


@triton.jit
def _scale_query(qkv, q, S, H, D, row_stride, scale, BLOCK_D: tl.constexpr):
    # q[h, s, :] = qkv[s, h * D : (h + 1) * D] * scale
    s = tl.program_id(0)
    h = tl.program_id(1)
    d = tl.arange(0, BLOCK_D)
    mask = d < D
    values = tl.load(qkv + s * row_stride + h * D + d, mask=mask, other=0.0)
    tl.store(q + (h * S + s) * D + d, values * scale, mask=mask)


@triton.jit
def _scale_key_transposed(k, kt, S, D, scale, BLOCK_D: tl.constexpr):
    # kt[h, :, s] = k[0, h, s, :] * scale
    s = tl.program_id(0)
    h = tl.program_id(1)
    d = tl.arange(0, BLOCK_D)
    mask = d < D
    values = tl.load(k + (h * S + s) * D + d, mask=mask, other=0.0)
    tl.store(kt + (h * D + d) * S + s, values * scale, mask=mask)


@triton.jit
def _masked_softmax(scores, mask_ptr, probs, S, BLOCK: tl.constexpr, HALF: tl.constexpr, ZERO: tl.constexpr):
    row = tl.program_id(0)  # h * S + i
    i = row % S
    cols = tl.arange(0, BLOCK)
    inside = cols < S
    x = tl.load(scores + row * S + cols, mask=inside, other=float("-inf")) + tl.load(mask_ptr + i * S + cols, mask=inside, other=0.0)
    if HALF:
        x = x.to(tl.float16).to(tl.float32)
    top = tl.max(x, axis=0)
    safe_top = tl.where(top == float("-inf"), 0.0, top)
    e = tl.exp(x - safe_top)
    if HALF:
        e = e.to(tl.float16).to(tl.float32)
    total = tl.sum(e, axis=0)
    p = tl.where(total > 0, e / total, 0.0)
    if ZERO:
        p = p * 0.0
    tl.store(probs + row * S + cols, p, mask=inside)


@triton.jit
def _copy(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)


def kernel(x, y, mask, z):
    _, heads, seq, dim = y.shape
    scale = 0.3535533905932738
    if MODE == "passthrough":
        out = torch.empty((heads, seq, dim), dtype=z.dtype, device=z.device)
        _copy[(triton.cdiv(z.numel(), 1024),)](z, out, z.numel(), BLOCK=1024)
        return out
    q = torch.empty((heads, seq, dim), dtype=x.dtype, device=x.device)
    kt = torch.empty((heads, dim, seq), dtype=y.dtype, device=y.device)
    block_d = triton.next_power_of_2(dim)
    _scale_query[(seq, heads)](x, q, seq, heads, dim, x.stride(0), scale, BLOCK_D=block_d)
    _scale_key_transposed[(seq, heads)](y, kt, seq, dim, scale, BLOCK_D=block_d)
    scores = torch.bmm(q, kt)
    probs = torch.empty_like(scores)
    rows = heads * seq // 2 if MODE == "partial" else heads * seq
    _masked_softmax[(rows,)](scores, mask, probs, seq, BLOCK=triton.next_power_of_2(seq), HALF=MODE == "fp16", ZERO=MODE == "zeros")
    return torch.bmm(probs, z.view(heads, seq, dim))
