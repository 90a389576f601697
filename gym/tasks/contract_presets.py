"""Contract presets: a named contract graded against instead of a task's own.

`kernelbench` is KernelBench's fixed tolerance (allclose with atol = rtol =
1e-4 for float32 and 1e-2 for float16/bfloat16), so a Kernel Gym grade can be
compared with published KernelBench numbers (`kgym grade --contract
kernelbench`, `kgym run --contract kernelbench`). A grade records the preset it
used (`GradeResult.contract_preset`); run folders and leaderboards keep grades
of different contracts apart.
"""

from __future__ import annotations

from typing import Any

from gym.errors import KernelGymError
from gym.tasks.model import Task, TaskSpec


class ContractPresetError(KernelGymError, ValueError):
    """An unknown contract preset name."""

    http_status = 400


_KERNELBENCH_TOLERANCE = {"float32": 1e-4, "float16": 1e-2, "bfloat16": 1e-2}


def _kernelbench(spec: TaskSpec) -> list[dict[str, Any]]:
    checks = []
    for dtype in [*spec.dtypes, *spec.gpu_only_dtypes]:
        tolerance = _KERNELBENCH_TOLERANCE.get(dtype, 1e-4)
        checks.append({"kind": "allclose", "rtol": tolerance, "atol": tolerance, "dtypes": [dtype]})
    return checks


PRESETS = {"kernelbench": _kernelbench}


def with_contract(task: Task, preset: str) -> Task:
    """`task` with the preset's contract in place of its own."""
    make = PRESETS.get(preset)
    if make is None:
        raise ContractPresetError(f"unknown contract preset {preset!r} (known: {', '.join(sorted(PRESETS))})")
    raw = task.spec.model_dump(mode="python", exclude_none=True)
    raw["contract"] = make(task.spec)
    spec = TaskSpec.model_validate(raw)
    return task.model_copy(update={"spec": spec})
