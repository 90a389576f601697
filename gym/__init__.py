"""Kernel Gym: grade Triton kernels against PyTorch reference ops under closeness contracts.

The common entry points are re-exported lazily (gym.lazy), so `import gym`
imports nothing heavy until one is used:

    import gym
    result = gym.grade("l1/softmax", "my_softmax.py")
"""

from __future__ import annotations

from gym.lazy import lazy_exports

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


__getattr__ = lazy_exports(__name__, _EXPORTS)
