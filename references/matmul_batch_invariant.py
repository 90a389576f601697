"""A plain matmul a [M, K] @ b [K, N] -> [M, N] whose rows must not depend on the batch size M.

Accumulated in float32 whatever the input dtype (float16/bfloat16 inputs are upcast), the
result rounded once to the input dtype: what a batch-invariant inference stack runs for
the projections of a decode step, where M is the number of sequences in flight.
"""

from __future__ import annotations

from typing import Any

import torch


def matmul(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    return (a.to(torch.float32) @ b.to(torch.float32)).to(a.dtype)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    m, n, k = shape["M"], shape["N"], shape["K"]
    # Activations with a few large outlier channels shared by all rows (as in real hidden
    # states) and a weight with unit-variance columns scaled by 1/sqrt(K): outputs are O(1)
    # with heavy cancellation, so a changed reduction order flips low bits everywhere and a
    # dropped K tail (the outliers include the last channel) is far off.
    a = torch.randn(m, k, generator=generator, device=device, dtype=torch.float32)
    outliers = torch.randperm(k, generator=generator, device=device)[: max(1, k // 128)]
    a[:, outliers] *= 8.0
    a[:, k - 1] *= 8.0
    b = torch.randn(k, n, generator=generator, device=device, dtype=torch.float32) / k**0.5
    return {"a": a.to(dtype), "b": b.to(dtype)}
