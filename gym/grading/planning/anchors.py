"""A fusion task's anchors, called exactly as the reference calls them.

A task's `allowed_torch` (KernelBench levels 2-3: the anchor families its reference
touches) lets some compute ops stay in torch. The torch policy allows them by name;
this module makes the allowance exact: every anchor call a replay ran (as the witness
describes what it executed, `gym.worker.tape.call_signature`: overload, non-tensor
arguments, tensor shapes and dtypes) must be a call the reference makes on the same
inputs, at most as often. An anchor in another variant (`addmm` with other
`beta`/`alpha`, a fused-activation overload, a matrix-vector product with a ones
vector) is `torch_compute:anchor_call`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from torch.utils._python_dispatch import TorchDispatchMode

from gym.worker.tape import call_signature, packet_of
from gym.worker.torch_policy import PLUMBING_OPS

T = TypeVar("T")


class _AnchorRecorder(TorchDispatchMode):
    """Records every op the reference dispatches that is no plumbing."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: Counter[str] = Counter()

    def __torch_dispatch__(self, func: Any, types: Any, args: Any = (), kwargs: Any = None) -> Any:
        kwargs = kwargs or {}
        if packet_of(func) not in PLUMBING_OPS:
            self.calls[call_signature(func, args, kwargs)] += 1
        return func(*args, **kwargs)


def recording_anchors(run: Callable[[], T]) -> tuple[T, Counter[str]]:
    """What `run` returns, and the calls it made that are no plumbing (by `call_signature`)."""
    with _AnchorRecorder() as recorder:
        result = run()
    return result, recorder.calls


def unmatched_anchor_calls(replayed: Iterable[str], reference: Counter[str]) -> list[str]:
    """The replayed anchor calls the reference does not make (or makes fewer times), in order."""
    left = Counter(reference)
    unmatched = []
    for call in replayed:
        if left[call] > 0:
            left[call] -= 1
        else:
            unmatched.append(call)
    return unmatched
