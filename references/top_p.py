"""Nucleus (top-p) sampling mask: keep the smallest set of most probable tokens whose probability reaches p."""

from __future__ import annotations

from typing import Any

import torch


def top_p_mask(logits: torch.Tensor, top_p: torch.Tensor) -> torch.Tensor:
    probs = torch.softmax(logits, dim=-1)
    # Descending by probability; equal probabilities in index order (a stable sort).
    sorted_probs, order = torch.sort(probs, dim=-1, descending=True, stable=True)
    # A token is kept when the tokens ranked before it hold less than top_p: the first
    # token whose inclusion reaches top_p (the boundary token) is kept, the rest dropped.
    before = torch.cumsum(sorted_probs, dim=-1) - sorted_probs
    keep_sorted = before < top_p[:, None]
    return torch.zeros_like(keep_sorted).scatter(-1, order, keep_sorted)


# Log-probability gap between the boundary token and the tokens ranked next to it.
GAP = 0.05
# The smallest distance allowed between top_p and the mass before / through the boundary token.
MARGIN = 5e-4


def _row(v: int, generator: torch.Generator, device: torch.device, drops: bool = False) -> tuple[torch.Tensor, float]:
    """One row's logits (float64, before the shift) and its top_p, with the boundary well separated;
    with `drops`, at least one token below the boundary (a dropped one)."""
    f64 = torch.float64

    def uniform(lo: float, hi: float) -> float:
        return lo + (hi - lo) * float(torch.rand((), generator=generator, device=device, dtype=f64))

    # Log-weights relative to the boundary token (0): n_above tokens above it by more
    # than GAP, the tail below it by more than GAP.
    n_above = int(torch.randint(0, max(min(12, v - 1 - int(drops)), 0) + 1, (), generator=generator, device=device))
    n_tail = v - 1 - n_above
    above = GAP + uniform(0.5, 2.5) * torch.rand(n_above, generator=generator, device=device, dtype=f64)
    if n_above >= 3:
        above[1] = above[2]  # an exact tie inside the kept set
    above_mass = float(above.exp().sum())
    tail = -GAP - uniform(0.5, 2.0) * torch.randn(n_tail, generator=generator, device=device, dtype=f64).abs()
    if n_tail:
        # The tail holds 5% .. 100% of the kept tokens' weight (less when it is short).
        target = uniform(0.05, 1.0) * (above_mass + 1.0)
        tail = tail - max(0.0, float(tail.exp().sum().log()) - torch.tensor(target, dtype=f64).log().item())
    if n_tail >= 4:
        # Exact ties among dropped tokens.
        count = max(1, n_tail // 100)
        source = torch.randint(0, n_tail, (count,), generator=generator, device=device)
        target_positions = torch.randint(0, n_tail, (count,), generator=generator, device=device)
        tail[target_positions] = tail[source]
    total = above_mass + 1.0 + float(tail.exp().sum())
    # top_p falls inside the boundary token's share, 20% .. 80% of the way through it.
    top_p = (above_mass + uniform(0.2, 0.8)) / total
    values = torch.cat([torch.zeros(1, dtype=f64, device=device), above, tail])
    return values, top_p


def _margins(logits: torch.Tensor, top_p: torch.Tensor) -> tuple[float, float]:
    """(smallest |mass before or through the boundary token - top_p|, smallest log-gap at the boundary), exactly in float64."""
    probs = torch.softmax(logits.to(torch.float64), dim=-1)
    sorted_probs, _ = torch.sort(probs, dim=-1, descending=True)
    through = torch.cumsum(sorted_probs, dim=-1)
    before = through - sorted_probs
    p = top_p.to(torch.float64)[:, None]
    boundary = (before < p).sum(dim=-1, keepdim=True) - 1  # the last kept position
    mass_margin = torch.minimum(p - before.gather(-1, boundary), through.gather(-1, boundary) - p)
    logp = sorted_probs.log()
    gaps = [logp.gather(-1, boundary) - logp.gather(-1, (boundary + 1).clamp(max=logits.shape[-1] - 1))]
    gaps.append(torch.where(boundary > 0, logp.gather(-1, (boundary - 1).clamp(min=0)) - logp.gather(-1, boundary), torch.inf))
    at_end = boundary + 1 >= logits.shape[-1]
    gap = torch.minimum(torch.where(at_end, torch.inf, gaps[0]), gaps[1])
    return float(mass_margin.min()), float(gap.min())


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    b, v = shape["B"], shape["V"]
    rows, ps = [], []
    for r in range(b):
        # Row 0 always drops a token: where every row kept them all (2 rows of 7 tokens: 1 grade in
        # 50), an all-True mask was the answer and the trial could not tell a kernel from `ones`.
        values, top_p = _row(v, generator, device, drops=r == 0)
        # Scatter the row's tokens to random positions; row 0 puts its most probable
        # token last and row 1 its boundary token last, so an unmasked tail shows.
        row = torch.empty(v, dtype=torch.float64, device=device)
        row[torch.randperm(v, generator=generator, device=device)] = values
        if r in (0, 1):
            pick = int(row.argmax()) if r == 0 else int((row == 0).nonzero()[0])
            row[pick], row[v - 1] = row[v - 1].clone(), row[pick].clone()
        # A per-row shift of 70..110 either way: exp() without subtracting the row max
        # overflows (or underflows to 0/0) in float32.
        shift = 70.0 + 40.0 * float(torch.rand((), generator=generator, device=device))
        sign = 1.0 if float(torch.rand((), generator=generator, device=device)) < 0.5 else -1.0
        rows.append(row + sign * shift)
        ps.append(top_p)
    logits = torch.stack(rows).to(torch.float32)
    top_p = torch.tensor(ps, dtype=torch.float32, device=device)
    mass_margin, gap = _margins(logits, top_p)
    # After rounding to float32 the boundary must still be unambiguous.
    if mass_margin < MARGIN or gap < 0.5 * GAP:
        raise AssertionError(f"top_p inputs not separated: mass margin {mass_margin:.3g}, gap {gap:.3g}")
    return {"logits": logits.to(dtype), "top_p": top_p}
