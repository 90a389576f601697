"""Vector addition after Triton's first tutorial, with an autotuned block size.

Style: Triton tutorials
Task: l1/vector_add
Idioms: itertools.product autotune configs, do_not_specialize, torch.cuda.is_available() branch
"""

import itertools

import torch
import triton
import triton.language as tl

# A GPU gets the block sizes the tutorial sweeps; the CPU interpreter gets two small ones.
if torch.cuda.is_available():
    BLOCK_SIZES, NUM_WARPS = (1024, 4096), (4, 8)
else:
    BLOCK_SIZES, NUM_WARPS = (256, 1024), (1, 4)


def get_autotune_config():
    return [triton.Config({"BLOCK_SIZE": block}, num_warps=warps) for block, warps in itertools.product(BLOCK_SIZES, NUM_WARPS)]


@triton.autotune(configs=get_autotune_config(), key=["n_elements"])
@triton.jit(do_not_specialize=["n_elements"])
def add_kernel(
    x_ptr,  # *Pointer* to first input vector.
    y_ptr,  # *Pointer* to second input vector.
    output_ptr,  # *Pointer* to output vector.
    n_elements,  # Size of the vector.
    BLOCK_SIZE: tl.constexpr,  # Number of elements each program should process.
):
    # There are multiple 'programs' processing different data; identify which one we are.
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    # Guard memory operations against out-of-bounds accesses.
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    output = torch.empty_like(x)
    n_elements = output.numel()
    # The launch grid depends on the config the autotuner picks.
    grid = lambda meta: (triton.cdiv(n_elements, meta["BLOCK_SIZE"]),)
    add_kernel[grid](x, y, output, n_elements)
    return output


def kernel(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return add(x, y)
