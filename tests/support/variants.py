"""Wrong variants of an honest solution: each must fail its task's grade."""

from __future__ import annotations

from tests.support.mutations import off_by_one_masks

_WRAP = """

_honest_kernel = kernel


def _reshape(result, make):
    if isinstance(result, tuple):
        return tuple(make(item) for item in result)
    return make(result)
"""

ZEROS = (
    _WRAP
    + """

def kernel(*args):
    return _reshape(_honest_kernel(*args), torch.zeros_like)
"""
)

PASSTHROUGH = (
    _WRAP
    + """

def kernel(*args):
    first = next(arg for arg in args if isinstance(arg, torch.Tensor))

    def passed_through(item):
        if first.numel() == item.numel():
            return first.reshape(item.shape).to(item.dtype).clone()
        return first.clone()

    return _reshape(_honest_kernel(*args), passed_through)
"""
)


def zeros_variant(solution_source: str) -> str:
    """Runs the real kernel, then returns zeros of the same structure."""
    return solution_source + ZEROS


def passthrough_variant(solution_source: str) -> str:
    """Returns the first tensor input in place of every output."""
    return solution_source + PASSTHROUGH


def off_by_one_variant(solution_source: str) -> str:
    mutated = off_by_one_masks(solution_source)
    if mutated == solution_source:
        raise AssertionError("the off-by-one mutation changed nothing: masks must be `x < bound` on lines mentioning mask")
    return mutated


VARIANTS = {
    "zeros": zeros_variant,
    "passthrough": passthrough_variant,
    "off_by_one_mask": off_by_one_variant,
}
