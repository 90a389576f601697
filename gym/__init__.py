"""Kernel Gym: grade Triton kernels against PyTorch reference ops under closeness contracts.

The common entry points are re-exported lazily, so `python -m gym.worker`
imports only what the worker needs:

    import gym
    result = gym.grade("l1/softmax", "my_softmax.py")
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "grade": "gym.grading.grader",
    "GradeResult": "gym.schema.result",
    "Status": "gym.schema.result",
    "Task": "gym.tasks.model",
    "find_task": "gym.tasks.loader",
    "discover": "gym.tasks.loader",
    "render_prompt": "gym.tasks.prompt",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'gym' has no attribute {name!r}")
