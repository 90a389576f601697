"""Mean cross-entropy loss over logits with ignored positions (ignore_index = -100).

loss = sum over valid t of (logsumexp(logits[t]) - logits[t, targets[t]]) / #valid,
where a position is valid unless targets[t] == -100 (padding, prompt tokens).
"""

from __future__ import annotations

from typing import Any

import torch

IGNORE_INDEX = -100


def cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.cross_entropy(logits, targets, ignore_index=IGNORE_INDEX)


def oracle(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """The same loss computed in float64, as float64."""
    return torch.nn.functional.cross_entropy(logits.to(torch.float64), targets, ignore_index=IGNORE_INDEX)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    t, v = shape["T"], shape["V"]
    # Logit-like rows: per-row temperature (0.5..25) and offset (-100..100), so exp() of
    # raw logits overflows without the max subtracted; every fourth row is nearly one-hot
    # (a logit 30 above the rest), every eighth with that spike in the last column.
    x = torch.randn(t, v, generator=generator, device=device, dtype=torch.float32)
    temperature = 0.5 + 24.5 * torch.rand(t, 1, generator=generator, device=device)
    offset = 200.0 * torch.rand(t, 1, generator=generator, device=device) - 100.0
    logits = x * temperature + offset
    rows = torch.arange(t, device=device)
    spike = torch.randint(0, v, (t,), generator=generator, device=device)
    spike = torch.where(rows % 8 == 7, v - 1, spike)
    spiky = rows % 4 == 3
    logits[spiky, spike[spiky]] = logits[spiky].max(dim=-1).values + 30.0
    logits = logits.to(dtype)
    # Targets: the row's argmax, a token sampled from the row, or a uniformly random one,
    # in turn; about 30% of the positions (never position 0) are ignored (-100), so the
    # mean must divide by the number of valid positions, not by T.
    probs = torch.softmax(logits.to(torch.float64), dim=-1)
    sampled = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
    uniform = torch.randint(0, v, (t,), generator=generator, device=device)
    argmax = logits.to(torch.float32).argmax(dim=-1)
    kind = rows % 3
    targets = torch.where(kind == 0, argmax, torch.where(kind == 1, sampled, uniform))
    ignored = (torch.rand(t, generator=generator, device=device) < 0.3) & (rows > 0)
    targets = torch.where(ignored, torch.full_like(targets, IGNORE_INDEX), targets)
    return {"logits": logits, "targets": targets.to(torch.int64)}
