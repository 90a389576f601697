"""Log-softmax after unsloth's chunked cross-entropy: per-chunk (max, sum of exp), then a combine-and-write pass.

Style: unsloth
Task: l1/log_softmax
Idioms: do_not_specialize, torch.cuda.is_available() branch, a parameter called input
"""

import torch
import triton
import triton.language as tl

# unsloth splits long vocabularies into chunks of 65536; the interpreter gets small chunks.
MAX_FUSED_SIZE = 65536 if torch.cuda.is_available() else 512


@triton.jit(do_not_specialize=["n_cols"])
def _chunked_max_sumexp(logits_ptr, logits_row_stride, max_ptr, sumexp_ptr, n_cols, N_CHUNKS: tl.constexpr, BLOCK_SIZE: tl.constexpr):
    row_idx = tl.program_id(0).to(tl.int64)
    chunk_idx = tl.program_id(1)
    col_offsets = chunk_idx * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    logits = tl.load(logits_ptr + row_idx * logits_row_stride + col_offsets, mask=mask, other=-float("inf")).to(tl.float32)
    c = tl.max(logits, 0)
    tl.store(max_ptr + row_idx * N_CHUNKS + chunk_idx, c)
    tl.store(sumexp_ptr + row_idx * N_CHUNKS + chunk_idx, tl.sum(tl.exp(logits - c), 0))


@triton.jit(do_not_specialize=["n_cols"])
def _log_softmax_write(
    logits_ptr, logits_row_stride, max_ptr, sumexp_ptr, out_ptr, out_row_stride, n_cols,
    N_CHUNKS: tl.constexpr, CHUNKS_POW2: tl.constexpr, BLOCK_SIZE: tl.constexpr,
):
    row_idx = tl.program_id(0).to(tl.int64)
    chunk_idx = tl.program_id(1)
    # Combine the chunks: every chunk holds at least one real column, so every chunk max is finite.
    chunks = tl.arange(0, CHUNKS_POW2)
    chunk_mask = chunks < N_CHUNKS
    chunk_max = tl.load(max_ptr + row_idx * N_CHUNKS + chunks, mask=chunk_mask, other=-float("inf"))
    chunk_sum = tl.load(sumexp_ptr + row_idx * N_CHUNKS + chunks, mask=chunk_mask, other=0.0)
    row_max = tl.max(chunk_max, 0)
    log_z = tl.log(tl.sum(tl.where(chunk_mask, chunk_sum * tl.exp(chunk_max - row_max), 0.0), 0))
    col_offsets = chunk_idx * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)
    mask = col_offsets < n_cols
    logits = tl.load(logits_ptr + row_idx * logits_row_stride + col_offsets, mask=mask, other=0.0).to(tl.float32)
    # Stay in log space: (x - max) - log(sum exp(x - max)); subtracting max + log_z in one go would
    # round the shift at the magnitude of the logits.
    out = (logits - row_max) - log_z
    tl.store(out_ptr + row_idx * out_row_stride + col_offsets, out.to(out_ptr.dtype.element_ty), mask=mask)


def log_softmax(input: torch.Tensor) -> torch.Tensor:
    input = input.contiguous()
    n_rows, n_cols = input.shape
    BLOCK_SIZE = min(MAX_FUSED_SIZE, triton.next_power_of_2(n_cols))
    n_chunks = triton.cdiv(n_cols, BLOCK_SIZE)
    chunk_max = torch.empty((n_rows, n_chunks), dtype=torch.float32, device=input.device)
    chunk_sumexp = torch.empty((n_rows, n_chunks), dtype=torch.float32, device=input.device)
    out = torch.empty_like(input)
    grid = (n_rows, n_chunks)
    _chunked_max_sumexp[grid](input, input.stride(0), chunk_max, chunk_sumexp, n_cols, N_CHUNKS=n_chunks, BLOCK_SIZE=BLOCK_SIZE)
    _log_softmax_write[grid](
        input, input.stride(0), chunk_max, chunk_sumexp, out, out.stride(0), n_cols,
        N_CHUNKS=n_chunks, CHUNKS_POW2=triton.next_power_of_2(n_chunks), BLOCK_SIZE=BLOCK_SIZE,
    )
    return out


def kernel(x: torch.Tensor) -> torch.Tensor:
    return log_softmax(x)
