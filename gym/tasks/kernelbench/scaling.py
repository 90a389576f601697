"""Scale a KernelBench problem's sizes for CPU grading, respecting its constraints.

The problem's original sizes become the benchmark shape (GPU timing). For the
public shape, the size constants are halved, largest first, until everything
one call touches (inputs, parameters, buffers, outputs) fits `PUBLIC_BUDGET`
elements; a halving the problem refuses (a channel count no longer divisible by
its groups, a kernel larger than the image, a hard-coded reshape) is undone and
that constant stays where it was. Every candidate is tried on torch's meta
device (shapes only: a GPU-scale problem costs nothing to probe).

Hidden shapes follow the integrity rule (gym.tasks.model.hidden_shape_problems):
each size gets a hidden value larger than its public one and not a power of two.
All sizes grow together by about half where the problem allows; otherwise each
size grows alone in a hidden shape of its own; a size the problem will not let
grow is exempt, with the reason recorded. Config constants (kernel sizes,
strides, paddings, dilations, groups, dims) and small values are never sizes.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.utils.flop_counter import FlopCounterMode

from gym.errors import ProblemError
from gym.tasks.kernelbench.problem import ProblemFile, forward_inputs, init_inputs, instantiate

# Everything one call touches at the public shape, in elements (64 KiB of float32: about a hundred programs of 128).
PUBLIC_BUDGET = 1 << 14
# A problem that cannot be scaled below this many elements (1 GiB of float32) is not imported: it does not fit one job.
MAX_PUBLIC = 1 << 28
# The tiny hidden shape (the cheapest trial: late calls run there), in elements.
TINY_BUDGET = 1 << 12
# Above this many times the budget, sizes are halved all together first.
COARSE_FACTOR = 64
# Values below this are never scaled (channel counts like 3, small head counts).
MIN_SIZE = 8
# Halving stops here.
FLOOR = 2

# Names of config constants: never sizes, whatever their value.
_CONFIG = re.compile(
    r"(kernel|stride|pad|dilation|group|heads|n_head|axis|patch|expand|ratio|^(num_|n_)?layers?(_\d+)?$|^(num_)?blocks?(_\d+)?$)",
    re.IGNORECASE,
)


def is_size_name(name: str, value: int) -> bool:
    """Whether a module constant is a size the scaler may change: any value of at least MIN_SIZE
    (a reduction axis, a channel count of 3 are smaller) whose name is not a config's."""
    return value >= MIN_SIZE and not _CONFIG.search(name) and name != "k"


@dataclass(frozen=True)
class Footprint:
    """What one call at some sizes touches, from a meta-device run."""

    # Elements of every input, parameter, buffer and output.
    elements: int
    # Bytes of the same, as the problem makes them (float32 mostly).
    bytes: int
    # FLOPs torch's FlopCounterMode counts for the forward (matmul and convolution families).
    flops: int


def tensors_in(values: Any) -> list[torch.Tensor]:
    """Every tensor in `values` (a tensor, or nested lists and tuples), in order."""
    if isinstance(values, torch.Tensor):
        return [values]
    if isinstance(values, (list, tuple)):
        return [item for value in values for item in tensors_in(value)]
    return []


_FOOTPRINTS: dict[tuple[int, tuple[tuple[str, int], ...]], Footprint | ProblemError] = {}


def footprint(source: str, sizes: dict[str, int], label: str) -> Footprint:
    """The footprint of one call at `sizes` (measured once per source and sizes: a recurrent
    layer on the meta device costs seconds); ProblemError naming why the problem refuses them."""
    key = (hash(source), tuple(sorted(sizes.items())))
    known = _FOOTPRINTS.get(key)
    if known is None:
        try:
            known = _measure(source, sizes, label)
        except ProblemError as error:
            known = error
        _FOOTPRINTS[key] = known
    if isinstance(known, ProblemError):
        raise ProblemError(str(known))
    return known


# A forward the meta device cannot run (data-dependent: `.item()`, `nonzero`) is measured for
# real on the CPU instead, when its inputs and weights stay below this many elements.
REAL_RUN_MAX = 1 << 27


def _reason(error: BaseException) -> str:
    return f"{type(error).__name__}: {str(error).splitlines()[0][:300] if str(error) else ''}"


def _run(module: Any, device: str) -> tuple[torch.nn.Module, list[Any], Any, int]:
    with torch.random.fork_rng(devices=[]), torch.device(device):
        torch.manual_seed(0)
        model = module.Model(*init_inputs(module))
        inputs = forward_inputs(module)
        held = sum(t.numel() for t in tensors_in(inputs) + list(model.state_dict().values()))
        if device == "cpu" and held > REAL_RUN_MAX:
            raise ProblemError(f"too large to measure on the CPU ({held} elements of inputs and weights)")
        with torch.no_grad(), FlopCounterMode(display=False) as counter:
            outputs = model(*inputs)
    return model, inputs, outputs, int(counter.get_total_flops())


