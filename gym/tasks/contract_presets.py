"""Contract presets: a named contract graded against instead of a task's own; and the contract an
imported task's op kind calls for, with bounds never tighter than the reference's own error.

`kernelbench` is KernelBench's fixed tolerance (allclose with atol = rtol =
1e-4 for float32 and 1e-2 for float16/bfloat16, its `get_tolerance_for_precision`),
and `kernelbench-v0` the 1e-2 everywhere of KernelBench v0 and v0.1, so a Kernel
Gym grade can be compared with published KernelBench numbers (`kgym grade --contract
kernelbench`, `kgym run --contract kernelbench`). A grade records the preset it
used (`GradeResult.contract_preset`); run folders and leaderboards keep grades
of different contracts apart.

`kind_contract(kind, output_kind, selected)` is what an importer writes for an op of that kind
(gym.tasks.metadata.op_kind_from_dispatch): integer, bool and selected outputs (every value one
of the inputs') `bitwise`; elementwise and indexing ops an `oracle` check (max-abs against the
float64 oracle) with an `allclose` sanity bound; every other kind (reductions, matmuls, matrix
functions, convolutions, normalisations, scans) an `oracle` check on the norm of the error with a
`normwise` sanity bound; always `nontrivial`. `calibrate_bounds(task, contract)` then loosens
each sanity bound, per dtype, to `CALIBRATION_MARGIN` times the distance from the reference of
a kernel as accurate as the float64 oracle (rounded to the dtype) and of honest float32 orders
(gym.contracts.spread), measured at every public and hidden shape: a float16 `cross` or a
float32 `matrix_exp` whose reference is itself that far off the truth gets a bound a more
accurate kernel passes. The `oracle` check needs no such step: its allowance is already a
multiple of the reference's own error (and of the honest spread) on each trial's inputs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from gym.errors import ContractPresetError
from gym.tasks.model import Task, TaskSpec, without_none

_KERNELBENCH_TOLERANCE = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 1e-2}
_KERNELBENCH_V0_TOLERANCE = {"float32": 1e-2, "float16": 1e-2, "bfloat16": 1e-2}


def _fixed_tolerance(tolerances: dict[str, float]) -> Callable[[TaskSpec], list[dict[str, Any]]]:
    def make(spec: TaskSpec) -> list[dict[str, Any]]:
        checks = []
        for dtype in [*spec.dtypes, *spec.gpu_only_dtypes]:
            tolerance = tolerances.get(dtype, tolerances["float32"])
            checks.append({"kind": "allclose", "rtol": tolerance, "atol": tolerance, "dtypes": [dtype]})
        return checks

    return make


PRESETS: dict[str, Callable[[TaskSpec], list[dict[str, Any]]]] = {
    "kernelbench": _fixed_tolerance(_KERNELBENCH_TOLERANCE),
    "kernelbench-v0": _fixed_tolerance(_KERNELBENCH_V0_TOLERANCE),
}


def with_contract(task: Task, preset: str) -> Task:
    """`task` with the preset's contract in place of its own."""
    make = PRESETS.get(preset)
    if make is None:
        raise ContractPresetError(f"unknown contract preset {preset!r} (known: {', '.join(sorted(PRESETS))})")
    raw = task.spec.model_dump(mode="python", exclude_none=True)
    raw["contract"] = make(task.spec)
    spec = TaskSpec.model_validate(raw)
    return task.model_copy(update={"spec": spec})


# The import's sanity bounds: a loose allclose (elementwise kinds) or normwise (the others) against the
# reference, beside the precision-fair oracle check (gym.tasks.kernelbench.importer's ORACLE_*).
SANITY_TOLERANCE = 1e-2
NORMWISE_SANITY = 1e-2
ORACLE_FACTOR = 8.0
ORACLE_RELATIVE_FLOOR = 2.0**-17
# Kinds whose outputs are compared element by element (the others by the norm of the error).
ELEMENTWISE_KINDS = frozenset({"elementwise", "indexing"})
# A sanity bound is at least this many times the distance of an as-accurate-as-the-oracle kernel from the reference.
CALIBRATION_MARGIN = 4.0
# A sanity bound past this (allclose rtol = atol, normwise eps) says nothing: an importer leaves that dtype out
# (a float16 or bfloat16 variant whose reference is that far off the truth), except the task's first dtype.
MAX_SANITY_BOUND = 1.0
# Honest float32 re-evaluations (gym.contracts.spread) measured per shape and dtype.
CALIBRATION_HONEST = 2


