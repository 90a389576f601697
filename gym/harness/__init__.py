"""The agent harness: `Env` (reset/step/state), rewards, agents, the run folder and
the runner behind `kgym run`. The server behind `kgym serve` and its client are `gym.serve`.

    from gym.harness import Env, Action
    env = Env()
    observation = env.reset(task_id="l1/vector_add")
    observation = env.step(Action(code=open("my_kernel.py").read()))
"""

from __future__ import annotations

from gym.lazy import lazy_exports

_EXPORTS = {
    "Env": "gym.harness.env",
    "Action": "gym.schema.episode",
    "Observation": "gym.schema.episode",
    "State": "gym.schema.episode",
    "GradeSummary": "gym.schema.episode",
    "RewardConfig": "gym.harness.reward",
    "reward_for": "gym.harness.reward",
    "run_agent": "gym.harness.runner",
}

__all__ = sorted(_EXPORTS)


__getattr__ = lazy_exports(__name__, _EXPORTS)
