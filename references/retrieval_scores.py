"""Dense retrieval scoring: the inner product of every query with every document embedding."""

from __future__ import annotations

from typing import Any

import torch


def retrieval_scores(queries: torch.Tensor, docs: torch.Tensor) -> torch.Tensor:
    return (queries.to(torch.float32) @ docs.to(torch.float32).T).to(torch.float32)


def make_inputs(shape: dict[str, int], dtype: torch.dtype, generator: torch.Generator, device: torch.device) -> dict[str, Any]:
    q, d, h = shape["Q"], shape["D"], shape["H"]
    # Documents come in topics (16 cluster centres plus noise); each query is a noisy
    # copy of a topic direction, so every query has a clear set of relevant documents.
    topics = torch.randn(16, h, generator=generator, device=device)
    doc_topic = torch.randint(0, 16, (d,), generator=generator, device=device)
    docs = topics[doc_topic] + 0.8 * torch.randn(d, h, generator=generator, device=device)
    query_topic = torch.randint(0, 16, (q,), generator=generator, device=device)
    queries = topics[query_topic] + 0.8 * torch.randn(q, h, generator=generator, device=device)
    docs = docs / docs.norm(dim=1, keepdim=True)
    queries = queries / queries.norm(dim=1, keepdim=True)
    return {"queries": queries.to(dtype), "docs": docs.to(dtype)}
