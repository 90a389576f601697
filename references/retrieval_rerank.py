"""Two-stage retrieval: a coarse (quantised) scan keeps C candidates per query, a
full-precision rerank of those candidates returns the final top k.

Stage 1 scores every key by its coarse copy, `key_codes[j] * key_scales[j]` (int8
codes with a per-key float32 scale, standing in for FP8 storage), and keeps the C
highest coarse scores per query (ties by lower key index). Stage 2 rescores just
those candidates with the full-precision keys (float32 accumulation) and returns
their k highest rerank scores, in descending order, ties by lower key index. A key
that stage 1 drops is never in the answer, however well its full keys would score.
"""

from __future__ import annotations

from typing import Any

import torch


def retrieval_rerank(q: torch.Tensor, key_codes: torch.Tensor, key_scales: torch.Tensor, keys: torch.Tensor, num_candidates: int, k: int) -> torch.Tensor:
    qf = q.to(torch.float32)
    # Stage 1: coarse scores of every key, the C best kept (a stable sort: ties by lower index).
    coarse = (qf @ key_codes.to(torch.float32).T) * key_scales.to(torch.float32)[None, :]
    candidates = torch.sort(coarse, dim=-1, descending=True, stable=True).indices[:, :num_candidates]
    # Candidates in ascending key order, so the stable sort below breaks ties by key index.
    candidates = torch.sort(candidates, dim=-1).values
    # Stage 2: rerank the candidates with the full-precision keys.
    gathered = keys.to(torch.float32)[candidates]  # [Q, C, D]
    fine = torch.einsum("qd,qcd->qc", qf, gathered)
    order = torch.sort(fine, dim=-1, descending=True, stable=True).indices[:, :k]
    return torch.gather(candidates, 1, order).contiguous()


# Code range of the coarse copy: +-15 (about 5 bits), so the coarse order really differs from the full one.
CODE_MAX = 15
# Smallest distance (float64, on the graded inputs) between the C-th and (C+1)-th coarse scores.
COARSE_MARGIN = 0.05
# Smallest distance between adjacent rerank scores among a query's top k + 1 candidates. (No exact
# duplicate keys: even torch's float32 einsum scores two identical rows differently at different positions.)
FINE_MARGIN = 2e-3


def _quantise(rows: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    scales = rows.abs().amax(dim=1).clamp(min=1e-6) / CODE_MAX
    codes = torch.round(rows / scales[:, None]).clamp(-CODE_MAX, CODE_MAX).to(torch.int8)
    return codes, scales.to(torch.float32)


def margins(q: torch.Tensor, key_codes: torch.Tensor, key_scales: torch.Tensor, keys: torch.Tensor, c: int, k: int) -> tuple[float, float]:
    """(smallest coarse gap at position C, smallest rerank gap among the top k + 1 candidates), in float64."""
    f64 = torch.float64
    qd = q.to(f64)
    coarse = (qd @ key_codes.to(f64).T) * key_scales.to(f64)[None, :]
    sorted_coarse, order = torch.sort(coarse, dim=-1, descending=True, stable=True)
    coarse_gap = float((sorted_coarse[:, c - 1] - sorted_coarse[:, c]).min()) if c < coarse.shape[1] else float("inf")
    candidates = order[:, :c]
    fine = torch.einsum("qd,qcd->qc", qd, keys.to(f64)[candidates])
    top = torch.sort(fine, dim=-1, descending=True).values[:, : min(k + 1, c)]
    diffs = top[:, :-1] - top[:, 1:]
    fine_gap = float(diffs.min()) if diffs.numel() else float("inf")
    return coarse_gap, fine_gap


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device, **options: Any) -> dict[str, Any]:
    nq, n, d, c, k = shape["Q"], shape["N"], shape["D"], shape["C"], shape["K"]
    if not (2 <= k < c and nq * (c + 1) <= n and nq < d):
        raise ValueError(f"retrieval_rerank needs 2 <= K < C, Q * (C + 1) <= N and Q < D: {shape}")
    f64 = torch.float64

    def rand(*size: int) -> torch.Tensor:
        return torch.rand(*size, generator=generator, device=device, dtype=f64)

    # Orthonormal queries; every key is a combination of the queries (its scores) plus a
    # component orthogonal to all of them (norm about 1), so each score is set by design.
    basis, _ = torch.linalg.qr(torch.randn(d, d, generator=generator, device=device, dtype=f64))
    queries = basis[:, :nq].T.contiguous()  # [Q, D]
    perp = basis[:, nq:]  # [D, D - Q]

    def orthogonal(count: int) -> torch.Tensor:
        z = torch.randn(count, d - nq, generator=generator, device=device, dtype=f64)
        return (z / z.norm(dim=1, keepdim=True).clamp(min=1e-12) * (0.8 + 0.4 * rand(count, 1))) @ perp.T

    # Background scores in (-0.35, 0.35) for every query.
    scores = (rand(n, nq) - 0.5) * 0.7  # [N, Q]: the full-precision score of key j for query i
    coarse_offset = torch.zeros(n, nq, dtype=f64, device=device)  # how far the coarse copy is off, by design
    perm = torch.randperm(n, generator=generator, device=device)
    # Query 0's best key is the last one: an unmasked or dropped tail shows.
    where = int((perm == n - 1).nonzero()[0])
    perm[where], perm[0] = perm[0].clone(), perm[where].clone()
    for i in range(nq):
        planted = perm[i * (c + 1) : (i + 1) * (c + 1)]
        head, rest, decoy = planted[: k + 1], planted[k + 1 : c], planted[c]
        # The top k + 1: about 0.01 apart near 1.0 (close enough for the coarse copy, whose
        # error is ~0.01, to swap neighbours); the other candidates below them, down to 0.55.
        step = min(0.01, 0.3 / (k + 1))
        top = 1.0 - step * torch.arange(k + 1, device=device, dtype=f64) + 0.3 * step * (rand(k + 1) - 0.5)
        scores[head, i] = top
        scores[rest, i] = 0.55 + (0.45 - step * (k + 0.85)) * rand(rest.numel())
        # A stale coarse entry: the full keys would rank this key first, but its coarse copy
        # scores ~0.2, so stage 1 drops it and it must not be in the answer.
        scores[decoy, i] = 1.2
        coarse_offset[decoy, i] = -1.0
    full = scores @ queries + orthogonal(n)
    coarse_rows = full + coarse_offset @ queries
    keys = full.to(dtype)
    # The coarse copy is quantised from the rounded keys (or from the stale rows).
    coarse_rows = torch.where((coarse_offset != 0).any(dim=1, keepdim=True), coarse_rows, keys.to(f64))
    key_codes, key_scales = _quantise(coarse_rows)
    # Query norms vary (the scores scale with them), the direction is fixed.
    q = (queries * (0.75 + 0.5 * rand(nq, 1))).to(dtype)
    coarse_gap, fine_gap = margins(q, key_codes, key_scales, keys, c, k)
    qnorm = float(q.to(f64).norm(dim=1).min())
    if coarse_gap < COARSE_MARGIN * qnorm or fine_gap < FINE_MARGIN * qnorm:
        raise AssertionError(f"retrieval_rerank inputs not separated: coarse gap {coarse_gap:.3g}, rerank gap {fine_gap:.3g}")
    return {"q": q, "key_codes": key_codes, "key_scales": key_scales, "keys": keys, "num_candidates": c, "k": k}
