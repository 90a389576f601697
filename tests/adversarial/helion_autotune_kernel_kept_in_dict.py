"""Trick: autotune after all. The worker refuses a module-level Helion kernel that would autotune, and sets HELION_DISALLOW_AUTOTUNING=1; this file keeps its kernel (two configs) in a dict, where the import-time check does not look, and clears the switch from os.environ before the first call (Helion reads it when it autotunes), with in-process benchmarking (no subprocesses).

expect: runtime_error, compile_error
reason: AutotuneRefused
# (What stops it: Helion's autotune entry points themselves refuse in the worker, whatever the environment says.)
tasks: l1/vector_add
runtime: yes
"""

import os

import torch
import helion
import helion.language as hl


def _add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    out = torch.empty_like(x)
    for tile in hl.tile(x.size(0)):
        out[tile] = x[tile] + y[tile]
    return out


_KERNELS = {
    "add": helion.kernel(
        _add,
        configs=[helion.Config(block_sizes=[256], num_warps=4), helion.Config(block_sizes=[1024], num_warps=4)],
        static_shapes=True,
        autotune_benchmark_subprocess=False,
        autotune_precompile=None,
        autotune_progress_bar=False,
        autotune_ignore_errors=True,
    )
}


def kernel(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    os.environ["HELION_DISALLOW_AUTOTUNING"] = "0"
    return _KERNELS["add"](x, y)
