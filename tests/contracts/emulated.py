"""Torch emulations of honest and cheating kernels, for the calibrated-contract tests (no interpreter)."""

from __future__ import annotations

import torch

LOG2E = 1.4426950408889634


def attention_online(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int, block: int = 16) -> torch.Tensor:
    """A flash-attention style kernel: scores scaled after the product with log2(e) folded in, exp2,
    an online softmax over key blocks, all in float32."""
    q, k, v = q.float(), k.float(), v.float()
    s, d = q.shape[-2], q.shape[-1]
    qk_scale = d**-0.5 * LOG2E
    i = torch.arange(s)[:, None]
    m = torch.full(q.shape[:-1], float("-inf"))
    total = torch.zeros(q.shape[:-1])
    acc = torch.zeros_like(q)
    for start in range(0, s, block):
        j = torch.arange(start, min(start + block, s))[None, :]
        scores = (q @ k[..., start : start + block, :].transpose(-1, -2)) * qk_scale
        scores = scores.masked_fill(~((j <= i) & (j > i - window)), float("-inf"))
        new = torch.maximum(m, scores.amax(-1))
        safe = torch.where(torch.isinf(new), torch.zeros_like(new), new)
        alpha = torch.exp2(m - safe)
        p = torch.exp2(scores - safe[..., None])
        total = total * alpha + p.sum(-1)
        acc = acc * alpha[..., None] + p @ v[..., start : start + block, :]
        m = new
    return acc / total[..., None]


def tf32(x: torch.Tensor) -> torch.Tensor:
    """x with its mantissa rounded to TF32's 10 bits (what a tensor core multiplies)."""
    bits = x.float().view(torch.int32)
    rounded = (bits + 0x1000) & ~0x1FFF
    return rounded.view(torch.float32)


def attention_reference_math(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int) -> torch.Tensor:
    s, d = q.shape[-2], q.shape[-1]
    i = torch.arange(s)[:, None]
    j = torch.arange(s)[None, :]
    scores = (q @ k.transpose(-1, -2)) * d**-0.5
    scores = scores.masked_fill(~((j <= i) & (j > i - window)), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def attention_float16(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int) -> torch.Tensor:
    """Cheat: the whole computation in float16 (scores pre-scaled so they fit), stored as float32."""
    out = attention_reference_math(q.half().float(), k.half().float(), v.half().float(), window)
    return out.half().float()


def attention_tf32(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int) -> torch.Tensor:
    """Cheat: TF32 products (operands rounded to 10 mantissa bits), float32 accumulation."""
    s, d = q.shape[-2], q.shape[-1]
    i = torch.arange(s)[:, None]
    j = torch.arange(s)[None, :]
    scores = (tf32(q) @ tf32(k).transpose(-1, -2)) * d**-0.5
    scores = scores.masked_fill(~((j <= i) & (j > i - window)), float("-inf"))
    return tf32(torch.softmax(scores, dim=-1)) @ tf32(v)


def attention_partial(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, window: int) -> torch.Tensor:
    """Cheat: the oldest key of every full window left out (partial work)."""
    return attention_reference_math(q, k, v, max(window - 1, 1)) if window > 1 else attention_reference_math(q, k, v, window)


def cross_entropy_online(logits: torch.Tensor, targets: torch.Tensor, block: int = 64) -> torch.Tensor:
    """A Liger-style cross-entropy: per row an online logsumexp over blocks in float32 (exp2), the
    per-row losses added in float32 in blocks of 8 rows (one partial per program), divided by the count."""
    x = logits.float()
    t, v = x.shape
    m = torch.full((t,), float("-inf"))
    total = torch.zeros(t)
    for start in range(0, v, block):
        chunk = x[:, start : start + block] * LOG2E
        new = torch.maximum(m, chunk.amax(-1))
        total = total * torch.exp2(m - new) + torch.exp2(chunk - new[:, None]).sum(-1)
        m = new
    lse = (m + torch.log2(total)) / LOG2E
    valid = targets != -100
    picked = x.gather(1, targets.clamp(min=0)[:, None])[:, 0]
    rows = torch.where(valid, lse - picked, torch.zeros_like(lse))
    partials = torch.stack([rows[start : start + 8].sum() for start in range(0, t, 8)])
    loss = torch.zeros(())
    for part in partials.flip(0):
        loss = loss + part
    return loss / valid.sum().float()


def cross_entropy_float16(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Cheat: the logits' exponentials summed in float16 arithmetic."""
    x = logits.float()
    m = x.amax(-1, keepdim=True)
    lse = m[:, 0] + torch.log((x - m).half().exp().sum(-1, dtype=torch.float16).float())
    valid = targets != -100
    picked = x.gather(1, targets.clamp(min=0)[:, None])[:, 0]
    rows = torch.where(valid, lse - picked, torch.zeros_like(lse)).half()
    return (rows.sum(dtype=torch.float16) / valid.sum()).float()


def softmax_backward_blocked(y: torch.Tensor, dy: torch.Tensor, block: int = 128) -> torch.Tensor:
    """An honest softmax backward: the row dot product accumulated block after block in float32
    (a Triton loop over BLOCK-wide chunks, each chunk summed as a tree), then dx in float32."""
    yf, dyf = y.float(), dy.float()
    dot = torch.zeros(y.shape[0])
    for start in range(0, y.shape[1], block):
        dot = dot + (yf[:, start : start + block] * dyf[:, start : start + block]).sum(-1)
    return (yf * (dyf - dot[:, None])).to(y.dtype)


def softmax_backward_float16(y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    """Cheat: the same formula in float16 arithmetic (float16 products, dot and difference)."""
    yh, dyh = y.half(), dy.half()
    dot = (yh * dyh).sum(-1, keepdim=True, dtype=torch.float16)
    return (yh * (dyh - dot)).to(y.dtype)


def softmax_backward_partial(y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    """Cheat: the row dot product misses the last column (a mask one lane short)."""
    yf, dyf = y.float(), dy.float()
    dot = (yf[:, :-1] * dyf[:, :-1]).sum(-1, keepdim=True)
    return (yf * (dyf - dot)).to(y.dtype)


def softmax_backward_sequential(y: torch.Tensor, dy: torch.Tensor) -> torch.Tensor:
    """An honest, slow softmax backward: the row dot product as one running float32 total, element by
    element in column order (the most roundings per element any order gives)."""
    yf, dyf = y.float(), dy.float()
    dot = torch.zeros(y.shape[0])
    for column in range(y.shape[1]):
        dot = dot + yf[:, column] * dyf[:, column]
    return (yf * (dyf - dot[:, None])).to(y.dtype)


def cross_entropy_partial(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """Cheat: the log-sum-exp misses the last vocabulary column (a mask one lane short); the target's
    logit is still read from the whole row."""
    x = logits.float()
    lse = torch.logsumexp(x[:, :-1], dim=-1)
    valid = targets != -100
    picked = x.gather(1, targets.clamp(min=0)[:, None])[:, 0]
    rows = torch.where(valid, lse - picked, torch.zeros_like(lse))
    return rows.sum() / valid.sum().float()
