"""Speed: NaN-propagating max/min reductions (Helion's `amax`/`amin`) reduced by numpy at once.

Triton's interpreter reduces `tl.max` / `tl.min` with numpy, but any other combine
function element by element in Python (`ReduceOps.generic_reduce`). Helion lowers
`torch.amax` / `amin` (every softmax, every row max) to `tl.reduce(x, dim,
_maximum_propagate_nan)` from `helion.runtime.triton.helpers`, whose combine is one
`tl.maximum(a, b, propagate_nan=tl.PropagateNan.ALL)`: under the interpreter that made
a Helion softmax about 15x slower than a Triton one. Here a reduction whose combine
function is Helion's own `_maximum_propagate_nan` / `_minimum_propagate_nan` (by name,
compiled from the installed Helion's helpers file) runs as `numpy.max` / `numpy.min`, which give the same value: the
maximum (minimum), NaN when any element is NaN. Every other combine function runs as
before. Installed with the other interpreter fixes (CPU only, worker and witness).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from typing import Any

import numpy as np

# Helion's combine functions this fast path stands in for, by name, with the numpy reduction of each.
HELPERS_MODULE = "helion.runtime.triton.helpers"
COMBINES: dict[str, Callable[..., Any]] = {"_maximum_propagate_nan": np.max, "_minimum_propagate_nan": np.min}


# The installed helpers module's file (found once, without importing it); "" when Helion is not installed.
_HELPERS_FILE: list[str] = []


def _helpers_file() -> str:
    if not _HELPERS_FILE:
        try:
            spec = importlib.util.find_spec(HELPERS_MODULE)
        except (ImportError, ValueError):
            spec = None
        origin = spec.origin if spec is not None and spec.origin else ""
        _HELPERS_FILE.append(os.path.realpath(origin) if origin else "")
    return _HELPERS_FILE[0]


def numpy_reduction(combine_fn: Any) -> Callable[..., Any] | None:
    """numpy's reduction for `combine_fn` when it is one of Helion's NaN-propagating combines (by name,
    compiled from the installed Helion's helpers file); None for anything else."""
    function = getattr(combine_fn, "fn", None)
    name = getattr(function, "__qualname__", None)
    code = getattr(function, "__code__", None)
    if name not in COMBINES or code is None or not _helpers_file():
        return None
    if os.path.realpath(code.co_filename) != _helpers_file():
        return None
    return COMBINES[name]


def install(setattr_: Callable[[Any, str, Any], None]) -> None:
    """Route Helion's NaN-propagating max/min reductions to numpy (see the module doc)."""
    from triton.runtime.interpreter import ReduceOps

    original = vars(ReduceOps)["apply_impl"]
    if getattr(original, "_kgym_wrapped", False):
        return

    def apply_impl(self: Any, input: Any) -> Any:
        reduction = numpy_reduction(self.combine_fn)
        if reduction is not None and len(input) == 1:
            return self.min_max(input[0], val_reduce_op=reduction, idx_reduce_op=None)
        return original(self, input)

    apply_impl._kgym_wrapped = True  # type: ignore[attr-defined]
    setattr_(ReduceOps, "apply_impl", apply_impl)
