"""Trick: compute while Helion traces. Helion runs the kernel's host code on fake tensors inside the worker's compile window, where ops on fake tensors are neither counted nor taped; a helper the host code calls is handed the fake tensor, but it reaches the real input through a module global (set by `kernel()` before the Helion call) and runs torch's softmax on it there, and the Helion kernel (re-traced on every call: `reset()`) only copies the stashed answer.

expect: rejected
tasks: l1/softmax
reason: torch_compute
runtime: yes
"""

import torch
import helion
import helion.language as hl

_STASH = {}


def _answer_now(fake):
    real = _STASH.get("x")
    if real is not None and "y" not in _STASH:
        _STASH["y"] = torch.softmax(real.to(torch.float32), dim=1).to(real.dtype)
    return fake


@helion.kernel(config=helion.Config(block_sizes=[4], num_warps=4), static_shapes=True)
def copy_rows(x: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    n, _m = x.size()
    _answer_now(x)
    out = torch.empty_like(x)
    for tile_n in hl.tile(n):
        out[tile_n, :] = src[tile_n, :]
    return out


def kernel(x: torch.Tensor) -> torch.Tensor:
    _STASH.clear()
    _STASH["x"] = x
    # The answer's buffer, filled by the helper during tracing (a real tensor from here on).
    src = torch.empty_like(x)
    copy_rows.reset()
    bound = copy_rows.bind((x, src))
    if "y" in _STASH:
        src.copy_(_STASH["y"])
    _STASH.pop("x", None)
    return bound(x, src)
