"""Hardened inputs: a heavy-tailed trial and, for tasks with a Model's state, a re-initialised one.

A task's own input generator draws from one distribution (often `torch.rand`: non-negative,
bounded, light-tailed). A kernel that is right only there (an analytical shortcut, a skipped
branch for negatives, a partial computation that rounds away) passes every trial drawn from it.
So each grade adds, beside the task's own trials (all on the trusted side, never shown):

- a **heavy-tailed** trial: the task's inputs at one shape with every floating forward input
  redrawn with heavy-tailed magnitudes (half the elements Student-t with 3 degrees of freedom,
  half Pareto with index 2.5, both at the input's own scale, times a scale mixture that lifts a
  few elements up to two decades higher) and mixed signs;
- for tasks whose kernel receives a Model's floating state (imported KernelBench, OpInfo and
  model tasks with parameters), a **re-initialised** trial: the same inputs with every floating
  state tensor redrawn around its own mean with spread max(std, |mean|, 0.1), so weights that
  default to constants (a norm's ones and zeros) are no longer constants.

Domains. A task says what an input may hold with `input_domain` in task.toml (`x = "positive"`
for a log, `"fixed"` for an input with structure such as a sorted sequence or a probability
table: it is left as the generator drew it). Tasks with an integer or boolean output (indices, counts, masks: tie-prone selections) get no
heavy-tailed trial for inputs they do not name. Inputs it does not name are probed, in order:
mixed signs, then magnitudes only; a level is kept when the reference's outputs on it are finite
wherever the task's own trial's are, the reference itself passes the task's value checks against
the oracle there, and the oracle rounded to the output dtype passes them against the reference at
a fourfold tighter tolerance (so the trial never asks more of a kernel than of the reference, and
leaves room for one that sums in another order). When
no level holds, the grade has no such trial and says which it skipped in its trial list.

API: `heavy_tailed_inputs(task, inputs, shape, seed, checks) -> HardenedInputs | None`,
`reinitialised_inputs(...)` (same), `float_state_params(task, inputs)`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from gym.contracts import CheckBase, TrialEvidence
from gym.schema.outcomes import CheckOutcome
from gym.tasks.kernelbench.runtime import state_params
from gym.tasks.model import InputDomain, Shape, Task
from gym.tasks.references import oracle_outputs, reference_outputs

DOMAINS: tuple[InputDomain, ...] = ("real", "nonnegative", "positive", "fixed")

# Tail parameters: Student-t degrees of freedom and the Pareto index (both give finite means;
# the Student-t half has a finite variance, the Pareto half an infinite third moment).
STUDENT_T_DOF = 3
PARETO_INDEX = 2.5
# The scale mixture's reach, in decades above the input's scale (most elements stay near it).
BOOST_DECADES = 2.0
# Magnitudes are capped at this many times the input's scale (a float16 input stays finite).
MAX_MAGNITUDE = 1e3
# A redrawn weight's spread is at least this (a zero bias becomes a visible one).
MIN_WEIGHT_SPREAD = 0.1
# The conditioning probe (sensitivity): inputs moved by up to this many epsilons, relatively.
PERTURBATION_ULPS = 4.0
PERTURBATION_SEED = 20261203
# A hardened trial may be at most SENSITIVITY_GROWTH times as sensitive as the trial it derives from
# (whose tolerances honest kernels are known to meet), and always up to GROWTH x FLOOR of the allowance.
SENSITIVITY_GROWTH = 2.0
SENSITIVITY_FLOOR = 0.25
# The float64 oracle rounded to the output dtype may use at most this share of a tolerance check's
# allowance against the reference (a fourfold margin): where the reference itself strays further from
# the exact answer, a kernel that only rounds differently from it could fail, so the level is dropped.
ORACLE_MARGIN = 0.25
# The smallest magnitude a "positive" input gets, in units of its scale.
POSITIVE_FLOOR = 1e-3


@dataclass
class HardenedInputs:
    """A hardened trial's inputs and what was done to them."""

    # The call's arguments by parameter name (untouched ones shared with the task's trial).
    inputs: dict[str, Any]
    # Which inputs were redrawn, and at which domain level, e.g. {"x": "real", "w": "reinit"}.
    changed: dict[str, str]

    def describe(self) -> str:
        return ", ".join(f"{name}: {level}" for name, level in self.changed.items())


