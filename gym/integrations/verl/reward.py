"""verl's reward function: `compute_score`, which verl loads by `pkg://gym.integrations.verl` (the package
re-exports it), and what it alone uses.

Masking: verl's reward function returns one score per sample and has no way to drop one, so a sample whose grade
was a masked infra_error (the gym's failure, not the submission's) scores `RewardConfig.infra` (never more than a
wrong answer) and says `masked = 1.0` in its reward extra info (logged per sample; a trainer or a DAPO
`filter_groups` metric can drop it). Every sample of a task found degenerate is masked with the same score, so its
group's advantage is zero under GRPO and DAPO's group filter drops it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from gym.harness.reward import ReturnConfig, RewardConfig, episode_return, pass_floor
from gym.integrations.episodes import Turn, code_from_text
from gym.integrations.verl.common import EPISODE_FIELD, NO_CODE, TOOL_NAME, EpisodeRecord, GymSettings, episode_source
from gym.schema.result import Status

# What `status` says of an interaction episode that did not pass (verl hands the reward function its turns' rewards only).
NOT_PASSED = "not_passed"


class Score(BaseModel):
    """What `compute_score` returns (as a dict): verl takes `score` as the reward and logs the rest per sample.

    The keys never vary, since verl's reward loop reads every sample's extra info by the first one's keys."""

    model_config = ConfigDict(extra="forbid")

    score: float = Field(description="The gym's reward (`reward_for` of the grade; `RewardConfig.failed` without code).")
    acc: float = Field(description="1.0 when the kernel passed, else 0.0 (verl's accuracy metric).")
    status: str = Field(description='The grade\'s status, or "no_code" when the completion held no submission.')
    speedup: float | None = Field(description="The pass's speedup vs eager PyTorch; None when not passed or not measured.")
    attempts: int = Field(description="Submissions graded: 1 for a single turn, the episode's count for a multi-turn one.")
    task_id: str = Field(description="The task graded.")
    masked: float = Field(
        default=0.0,
        description=(
            "1.0 when the grade (or a turn of the episode) was a masked infra_error: the gym's failure, a sample to drop, "
            "scored RewardConfig.infra (never above a wrong answer); else 0.0 (a float, so verl logs it as a metric)."
        ),
    )


def interaction_scores(extra_info: Any, task_id: str) -> list[float] | None:
    """The rewards `KernelGymInteraction` gave a sample's turns, as verl (<= 0.7) passes them to the reward
    function beside the row's `interaction_kwargs` on the same task: `extra_info["turn_scores"]` (the agent
    loop's, 0.6 and 0.7), else `extra_info["rollout_reward_scores"]["user_turn_rewards"]` (the sglang
    rollout's, 0.5); None when the sample had no interaction turn."""
    info = extra_info if isinstance(extra_info, dict) else {}
    kwargs = info.get("interaction_kwargs")
    if not isinstance(kwargs, dict) or str(kwargs.get("task_id") or "").strip() != task_id:
        return None
    rollout = info.get("rollout_reward_scores")
    for scores in (info.get("turn_scores"), rollout.get("user_turn_rewards") if isinstance(rollout, dict) else None):
        if scores is None or isinstance(scores, str | bytes | dict):
            continue
        try:
            values = [float(score) for score in scores]
        except (TypeError, ValueError):
            continue
        if values:
            return values
    return None


def task_id_of(extra_info: Any, ground_truth: Any = None) -> str | None:
    """The task a sample is about: `extra_info["task_id"]`, else the tool's create_kwargs, else the interaction's
    kwargs, else a string ground truth."""
    info = extra_info if isinstance(extra_info, dict) else {}
    task_id = info.get("task_id")
    if not task_id:
        tools = info.get("tools_kwargs")
        tool = tools.get(TOOL_NAME) if isinstance(tools, dict) else None
        create = tool.get("create_kwargs") if isinstance(tool, dict) else None
        task_id = create.get("task_id") if isinstance(create, dict) else None
    if not task_id:
        interaction = info.get("interaction_kwargs")
        task_id = interaction.get("task_id") if isinstance(interaction, dict) else None
    if not task_id and isinstance(ground_truth, str) and ground_truth.strip():
        task_id = ground_truth
    return str(task_id).strip() if task_id else None


