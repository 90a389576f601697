"""Per-token cross-entropy of hidden states through an LM head, without the reduction.

loss[t] = logsumexp_v(logits[t, v]) - logits[t, targets[t]],  logits = hidden @ weight.T,
with the logits computed in float32 from upcast inputs. The reference materialises the
full [T, V] logits (what a fused kernel exists to avoid); the loss is float32 whatever the
inputs' dtype.
"""

from __future__ import annotations

from typing import Any

import torch


def fused_linear_cross_entropy(hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    logits = hidden.to(torch.float32) @ weight.to(torch.float32).T
    return torch.nn.functional.cross_entropy(logits, targets, reduction="none")


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    t, v, h = shape["T"], shape["V"], shape["H"]
    rows = torch.arange(t, device=device)
    # LM-head rows with unit-variance entries / sqrt(H), except a shared first channel of
    # ones (a direction common to every vocabulary entry, as real heads have), so that the
    # first hidden channel shifts a whole row of logits.
    weight = torch.randn(v, h, generator=generator, device=device, dtype=torch.float32) / h**0.5
    weight[:, 0] = 1.0
    # Hidden states with a per-row "temperature" (logit spread 0.5..25) and a per-row offset
    # of -100..100 in the shared channel: exp() of raw logits overflows float32 without the
    # running max subtracted, and a tail padded with 0 instead of -inf is far off.
    temperature = 0.5 + 24.5 * torch.rand(t, 1, generator=generator, device=device)
    hidden = torch.randn(t, h, generator=generator, device=device, dtype=torch.float32) * temperature
    hidden[:, 0] = 200.0 * torch.rand(t, generator=generator, device=device) - 100.0
    # Every fourth row is pushed towards one vocabulary entry (its logit ~30 above the row's
    # max): nearly one-hot rows; every eighth row's spike is the last entry, so a kernel that
    # drops the vocabulary tail is far off.
    if h > 1:
        spike = torch.randint(0, v, (t,), generator=generator, device=device)
        spike = torch.where(rows % 8 == 7, v - 1, spike)
        for row in rows[rows % 4 == 3].tolist():
            direction = weight[spike[row], 1:]
            logits = hidden[row] @ weight.T
            lift = float(logits.max() - logits[spike[row]]) + 30.0
            hidden[row, 1:] += lift * direction / direction.dot(direction)
    hidden = hidden.to(dtype)
    weight = weight.to(dtype)
    # Targets as a training batch has them and worse: the row's argmax (loss near 0), a token
    # sampled from the row's distribution, or a uniformly random one (losses above 100).
    logits = hidden.to(torch.float64) @ weight.to(torch.float64).T
    probs = torch.softmax(logits, dim=-1)
    sampled = torch.multinomial(probs, 1, generator=generator).squeeze(-1)
    uniform = torch.randint(0, v, (t,), generator=generator, device=device)
    argmax = logits.argmax(dim=-1)
    kind = rows % 3
    targets = torch.where(kind == 0, argmax, torch.where(kind == 1, sampled, uniform))
    return {"hidden": hidden, "weight": weight, "targets": targets.to(torch.int64)}