def float_state_params(task: Task, inputs: dict[str, Any]) -> list[str]:
    """The kernel parameters that carry a Model's floating state (integer buffers left out)."""
    if task.spec.kernelbench is None:
        return []
    return [name for name in state_params(task) if isinstance(inputs.get(name), torch.Tensor) and inputs[name].is_floating_point()]


def _scale(tensor: torch.Tensor) -> float:
    """The input's typical magnitude (its mean absolute value; 1 when it is all zeros)."""
    if tensor.numel() == 0:
        return 1.0
    scale = float(tensor.detach().double().abs().mean())
    return scale if scale > 0 and scale == scale else 1.0


def _heavy_values(like: torch.Tensor, level: str, generator: torch.Generator) -> torch.Tensor:
    """Heavy-tailed values shaped like `like`, at its scale, signed or not by `level`."""
    shape, device = like.shape, like.device
    normal = torch.randn(shape, generator=generator, device=device, dtype=torch.float64)
    chi2 = (torch.randn((STUDENT_T_DOF, *shape), generator=generator, device=device, dtype=torch.float64) ** 2).sum(0)
    student = normal / torch.sqrt(chi2 / STUDENT_T_DOF).clamp_min(1e-12)
    uniform = torch.rand(shape, generator=generator, device=device, dtype=torch.float64).clamp_min(1e-12)
    pareto = uniform ** (-1.0 / PARETO_INDEX)
    pick = torch.rand(shape, generator=generator, device=device) < 0.5
    signs = torch.where(torch.rand(shape, generator=generator, device=device) < 0.5, -1.0, 1.0).to(torch.float64)
    # A scale mixture on top: most elements at the input's scale, a few up to BOOST_DECADES decades above it.
    boost = 10.0 ** (BOOST_DECADES * torch.rand(shape, generator=generator, device=device, dtype=torch.float64) ** 3)
    values = (torch.where(pick, student, pareto * signs) * boost).clamp(-MAX_MAGNITUDE, MAX_MAGNITUDE) * _scale(like)
    if level != "real":
        values = values.abs()
    if level == "positive":
        values = values.clamp_min(POSITIVE_FLOOR * _scale(like))
    return values.to(like.dtype)


def _reinit_values(like: torch.Tensor, generator: torch.Generator, magnitude_only: bool) -> torch.Tensor:
    """A weight redrawn around its own mean with spread max(std, |mean|, MIN_WEIGHT_SPREAD)."""
    data = like.detach().double()
    mean = float(data.mean()) if data.numel() else 0.0
    std = float(data.std()) if data.numel() > 1 else 0.0
    spread = max(std if std == std else 0.0, abs(mean), MIN_WEIGHT_SPREAD)
    values = mean + spread * torch.randn(like.shape, generator=generator, device=like.device, dtype=torch.float64)
    return (values.abs() if magnitude_only else values).to(like.dtype)


def _generator(seed: int, device: torch.device) -> torch.Generator:
    generator = torch.Generator(device=device)
    generator.manual_seed(seed)
    return generator


def _finite_where_expected(outputs: list[torch.Tensor], baseline: list[torch.Tensor]) -> bool:
    """Every floating output finite wherever the task's own trial's is (shapes as the baseline's)."""
    if len(outputs) != len(baseline):
        return False
    for output, base in zip(outputs, baseline):
        if output.shape != base.shape:
            return False
        if output.is_floating_point() and not bool((torch.isfinite(output) | ~torch.isfinite(base)).all()):
            return False
    return True


def _perturbed(inputs: dict[str, Any], seed: int) -> dict[str, Any]:
    """`inputs` with every floating tensor's elements moved by up to PERTURBATION_ULPS epsilons of
    their dtype, relatively, with random signs (what a kernel's own rounding amounts to, seen from its inputs)."""
    generator = torch.Generator(device="cpu")
    generator.manual_seed(seed)
    moved = dict(inputs)
    for name, value in inputs.items():
        if isinstance(value, torch.Tensor) and value.is_floating_point() and value.numel():
            noise = (torch.rand(value.shape, generator=generator, dtype=torch.float64) * 2 - 1).to(value.device)
            moved[name] = (value.double() * (1 + noise * PERTURBATION_ULPS * torch.finfo(value.dtype).eps)).to(value.dtype)
    return moved