def _measure(source: str, sizes: dict[str, int], label: str) -> Footprint:
    module = instantiate(source, sizes, label)
    try:
        model, inputs, outputs, flops = _run(module, "meta")
    except Exception as error:  # noqa: BLE001 - any refusal of these sizes is a reason, not a crash
        if "meta" not in str(error) and not isinstance(error, NotImplementedError):
            raise ProblemError(_reason(error)) from None
        try:
            model, inputs, outputs, flops = _run(module, "cpu")
        except ProblemError:
            raise
        except Exception as real_error:  # noqa: BLE001
            raise ProblemError(_reason(real_error)) from None
    tensors = tensors_in(inputs) + list(model.state_dict().values()) + tensors_in(outputs)
    return Footprint(elements=sum(t.numel() for t in tensors), bytes=sum(t.numel() * t.element_size() for t in tensors), flops=flops)


@dataclass
class Scaled:
    """The shapes an imported task is graded and timed at."""

    public: dict[str, int]
    hidden: list[dict[str, int]]
    bench: dict[str, int]
    # Sizes the hidden-shape rule cannot apply to, with the reason.
    exempt: dict[str, str] = field(default_factory=dict)
    # What the scaler did, for the task file.
    notes: list[str] = field(default_factory=list)


Probe = Callable[[dict[str, int]], Footprint]


def _halve(value: int) -> int:
    return max(FLOOR, value // 2 if value % 2 == 0 else (value + 1) // 2)


def scale_public(original: dict[str, int], probe: Probe, budget: int = PUBLIC_BUDGET) -> tuple[dict[str, int], list[str]]:
    """Halve sizes, largest first, until the footprint fits `budget` (or nothing more can shrink)."""
    current = dict(original)
    notes: list[str] = []
    frozen: set[str] = set()
    size = probe(current).elements
    # Far over budget: halve every size at once while the problem allows (few probes at large sizes).
    while size > budget * COARSE_FACTOR:
        trial = {name: _halve(value) for name, value in current.items()}
        if trial == current:
            break
        try:
            size = probe(trial).elements
        except ProblemError:
            break
        current = trial
    while size > budget:
        movable = [name for name in current if name not in frozen and current[name] > FLOOR]
        if not movable:
            notes.append(f"could not scale below {size} elements (budget {budget})")
            break
        name = max(movable, key=lambda key: current[key])
        trial = {**current, name: _halve(current[name])}
        try:
            size = probe(trial).elements
        except ProblemError as error:
            frozen.add(name)
            notes.append(f"{name} stays {current[name]}: halving it to {trial[name]} fails ({error})")
            continue
        current = trial
    return current, notes


def _power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def _grown(value: int) -> list[int]:
    """Larger values to try for a hidden size, most preferred first: about half as much again
    (keeping the value's factors of two, so divisibility by groups or heads survives), then
    odd neighbours; none is a power of two."""
    options = [value + value // 2, value + value // 4, value * 3, value + 1, value * 2 + 1, value * 2 - 1]
    seen: list[int] = []
    for option in options:
        if option > value and not _power_of_two(option) and option not in seen:
            seen.append(option)
    return seen


def scale_hidden(public: dict[str, int], probe: Probe, budget: int) -> tuple[list[dict[str, int]], dict[str, str], list[str]]:
    """Hidden shapes that reach past the public one in every size the problem lets grow."""
    notes: list[str] = []
    if not public:
        return [], {}, notes

    def fits(sizes: dict[str, int]) -> bool:
        try:
            return probe(sizes).elements <= budget
        except ProblemError:
            return False

    together = {name: _grown(value)[0] for name, value in public.items()}
    if fits(together):
        return [together], {}, notes
    hidden: list[dict[str, int]] = []
    exempt: dict[str, str] = {}
    for name, value in public.items():
        choice = next((option for option in _grown(value) if fits({**public, name: option})), None)
        if choice is None:
            exempt[name] = f"the problem does not run with {name} larger than {value} and not a power of two"
            notes.append(f"hidden: {name} cannot grow past {value}")
            continue
        hidden.append({**public, name: choice})
    return hidden, exempt, notes


def scale_tiny(public: dict[str, int], probe: Probe) -> dict[str, int] | None:
    """A small hidden shape with odd sizes where the problem allows (masks and tails; the
    grade's late calls run on the cheapest trial), or None when it would equal the public one."""
    small, _ = scale_public(public, probe, TINY_BUDGET)
    odd = {name: value + 1 if _power_of_two(value) and value > FLOOR else value for name, value in small.items()}
    for candidate in (odd, small):
        if candidate == public:
            continue
        try:
            probe(candidate)
        except ProblemError:
            continue
        return candidate
    return None


def scale(problem: ProblemFile, label: str, budget: int = PUBLIC_BUDGET) -> Scaled:
    """Public, hidden and bench shapes for `problem` (ProblemError when even its own sizes fail);
    `budget` is the public shape's footprint in elements."""
    sizes = {name: value for name, value in problem.sizes.items() if is_size_name(name, value)}

    def probe(candidate: dict[str, int]) -> Footprint:
        return footprint(problem.source, candidate, label)

    probe(sizes)
    public, notes = scale_public(sizes, probe, budget)
    elements = probe(public).elements
    if elements > MAX_PUBLIC:
        raise ProblemError(f"does not scale to CPU sizes: {elements} elements at the smallest sizes it runs with ({'; '.join(notes)})")
    hidden, exempt, hidden_notes = scale_hidden(public, probe, max(budget, elements) * 8)
    tiny = scale_tiny(public, probe)
    if tiny is not None and tiny not in hidden:
        hidden.append(tiny)
    return Scaled(public=public, hidden=hidden, bench=sizes, exempt=exempt, notes=notes + hidden_notes)
