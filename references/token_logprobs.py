"""Log-probabilities of given tokens under logits: log_softmax(logits)[t, tokens[t]].

This is how an RL trainer re-scores the tokens a rollout engine sampled (and how the
rollout's own log-probs are checked against the trainer's). The softmax is taken in
float32 whatever the logits' dtype, and the result is float32.
"""

from __future__ import annotations

from typing import Any

import torch


def token_logprobs(logits: torch.Tensor, tokens: torch.Tensor) -> torch.Tensor:
    logprobs = torch.log_softmax(logits.float(), dim=-1)
    return logprobs.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    t, v = shape["T"], shape["V"]
    # Logit-like rows: a per-row temperature (0.5..25) and offset (-100..100), so exp()
    # of raw logits overflows float32 without the max subtracted, and every fourth row
    # has one logit 30 above the rest (nearly one-hot); in every other such row the spike
    # is the last column, so a kernel that drops the row tail is far off.
    x = torch.randn(t, v, generator=generator, device=device, dtype=torch.float32)
    temperature = 0.5 + 24.5 * torch.rand(t, 1, generator=generator, device=device)
    offset = 200.0 * torch.rand(t, 1, generator=generator, device=device) - 100.0
    logits = x * temperature + offset
    spike = torch.randint(0, v, (t,), generator=generator, device=device)
    spike = torch.where(torch.arange(t, device=device) % 8 == 7, v - 1, spike)
    spiky = torch.arange(t, device=device) % 4 == 3
    logits[spiky, spike[spiky]] = logits[spiky].max(dim=-1).values + 30.0
    logits = logits.to(dtype)
    # Tokens as a rollout produces them and worse: the row's argmax (log-prob near 0),
    # a token sampled from the row's distribution, or a uniformly random one other than
    # the argmax (log-probs down to about -200; at most -log 2 even where it ties the
    # max, so no trial is all near-zero log-probs that zeros or their mean would match:
    # with the argmax allowed, 1 grade in 50 had such a three-row trial), in turn.
    probs = torch.softmax(logits.to(torch.float64), dim=-1)
    sampled = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
    argmax = logits.to(torch.float32).argmax(dim=-1)
    uniform = (argmax + 1 + torch.randint(0, max(v - 1, 1), (t,), generator=generator, device=device)) % v
    kind = torch.arange(t, device=device) % 3
    tokens = torch.where(kind == 0, argmax, torch.where(kind == 1, sampled, uniform))
    return {"logits": logits, "tokens": tokens.to(torch.int64)}