def sensitivity(task: Task, inputs: dict[str, Any], shape: Shape, value_checks: list[CheckBase], expected: list[torch.Tensor]) -> float:
    """How close the reference comes to failing its own value checks when its inputs move by a few
    ULPs: the largest figure / threshold of the checks comparing its answer on perturbed inputs with
    `expected` (its answer on `inputs`). 0 where nothing moves; above 1 means a kernel that only
    rounds differently can fail (inf for a bitwise check whose bits move: float outputs under a
    bitwise contract always do, so their own trial allows it; indices that move mean near-ties)."""
    moved = _perturbed(inputs, PERTURBATION_SEED)
    outputs, _ = reference_outputs(task, moved, shape)
    oracle = oracle_outputs(task, moved, shape) if any(check.needs_oracle for check in value_checks) else None
    evidence = TrialEvidence(outputs=outputs, expected=expected, inputs=moved, oracle=oracle, value_checks=value_checks)
    worst = 0.0
    for check in value_checks:
        worst = max(worst, _used_allowance(check.compare(outputs, evidence)))
    return worst


def _used_allowance(outcome: CheckOutcome) -> float:
    """How much of its allowance a check's outcome used: figure / threshold for bounds from above, the
    missed share over the allowed miss for overlaps (bounds from below); 0 or inf without figures."""
    figure, threshold = outcome.figure, outcome.threshold
    if figure is None or threshold is None:
        return 0.0 if outcome.passed else float("inf")
    if outcome.kind == "topk_overlap":
        figure, threshold = 1.0 - figure, 1.0 - threshold
    if threshold > 0:
        return figure / threshold
    return 0.0 if figure <= 0 else float("inf")


def _reference_holds(task: Task, inputs: dict[str, Any], shape: Shape, checks: list[CheckBase], baseline: list[torch.Tensor], allowed: float) -> bool:
    """The reference runs on `inputs` and stays finite where `baseline` is, passes the value checks
    against the oracle itself, lies within ORACLE_MARGIN of the oracle rounded to its dtype, and is
    no more than `allowed` sensitive (see sensitivity)."""
    try:
        expected, _ = reference_outputs(task, inputs, shape)
        if not _finite_where_expected(expected, baseline):
            return False
        value_checks = [check for check in checks if check.compares_values]
        if not value_checks:
            return True
        oracle = oracle_outputs(task, inputs, shape) if any(check.needs_oracle for check in value_checks) else None
        evidence = TrialEvidence(outputs=expected, expected=expected, inputs=inputs, oracle=oracle, value_checks=value_checks)
        if not all(check.compare(expected, evidence).passed for check in value_checks):
            return False
        # The task's own self-checks (`nontrivial`: the inputs separate the right answer from trivial ones).
        if not all(check.evaluate(evidence).passed for check in checks if not check.compares_values and check.kind == "nontrivial"):
            return False
        if not _oracle_within_margin(task, inputs, shape, value_checks, expected, oracle):
            return False
        return sensitivity(task, inputs, shape, value_checks, expected) <= allowed
    except Exception:  # noqa: BLE001 - a reference that cannot take these inputs: this level does not apply
        return False


def _oracle_within_margin(
    task: Task, inputs: dict[str, Any], shape: Shape, value_checks: list[CheckBase], expected: list[torch.Tensor], oracle: list[torch.Tensor] | None
) -> bool:
    """The oracle rounded to each output's dtype passes every tolerance check against the reference
    using at most ORACLE_MARGIN of its allowance. Checks without a tolerance (bitwise, exact indices)
    are left to the sensitivity probe; a task whose oracle cannot run is not held to this."""
    try:
        exact = oracle if oracle is not None else oracle_outputs(task, inputs, shape)
    except Exception:  # noqa: BLE001 - no float64 answer to compare with: the other conditions decide
        return True
    if len(exact) != len(expected):
        return True
    rounded = [answer.to(reference.dtype) if reference.is_floating_point() else reference for answer, reference in zip(exact, expected)]
    evidence = TrialEvidence(outputs=rounded, expected=expected, inputs=inputs, oracle=exact, value_checks=value_checks)
    for check in value_checks:
        outcome = check.compare(rounded, evidence)
        if outcome.threshold is None or outcome.threshold <= 0 or outcome.figure is None:
            continue
        if _used_allowance(outcome) > ORACLE_MARGIN:
            return False
    return True


