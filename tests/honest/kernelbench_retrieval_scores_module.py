"""Retrieval scores as a KernelBench ModelNew: one program per (query tile, doc tile), half-precision dot,
float32 scores; the score dtype comes from promoting the inputs' dtypes.

Style: KernelBench
Task: l1/retrieval_scores
Idioms: torch.nn Module wrapper whose forward launches the kernel, torch.promote_types, locals named like builtins (compile)
"""

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def cosine_scores_kernel(
    q_ptr, d_ptr, out_ptr, Q, D, H,
    stride_qq, stride_dd, stride_oq,
    BLOCK_Q: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_H: tl.constexpr,
):
    rq = tl.program_id(0) * BLOCK_Q + tl.arange(0, BLOCK_Q)
    rd = tl.program_id(1) * BLOCK_D + tl.arange(0, BLOCK_D)
    rh = tl.arange(0, BLOCK_H)
    acc = tl.zeros((BLOCK_Q, BLOCK_D), dtype=tl.float32)
    for h0 in range(0, H, BLOCK_H):
        hs = h0 + rh
        q = tl.load(q_ptr + rq[:, None] * stride_qq + hs[None, :], mask=(rq[:, None] < Q) & (hs[None, :] < H), other=0.0)
        # [BLOCK_D, BLOCK_H] rows of docs, transposed in registers.
        d = tl.load(d_ptr + rd[:, None] * stride_dd + hs[None, :], mask=(rd[:, None] < D) & (hs[None, :] < H), other=0.0)
        acc = tl.dot(q.to(tl.float16), tl.trans(d.to(tl.float16)), acc, out_dtype=tl.float32)
    mask = (rq[:, None] < Q) & (rd[None, :] < D)
    tl.store(out_ptr + rq[:, None] * stride_oq + rd[None, :], acc.to(out_ptr.dtype.element_ty), mask=mask)


class ModelNew(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        # Compiled for a GPU: wide document tiles; under the interpreter: small ones.
        compile = torch.cuda.is_available()
        self.blocks = (32, 128, 64) if compile else (16, 64, 32)

    def forward(self, queries: torch.Tensor, docs: torch.Tensor) -> torch.Tensor:
        queries = queries.contiguous()
        docs = docs.contiguous()
        Q, H = queries.shape
        D = docs.shape[0]
        score_dtype = torch.promote_types(queries.dtype, docs.dtype)
        out = torch.empty((Q, D), dtype=score_dtype, device=queries.device)
        BLOCK_Q, BLOCK_D, BLOCK_H = self.blocks
        grid = (triton.cdiv(Q, BLOCK_Q), triton.cdiv(D, BLOCK_D))
        cosine_scores_kernel[grid](
            queries, docs, out, Q, D, H, queries.stride(0), docs.stride(0), out.stride(0),
            BLOCK_Q=BLOCK_Q, BLOCK_D=BLOCK_D, BLOCK_H=BLOCK_H,
        )
        return out


model = ModelNew()


def kernel(queries: torch.Tensor, docs: torch.Tensor) -> torch.Tensor:
    return model(queries, docs)