def _turn_score(task_id: str, turn: Turn) -> Score:
    grade = turn.grade
    passed = grade is not None and grade.status == Status.passed
    return Score(
        score=turn.reward,
        acc=1.0 if passed else 0.0,
        status=turn.status.value if turn.status is not None else NO_CODE,
        speedup=grade.speedup_vs_eager if passed and grade is not None else None,
        attempts=turn.attempt,
        task_id=task_id,
        masked=1.0 if turn.masked else 0.0,
    )


def compute_score(
    data_source: str | None = None,
    solution_str: str = "",
    ground_truth: Any = None,
    extra_info: dict[str, Any] | None = None,
    *,
    server_url: str | None = None,
    sandbox: str | None = None,
    reward: Mapping[str, Any] | str | None = None,
    returns: Mapping[str, Any] | str | None = None,
    discount: float | None = None,
    **_verl: Any,
) -> dict[str, Any]:
    """verl's reward function: grade the kernel in `solution_str` for the task in `extra_info["task_id"]`.

    A multi-turn sample that `KernelGymTool` graded already (`extra_info["kgym_episode"]`) scores its
    episode's return (by default its best reward; one whose model never called the tool is graded from its
    text, like a single turn). One that `KernelGymInteraction` graded (`interaction_scores`: verl's turn
    scores in `extra_info`) scores the return of its turns' rewards (`returns`, `discount`; default the best
    turn's); verl passes only the rewards, so its status is "passed" (a reward only a pass earns: at least
    `pass_floor`, e.g. `correct - speedup_weight`; under kernelbench-fast-p, `correct`: a pass faster than p)
    or "not_passed", and its speedup None. A completion without code scores `RewardConfig.failed` (status "no_code", nothing is opened);
    nothing the model wrote makes this raise. It raises ValueError when the sample names no task, and
    the gym's errors for an unknown task or an unreachable server. `server_url`, `sandbox`, `reward`
    (a RewardConfig dict or a preset's name), `returns` and `discount` come from
    `custom_reward_function.reward_kwargs`; other keywords verl adds (reward_router_address, ...) are ignored."""
    task_id = task_id_of(extra_info, ground_truth)
    if task_id is None:
        raise ValueError(f"no task id in extra_info (keys: {sorted(extra_info or {})}) or ground_truth {ground_truth!r} of a {data_source!r} sample")
    record = (extra_info or {}).get(EPISODE_FIELD)
    if isinstance(record, dict | EpisodeRecord):
        episode = EpisodeRecord.model_validate(record)
        if episode.task_id == task_id:
            return Score(
                score=episode.score,
                acc=1.0 if episode.passed else 0.0,
                status=episode.status,
                speedup=episode.speedup,
                attempts=episode.attempts,
                task_id=task_id,
                masked=1.0 if episode.masked else 0.0,
            ).model_dump()
    settings = GymSettings.from_env(
        server_url=server_url,
        sandbox=sandbox,
        reward=RewardConfig.model_validate(reward if isinstance(reward, str) else dict(reward)) if reward is not None else None,
        returns=ReturnConfig.model_validate(returns if isinstance(returns, str) else dict(returns)) if returns is not None else None,
        discount=discount,
    )
    turns = interaction_scores(extra_info, task_id)
    if turns is not None:
        floor = pass_floor(settings.reward)
        passed = max(turns) >= (floor if floor is not None else settings.reward.correct)
        score = episode_return(turns, settings.return_config)
        return Score(
            score=score, acc=1.0 if passed else 0.0, status=Status.passed.value if passed else NOT_PASSED, speedup=None, attempts=len(turns), task_id=task_id
        ).model_dump()
    text = solution_str if isinstance(solution_str, str) else str(solution_str)
    if code_from_text(text) is None:
        # Nothing to grade: no episode, no executor, no request.
        return Score(score=settings.reward.failed, acc=0.0, status=NO_CODE, speedup=None, attempts=1, task_id=task_id).model_dump()
    turn = episode_source(settings).grade_once(task_id, text)
    return _turn_score(task_id, turn).model_dump()