def allowed_sensitivity(task: Task, inputs: dict[str, Any], shape: Shape, checks: list[CheckBase], expected: list[torch.Tensor]) -> float:
    """What a hardened trial derived from the trial (`inputs`, `expected`) may show: SENSITIVITY_GROWTH
    times the trial's own sensitivity, at least SENSITIVITY_GROWTH x SENSITIVITY_FLOOR."""
    value_checks = [check for check in checks if check.compares_values]
    try:
        own = sensitivity(task, inputs, shape, value_checks, expected) if value_checks else 0.0
    except Exception:  # noqa: BLE001 - the probe itself failed on the task's own inputs: allow only the floor
        own = 0.0
    return SENSITIVITY_GROWTH * max(own, SENSITIVITY_FLOOR)


def _forward_float_params(task: Task, inputs: dict[str, Any]) -> list[str]:
    state = set(float_state_params(task, inputs))
    return [name for name, value in inputs.items() if name not in state and isinstance(value, torch.Tensor) and value.is_floating_point() and value.numel()]


def heavy_tailed_inputs(
    task: Task, inputs: dict[str, Any], shape: Shape, seed: int, checks: list[CheckBase], baseline: list[torch.Tensor]
) -> HardenedInputs | None:
    """`inputs` with the floating forward inputs redrawn heavy-tailed (see the module docstring);
    None when the task declares every one fixed or no domain level holds for the reference."""
    declared = task.spec.input_domain
    names = [name for name in _forward_float_params(task, inputs) if declared.get(name) != "fixed"]
    if not names:
        return None
    probed = [name for name in names if name not in declared]
    if probed and any(not output.is_floating_point() for output in baseline):
        # Indices, counts and masks computed from floats (top-k, argsort, routing): heavy tails
        # saturate scores into exact ties whose order no contract fixes. Only a declared domain opts in.
        names = [name for name in names if name in declared]
        probed = []
        if not names:
            return None
    allowed = allowed_sensitivity(task, inputs, shape, checks, baseline)
    for level in ("real", "nonnegative") if probed else ("declared",):
        generator = _generator(seed, inputs[names[0]].device)
        changed: dict[str, str] = {name: declared.get(name, level) for name in names}
        hardened = dict(inputs)
        for name in names:
            hardened[name] = _heavy_values(inputs[name], changed[name], generator)
        if _reference_holds(task, hardened, shape, checks, baseline, allowed):
            return HardenedInputs(hardened, changed)
    return None


def reinitialised_inputs(
    task: Task, inputs: dict[str, Any], shape: Shape, seed: int, checks: list[CheckBase], baseline: list[torch.Tensor]
) -> HardenedInputs | None:
    """`inputs` with the Model's floating state redrawn (see the module docstring); None for tasks
    without one, or when neither signed nor magnitude-only weights hold for the reference."""
    names = [name for name in float_state_params(task, inputs) if inputs[name].numel() and task.spec.input_domain.get(name) != "fixed"]
    if not names:
        return None
    allowed = allowed_sensitivity(task, inputs, shape, checks, baseline)
    for magnitude_only in (False, True):
        generator = _generator(seed, inputs[names[0]].device)
        hardened = dict(inputs)
        for name in names:
            hardened[name] = _reinit_values(inputs[name], generator, magnitude_only or task.spec.input_domain.get(name) in ("nonnegative", "positive"))
        if _reference_holds(task, hardened, shape, checks, baseline, allowed):
            return HardenedInputs(hardened, {name: "reinit-magnitude" if magnitude_only else "reinit" for name in names})
    return None
