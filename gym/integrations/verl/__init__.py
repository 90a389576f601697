"""Kernel Gym for verl (0.5 and later): a reward function, a multi-turn interaction and tool, and a dataset builder.

Single turn: verl's reward loop calls `compute_score(data_source=, solution_str=, ground_truth=, extra_info=)`
once per sample; the code in the completion's last ```python block is graded and the gym's own reward
(`gym.harness.reward.reward_for`) comes back as `{"score": ..., "acc": ..., "status": ..., ...}`:

    reward.custom_reward_function.path=pkg://gym.integrations.verl reward.custom_reward_function.name=compute_score

Multi-turn, two ways (one dataset serves both: the rows carry the tool's and the interaction's kwargs):

- `KernelGymTool` (verl >= 0.7, which has `verl.tools.base_tool`): a `BaseTool` named `submit_kernel`.
  Every call grades the code, answers with the grade and its feedback, and records the episode in the
  sample's extra fields, where `compute_score` finds it (`extra_info["kgym_episode"]`) and returns its
  best reward without grading again:

      actor_rollout_ref.rollout.multi_turn.enable=True
      actor_rollout_ref.rollout.multi_turn.tool_config_path=examples/verl/tool_config.yaml

- `KernelGymInteraction` (verl <= 0.7; verl 0.8 removed `verl.interactions`): a `BaseInteraction` that
  grades the code in each assistant reply and answers, as the next user turn, the grade and its feedback,
  until a pass or `max_attempts`. Each turn's reward goes to verl's turn scores, which reach
  `compute_score` in `extra_info`, so it scores the episode's best turn without grading again:

      actor_rollout_ref.rollout.multi_turn.enable=True
      actor_rollout_ref.rollout.multi_turn.interaction_config_path=examples/verl/interaction_config.yaml

Where grades run: in this process (sandbox `KGYM_SANDBOX`, default bwrap), or by the `kgym serve` at
`KGYM_SERVER_URL` (token `KGYM_SERVE_TOKEN`), which is how many reward workers share one grading
pool (`kgym serve --executor ray`). verl passes only the function, so these settings come from the
environment, or from `custom_reward_function.reward_kwargs` (`server_url`, `sandbox`, `reward`, `returns`,
`discount`) and the tool's and the interaction's `config:` (`GymSettings`). One `EpisodeSource` per setting
and process, made on first use under a lock; calls from many threads at once are safe.

`reward` is a RewardConfig (a dict) or a preset's name ("kernrl", "kernelgym", "kernelbench-fast-1.5", ...),
and a multi-turn episode scores its return: the best turn's reward by default, or `returns: last`,
`returns: discounted` (`discount: 0.4`), `returns: kevin` (discounted, 0.4) (gym.harness.reward.ReturnConfig).

Data: `write_parquet("l1", "train.parquet", multi_turn=True)` writes the rows verl's `RLHFDataset`
reads (`data_source`, `prompt` as a chat list, `ability`, `reward_model.ground_truth`, `extra_info`
with the task id, the tool's `create_kwargs` and the `interaction_kwargs`, `agent_name`); `examples/verl/`
has the rest.

Importing this module does not import verl (only `KernelGymTool` and `KernelGymInteraction` need it,
and are made on first access): the reward function and the dataset builder work wherever the gym does.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from gym.errors import InteractionUnavailable

# `X as X`: public names the module had beside __all__, re-exported (KernelGymError among them, which callers catch here).
from gym.errors import KernelGymError as KernelGymError
from gym.integrations.verl.common import ATTEMPTS_VARIABLE as ATTEMPTS_VARIABLE
from gym.integrations.verl.common import (
    EPISODE_FIELD,
    INTERACTION_NAME,
    TOOL_NAME,
    EpisodeRecord,
    GymSettings,
    close_sources,
    episode_source,
)
from gym.integrations.verl.common import NO_CODE as NO_CODE
from gym.integrations.verl.common import SANDBOX_VARIABLE as SANDBOX_VARIABLE
from gym.integrations.verl.dataset import DATA_SOURCE, VerlRow, suite_rows, write_parquet
from gym.integrations.verl.dataset import SINGLE_TURN_AGENT as SINGLE_TURN_AGENT
from gym.integrations.verl.dataset import SINGLE_TURN_INSTRUCTIONS as SINGLE_TURN_INSTRUCTIONS
from gym.integrations.verl.dataset import TOOL_AGENT as TOOL_AGENT
from gym.integrations.verl.dataset import RewardSpec as RewardSpec
from gym.integrations.verl.dataset import RowInfo as RowInfo
from gym.integrations.verl.dataset import multi_turn_instructions as multi_turn_instructions
from gym.integrations.verl.interaction import OVER as OVER
from gym.integrations.verl.interaction import InteractionTurn, _define_interaction
from gym.integrations.verl.interaction import last_assistant_text as last_assistant_text
from gym.integrations.verl.reward import NOT_PASSED as NOT_PASSED
from gym.integrations.verl.reward import Score, compute_score, task_id_of
from gym.integrations.verl.reward import interaction_scores as interaction_scores
from gym.integrations.verl.tool import _define_tool, submit_kernel_schema

# The roles live in submodules, re-exported here: `common` (the names, GymSettings, the episode sources, one
# trajectory's episode), `reward` (compute_score), `tool` (KernelGymTool), `interaction` (KernelGymInteraction),
# `dataset` (suite_rows, write_parquet). None imports verl or pyarrow at import time.
__all__ = [
    "DATA_SOURCE",
    "EPISODE_FIELD",
    "INTERACTION_NAME",
    "TOOL_NAME",
    "EpisodeRecord",
    "GymSettings",
    "InteractionTurn",
    "InteractionUnavailable",
    "Score",
    "VerlRow",
    "close_sources",
    "compute_score",
    "episode_source",
    "submit_kernel_schema",
    "suite_rows",
    "task_id_of",
    "write_parquet",
]


_LAZY: dict[str, Callable[[], type]] = {"KernelGymTool": _define_tool, "KernelGymInteraction": _define_interaction}
_LAZY_LOCK = threading.Lock()


def __getattr__(name: str) -> Any:
    # KernelGymTool and KernelGymInteraction subclass verl's classes, so they are made (importing verl) only when asked for.
    define = _LAZY.get(name)
    if define is not None:
        with _LAZY_LOCK:
            if name not in globals():
                globals()[name] = define()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
