"""Contract presets: a named contract graded against instead of a task's own.

`kernelbench` is KernelBench's fixed tolerance (allclose with atol = rtol =
1e-4 for float32 and 1e-2 for float16/bfloat16, its `get_tolerance_for_precision`),
and `kernelbench-v0` the 1e-2 everywhere of KernelBench v0 and v0.1, so a Kernel
Gym grade can be compared with published KernelBench numbers (`kgym grade --contract
kernelbench`, `kgym run --contract kernelbench`). A grade records the preset it
used (`GradeResult.contract_preset`); run folders and leaderboards keep grades
of different contracts apart.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gym.errors import ContractPresetError
from gym.tasks.model import Task, TaskSpec

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
