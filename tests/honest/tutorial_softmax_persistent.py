"""Fused softmax after Triton's tutorial: a persistent grid of programs striding over the rows.

Style: Triton tutorials
Task: l1/softmax
Idioms: persistent kernel (grid = number of SMs, loop over rows), torch.cuda.is_available() branch, a parameter called input
"""

import torch
import triton
import triton.language as tl

if torch.cuda.is_available():
    properties = torch.cuda.get_device_properties(torch.cuda.current_device())
    NUM_SM = properties.multi_processor_count
    NUM_STAGES = 4 if properties.major >= 8 else 2
else:
    # Triton's CPU interpreter runs programs one after another: a handful is plenty.
    NUM_SM = 4
    NUM_STAGES = 1


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols, BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    # starting row of the program
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        # The stride represents how much we need to increase the pointer to advance 1 row
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        # Load the row into SRAM, using a mask since BLOCK_SIZE may be > than n_cols
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float("inf")).to(tl.float32)
        # Subtract maximum for numerical stability
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        # Write back output to DRAM
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        tl.store(output_ptrs, softmax_output.to(output_ptr.dtype.element_ty), mask=mask)


def softmax(input: torch.Tensor) -> torch.Tensor:
    n_rows, n_cols = input.shape
    # The block size of each loop iteration is the smallest power of two greater than the number of columns in `x`
    BLOCK_SIZE = triton.next_power_of_2(n_cols)
    num_warps = 8 if BLOCK_SIZE >= 2048 else 4
    y = torch.empty_like(input)
    num_programs = min(NUM_SM, n_rows)
    softmax_kernel[(num_programs, 1, 1)](
        y, input, input.stride(0), y.stride(0), n_rows, n_cols, BLOCK_SIZE=BLOCK_SIZE, num_stages=NUM_STAGES, num_warps=num_warps
    )
    return y


def kernel(x: torch.Tensor) -> torch.Tensor:
    return softmax(x.contiguous())
