"""MoE token permutation (dispatch): copies of each token's hidden state, grouped by expert.

Every (token t, slot k) pair with expert e = expert_ids[t, k] becomes one row
x[t] of the output; rows are grouped by expert in ascending expert order and,
within an expert, kept in ascending flat order t * K + k (a stable sort by
expert). `offsets` (int64 [E + 1]) gives each expert's row range.
"""

from __future__ import annotations

from typing import Any

import torch


def moe_permute(x: torch.Tensor, expert_ids: torch.Tensor, num_experts: int) -> tuple[torch.Tensor, torch.Tensor]:
    top_k = expert_ids.shape[1]
    flat = expert_ids.reshape(-1)
    order = torch.argsort(flat, stable=True)
    permuted = x[order // top_k]
    counts = torch.bincount(flat, minlength=num_experts)
    offsets = torch.cat([counts.new_zeros(1), torch.cumsum(counts, 0)])
    return permuted, offsets


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    t, h, e, k = shape["T"], shape["H"], shape["E"], shape["K"]
    # Imbalanced expert loads, as a trained router gives: about a fifth of the experts
    # (never more than E - K) receive no token at all (their offsets repeat), the rest
    # have heavy-tailed popularity and one hot expert is picked by about half the tokens.
    popularity = torch.rand(e, generator=generator, device=device, dtype=torch.float64) ** 3 + 1e-3
    empty = torch.randperm(e, generator=generator, device=device)[: min(max(1, e // 5), e - k)]
    popularity[empty] = 0.0
    hot = int(torch.randint(0, e, (1,), generator=generator, device=device))
    popularity[hot] = float(popularity.sum()) + 1e-3
    # Top-k experts of a token are distinct, in no particular order (a router's top-k is
    # sorted by score, not by id).
    expert_ids = torch.multinomial(popularity.expand(t, e), k, replacement=False, generator=generator)
    # Distinct rows (a copy of the wrong token is visible), with some exact -0.0 entries:
    # the copy must move bits, not values.
    x = torch.randn(t, h, generator=generator, device=device, dtype=torch.float32)
    x = torch.where(torch.rand(t, h, generator=generator, device=device) < 0.02, torch.full_like(x, -0.0), x)
    return {"x": x.to(dtype), "expert_ids": expert_ids.to(torch.int64), "num_experts": e}
