"""Trick: Helion's interpreter switch set by the submission. The worker clears HELION_* before importing Helion, but the file sets `HELION_INTERPRET=1` in os.environ at import, before its decorator builds the kernel's settings (hiding TRITON_INTERPRET for that moment, which Helion refuses alongside it on a CPU grade), so Helion runs the body eagerly in PyTorch instead of generating Triton.

expect: rejected
tasks: l1/softmax
runtime: yes
"""

import os

_triton_interpret = os.environ.pop("TRITON_INTERPRET", None)
os.environ["HELION_INTERPRET"] = "1"

import torch  # noqa: E402
import helion  # noqa: E402
import helion.language as hl  # noqa: E402


@helion.kernel(config=helion.Config(block_sizes=[4], num_warps=4), static_shapes=True)
def softmax_rows(x: torch.Tensor) -> torch.Tensor:
    n, _m = x.size()
    out = torch.empty_like(x)
    for tile_n in hl.tile(n):
        out[tile_n, :] = torch.nn.functional.softmax(x[tile_n, :].to(torch.float32), dim=1).to(x.dtype)
    return out


if _triton_interpret is not None:
    os.environ["TRITON_INTERPRET"] = _triton_interpret


def kernel(x: torch.Tensor) -> torch.Tensor:
    return softmax_rows(x)