def kind_contract(kind: str, output_kind: str, selected: bool) -> list[dict[str, Any]]:
    """The contract an imported op of `kind` calls for (see the module docstring)."""
    if output_kind != "float" or selected:
        return [{"kind": "bitwise"}, {"kind": "nontrivial"}]
    if kind in ELEMENTWISE_KINDS:
        return [
            {"kind": "oracle", "factor": ORACLE_FACTOR, "relative_floor": ORACLE_RELATIVE_FLOOR, "metric": "max_abs"},
            {"kind": "allclose", "rtol": SANITY_TOLERANCE, "atol": SANITY_TOLERANCE},
            {"kind": "nontrivial"},
        ]
    return [
        {"kind": "oracle", "factor": ORACLE_FACTOR, "relative_floor": ORACLE_RELATIVE_FLOOR, "metric": "norm"},
        {"kind": "normwise", "eps": NORMWISE_SANITY},
        {"kind": "nontrivial"},
    ]


def nice_bound(value: float) -> float:
    """The smallest of 1, 2 or 5 times a power of ten at or above `value` (stable bytes in task files)."""
    if value <= 0 or not math.isfinite(value):
        return value
    exponent = math.floor(math.log10(value))
    for step in (1.0, 2.0, 5.0, 10.0):
        candidate = float(f"{step * 10.0**exponent:.3g}")
        if candidate >= value * (1 - 1e-12):
            return candidate
    return float(f"{10.0 ** (exponent + 1):.3g}")


def _allclose_need(candidate: Any, expected: Any) -> float:
    """The rtol = atol an allclose needs for `candidate` against `expected` (finite positions of both)."""
    import torch

    x, y = candidate.double(), expected.double()
    finite = torch.isfinite(x) & torch.isfinite(y)
    if not bool(finite.any()):
        return 0.0
    return float(((x - y).abs() / (1 + y.abs()))[finite].max())


def _normwise_need(candidate: Any, expected: Any) -> float:
    """The eps a normwise check needs for `candidate` against `expected`."""
    from gym.contracts.norms import relative_norm_error

    figure = relative_norm_error(candidate, expected)
    return figure if math.isfinite(figure) else 0.0


def reference_distances(task: Task, dtype_name: str, honest: int = CALIBRATION_HONEST) -> dict[str, float]:
    """At `dtype_name`, over the task's public and hidden shapes (their first seeds): the largest
    distance from the reference of the float64 oracle rounded to the dtype and of `honest` honest
    float32 evaluations (gym.contracts.spread), as the allclose (rtol = atol) and normwise figures
    they would need; {} when the reference does not run at that dtype."""
    import torch

    from gym.contracts.spread import honest_evaluations
    from gym.tasks.inputs import generate_inputs, public_seed
    from gym.tasks.references import oracle_outputs, reference_outputs
    from gym.worker.dtypes import dtype_from_name

    dtype = dtype_from_name(dtype_name)
    shapes = [("public", index, shape) for index, shape in enumerate(task.spec.shapes.public)]
    shapes += [("hidden", index, shape) for index, shape in enumerate(task.spec.shapes.hidden)]
    needs = {"allclose": 0.0, "normwise": 0.0}
    cpu = torch.device("cpu")
    for label, index, shape in shapes:
        try:
            inputs = generate_inputs(task, shape, dtype, public_seed(task.id, dtype_name, label, index), cpu)
            expected, _ = reference_outputs(task, inputs, shape)
            oracle = oracle_outputs(task, inputs, shape)

            def evaluate(args: dict[str, Any], shape: dict[str, int] = shape) -> list[Any]:
                return reference_outputs(task, args, shape)[0]

            others = honest_evaluations(evaluate, inputs, count=honest) if honest else []
        except Exception:  # noqa: BLE001 - no reference at this dtype here: nothing to calibrate on
            return {}
        for position, reference in enumerate(expected):
            if not reference.dtype.is_floating_point or position >= len(oracle):
                continue
            candidates = [oracle[position].to(reference.dtype)]
            candidates += [outputs[position] for outputs in others if position < len(outputs) and outputs[position].shape == reference.shape]
            for candidate in candidates:
                if candidate.shape != reference.shape:
                    continue
                needs["allclose"] = max(needs["allclose"], _allclose_need(candidate, reference))
                needs["normwise"] = max(needs["normwise"], _normwise_need(candidate, reference))
    return needs


