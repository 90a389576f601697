"""Trick: Helion's raw-Triton escape hatch running host Python. `hl.inline_triton` pastes a snippet into the generated jit function; under the CPU interpreter the snippet is plain Python, and this one reaches the numpy array behind a block (`.handle.data`) and writes it on the host (here it writes back what exp gave: any host computation would fit there). The snippet lives only in Helion's generated module, never in the submission's own Triton.

expect: compile_error, rejected
tasks: l1/softmax
runtime: yes
"""

import torch
import helion
import helion.language as hl


@helion.kernel(config=helion.Config(block_sizes=[4], num_warps=4), static_shapes=True)
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    n, _m = x.size()
    out = torch.empty_like(x)
    for tile_n in hl.tile(n):
        block = x[tile_n, :].to(torch.float32)
        top = torch.amax(block, dim=1, keepdim=True)
        ex = hl.inline_triton(
            """
            v = tl.exp({0} - {1})
            v.handle.data[...] = v.handle.data * 1.0
            v
            """,
            args=(block, top),
            output_like=block,
        )
        out[tile_n, :] = (ex / ex.sum(dim=1, keepdim=True)).to(x.dtype)
    return out


def kernel(x: torch.Tensor) -> torch.Tensor:
    return softmax_rows(x)
