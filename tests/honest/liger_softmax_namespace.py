"""Softmax in Liger-Kernel's shape (single-block and multi-block forward kernels), grouped in a class namespace.

Style: Liger-Kernel
Task: l1/softmax
Idioms: class used as a namespace of jit functions, functools.lru_cache'd settings helper, torch.reshape function form
"""

import functools

import torch
import triton
import triton.language as tl

# Rows longer than this are processed in several blocks (online max and sum).
MAX_BLOCK = 512


@triton.jit
def _online_max_and_sum(x, m, d):
    # Fold one block into the running (max, sum of exp) pair.
    block_max = tl.max(x, axis=0)
    new_m = tl.maximum(m, block_max)
    d = d * tl.exp(m - new_m) + tl.sum(tl.exp(x - new_m), axis=0)
    return new_m, d


# Compiled Triton resolves only constexpr, module, dtype and jit-function globals inside a kernel,
# so the namespace holds the launched kernels and the shared helper stays at module level.
class _SoftmaxKernels:
    """The jit functions of this op; launched as _SoftmaxKernels.<name>[grid](...)."""

    @triton.jit
    def single_block_forward(Y_ptr, Y_row_stride, X_ptr, X_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
        row_id = tl.program_id(0).to(tl.int64)
        offs = tl.arange(0, BLOCK_SIZE)
        mask = offs < n_cols
        x = tl.load(X_ptr + row_id * X_row_stride + offs, mask=mask, other=-float("inf"), cache_modifier=".ca").to(tl.float32)
        m = tl.max(x, axis=0)
        e = tl.exp(x - m)
        d = tl.sum(e, axis=0)
        y = e / d
        tl.store(Y_ptr + row_id * Y_row_stride + offs, y.to(Y_ptr.dtype.element_ty), mask=mask, cache_modifier=".cs")

    @triton.jit
    def multi_block_forward(Y_ptr, Y_row_stride, X_ptr, X_row_stride, n_cols, BLOCK_SIZE: tl.constexpr):
        row_id = tl.program_id(0).to(tl.int64)
        offs = tl.arange(0, BLOCK_SIZE)
        # The first block is never empty (n_cols > BLOCK_SIZE here), so m is finite from the start.
        x = tl.load(X_ptr + row_id * X_row_stride + offs, mask=offs < n_cols, other=-float("inf")).to(tl.float32)
        m = tl.max(x, axis=0)
        d = tl.sum(tl.exp(x - m), axis=0)
        for start in tl.range(BLOCK_SIZE, n_cols, BLOCK_SIZE):
            idx = start + offs
            x = tl.load(X_ptr + row_id * X_row_stride + idx, mask=idx < n_cols, other=-float("inf")).to(tl.float32)
            m, d = _online_max_and_sum(x, m, d)
        for start in tl.range(0, n_cols, BLOCK_SIZE):
            idx = start + offs
            mask = idx < n_cols
            x = tl.load(X_ptr + row_id * X_row_stride + idx, mask=mask, other=-float("inf")).to(tl.float32)
            y = tl.exp(x - m) / d
            tl.store(Y_ptr + row_id * Y_row_stride + idx, y.to(Y_ptr.dtype.element_ty), mask=mask)


@functools.lru_cache(maxsize=None)
def _settings(n_cols: int) -> tuple[int, int, bool]:
    block = triton.next_power_of_2(n_cols)
    multi_block = block > MAX_BLOCK
    block = min(block, MAX_BLOCK)
    num_warps = 4 if block <= 1024 else 8
    return block, num_warps, multi_block


def softmax_forward(x: torch.Tensor) -> torch.Tensor:
    *batch, n_cols = x.shape
    x2d = torch.reshape(x.contiguous(), (-1, n_cols))
    n_rows = x2d.shape[0]
    y2d = torch.empty_like(x2d)
    BLOCK_SIZE, num_warps, multi_block = _settings(n_cols)
    launch = _SoftmaxKernels.multi_block_forward if multi_block else _SoftmaxKernels.single_block_forward
    launch[(n_rows,)](y2d, y2d.stride(0), x2d, x2d.stride(0), n_cols, BLOCK_SIZE=BLOCK_SIZE, num_warps=num_warps)
    return torch.reshape(y2d, x.shape)


def kernel(x: torch.Tensor) -> torch.Tensor:
    return softmax_forward(x)
