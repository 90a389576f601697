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
    "grade": "gym.grader",
    "GradeResult": "gym.result",
    "Status": "gym.result",
    "Task": "gym.task_model",
    "find_task": "gym.task_loader",
    "discover": "gym.task_loader",
    "render_prompt": "gym.prompt",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(f"module 'gym' has no attribute {name!r}")