class Calibration(NamedTuple):
    """What calibrate_bounds found: the contract with its loosened bounds, a note per bound, and the
    dtypes past MAX_SANITY_BOUND (the reference there is so far off the truth that no bound says anything)."""

    contract: list[dict[str, Any]]
    notes: list[str]
    unbounded: list[str]


def calibrate_bounds(task: Task, contract: list[dict[str, Any]], honest: int = CALIBRATION_HONEST) -> Calibration:
    """`contract` (a task document's list) with each allclose and normwise sanity check loosened,
    for each of the task's dtypes where the reference's own distance needs it, to CALIBRATION_MARGIN
    times that distance (nice_bound); one note per loosened bound, for the task's record; and the
    dtypes whose bound would pass MAX_SANITY_BOUND."""
    sanity = [check for check in contract if check.get("kind") in ("allclose", "normwise") and "dtypes" not in check]
    if not sanity:
        return Calibration(contract, [], [])
    dtypes = [*task.spec.dtypes, *task.spec.gpu_only_dtypes]
    loosened: dict[str, dict[str, float]] = {}
    notes: list[str] = []
    unbounded: list[str] = []
    for dtype_name in dtypes:
        needs = reference_distances(task, dtype_name, honest)
        for check in sanity:
            kind = check["kind"]
            current = float(check["eps"] if kind == "normwise" else max(check.get("rtol") or 0.0, check.get("atol") or 0.0))
            need = needs.get(kind, 0.0) * CALIBRATION_MARGIN
            if need > current:
                bound = nice_bound(need)
                loosened.setdefault(dtype_name, {})[kind] = bound
                if bound > MAX_SANITY_BOUND and dtype_name not in unbounded:
                    unbounded.append(dtype_name)
                notes.append(
                    f"{dtype_name} {kind} bound {bound:g}: the reference is {needs[kind]:.3g} from a kernel as accurate as the float64 oracle "
                    f"(or an honest float32 order), x{CALIBRATION_MARGIN:g}"
                )
    if not loosened:
        return Calibration(contract, [], [])
    result: list[dict[str, Any]] = []
    for check in contract:
        if check not in sanity:
            result.append(check)
            continue
        kind = check["kind"]
        plain = [name for name in dtypes if kind not in loosened.get(name, {})]
        if plain:
            result.append({**check, "dtypes": plain})
        for name in dtypes:
            calibrated_bound = loosened.get(name, {}).get(kind)
            if calibrated_bound is None:
                continue
            if kind == "normwise":
                result.append({**check, "eps": calibrated_bound, "dtypes": [name]})
            else:
                result.append({**check, "rtol": calibrated_bound, "atol": calibrated_bound, "dtypes": [name]})
    return Calibration(result, notes, unbounded)


def without_dtypes(document: dict[str, Any], dropped: list[str]) -> dict[str, Any]:
    """A task document without the dtypes `dropped` (its lists and every check scoped to them)."""
    contract = []
    for check in document["contract"]:
        scoped = check.get("dtypes")
        if scoped is None:
            contract.append(check)
        elif kept := [name for name in scoped if name not in dropped]:
            contract.append({**check, "dtypes": kept})
    result = {**document, "contract": contract}
    for key in ("dtypes", "gpu_only_dtypes"):
        if key in document:
            result[key] = [name for name in document[key] if name not in dropped]
    return result


def calibrated_document(document: dict[str, Any], folder: Path) -> dict[str, Any]:
    """An importer's task document with its sanity bounds calibrated (calibrate_bounds) and the
    notes added to its `[kernelbench] scaling` record; a dtype past MAX_SANITY_BOUND other than the
    task's first is left out (said in the record); its problem file must already be in `folder`."""
    from gym.tasks.paths import references_dir

    task = Task(spec=TaskSpec.model_validate(without_none(document)), folder=folder.resolve(), references_dir=references_dir().resolve())
    contract, notes, unbounded = calibrate_bounds(task, document["contract"])
    if not notes:
        return document
    dropped = [name for name in unbounded if name != task.spec.dtypes[0]]
    if dropped:
        notes.append(f"left out {', '.join(dropped)}: the reference there is too far from the truth for any bound to say something")
    origin = dict(document["kernelbench"])
    origin["scaling"] = "; ".join(part for part in [origin.get("scaling", ""), *notes] if part)
    return without_dtypes({**document, "contract": contract, "kernelbench": origin}, dropped)
