"""Query-document scores (queries @ docs.T) in half precision: block pointers over queries and over docs
read transposed, float32 accumulation, autotuned document tile.

Style: Triton tutorials
Task: l1/retrieval_scores
Idioms: block pointers (tl.make_block_ptr, tl.advance), itertools.product autotune configs
"""

import itertools

import torch
import triton
import triton.language as tl


def get_configs():
    return [
        triton.Config({"BLOCK_Q": 16, "BLOCK_D": block_d, "BLOCK_H": 32}, num_warps=warps)
        for block_d, warps in itertools.product((32, 64), (2, 4))
    ]


@triton.autotune(configs=get_configs(), key=["Q", "D", "H"])
@triton.jit
def scores_kernel(
    q_ptr, d_ptr, out_ptr, Q, D, H,
    stride_qq, stride_qh, stride_dd, stride_dh, stride_oq, stride_od,
    BLOCK_Q: tl.constexpr, BLOCK_D: tl.constexpr, BLOCK_H: tl.constexpr,
):
    pid_q = tl.program_id(0)
    pid_d = tl.program_id(1)
    q_block = tl.make_block_ptr(
        q_ptr, shape=(Q, H), strides=(stride_qq, stride_qh), offsets=(pid_q * BLOCK_Q, 0), block_shape=(BLOCK_Q, BLOCK_H), order=(1, 0)
    )
    # docs is [D, H]; describe its transpose [H, D] by swapping the strides.
    dt_block = tl.make_block_ptr(
        d_ptr, shape=(H, D), strides=(stride_dh, stride_dd), offsets=(0, pid_d * BLOCK_D), block_shape=(BLOCK_H, BLOCK_D), order=(0, 1)
    )
    acc = tl.zeros((BLOCK_Q, BLOCK_D), dtype=tl.float32)
    for _ in range(0, tl.cdiv(H, BLOCK_H)):
        q = tl.load(q_block, boundary_check=(0, 1), padding_option="zero")
        dt = tl.load(dt_block, boundary_check=(0, 1), padding_option="zero")
        # Ranking-only contract: half-precision operands, float32 accumulation.
        acc = tl.dot(q.to(tl.float16), dt.to(tl.float16), acc, out_dtype=tl.float32)
        q_block = tl.advance(q_block, (0, BLOCK_H))
        dt_block = tl.advance(dt_block, (BLOCK_H, 0))
    out_block = tl.make_block_ptr(
        out_ptr, shape=(Q, D), strides=(stride_oq, stride_od), offsets=(pid_q * BLOCK_Q, pid_d * BLOCK_D), block_shape=(BLOCK_Q, BLOCK_D), order=(1, 0)
    )
    tl.store(out_block, acc, boundary_check=(0, 1))


def retrieval_scores(queries: torch.Tensor, docs: torch.Tensor) -> torch.Tensor:
    Q, H = queries.shape
    D = docs.shape[0]
    out = torch.empty((Q, D), dtype=torch.float32, device=queries.device)
    grid = lambda meta: (triton.cdiv(Q, meta["BLOCK_Q"]), triton.cdiv(D, meta["BLOCK_D"]))
    scores_kernel[grid](
        queries, docs, out, Q, D, H,
        queries.stride(0), queries.stride(1), docs.stride(0), docs.stride(1), out.stride(0), out.stride(1),
    )
    return out


def kernel(queries: torch.Tensor, docs: torch.Tensor) -> torch.Tensor:
    return retrieval_scores(queries, docs)
