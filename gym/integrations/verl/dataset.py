"""A suite as verl's parquet rows: `suite_rows` (the rows, as models) and `write_parquet` (pyarrow, which verl
brings, imported only there)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from gym.extras import require
from gym.integrations.episodes import ChatMessage, suite_prompts
from gym.integrations.verl.common import INTERACTION_NAME, TOOL_NAME

# `data_source` of the rows (suffixed with the suite: "kernel_gym/l1"); verl groups validation metrics by it.
DATA_SOURCE = "kernel_gym"
# verl's agent loops: one generation, or generation interleaved with tool calls.
SINGLE_TURN_AGENT = "single_turn_agent"
TOOL_AGENT = "tool_agent"


class RewardSpec(BaseModel):
    """verl's `reward_model` column; the naive reward manager passes `ground_truth` to compute_score."""

    model_config = ConfigDict(extra="forbid")

    style: str = Field(default="rule", description="verl's reward style: rule-based.")
    ground_truth: str = Field(description="The task id (compute_score reads extra_info.task_id first).")


class RowInfo(BaseModel):
    """verl's `extra_info` column: passed to compute_score; `tools_kwargs` to the tool's create(), `interaction_kwargs`
    to the interaction's start_interaction() (verl <= 0.7)."""

    model_config = ConfigDict(extra="forbid")

    index: int = Field(description="The row's position in its file.")
    split: str = Field(description='"train" or "val".')
    task_id: str = Field(description="The task the row is about (compute_score reads it).")
    suite: str = Field(description="The task's suite.")
    title: str = Field(description="The task's one-line title.")
    task_split: str = Field(default="train", description="The task's stable split in the gym: train, val or test.")
    metadata: dict[str, object] = Field(default_factory=dict, description="The task's metadata for curricula (gym.schema.task_metadata.TaskMetadata).")
    tools_kwargs: dict[str, dict[str, dict[str, str]]] = Field(description='{"submit_kernel": {"create_kwargs": {"task_id": ...}}}')
    interaction_kwargs: dict[str, str] = Field(description='{"name": "kernel_gym", "task_id": ...}: `name` selects the interaction of interaction_config.yaml.')


class VerlRow(BaseModel):
    """One prompt row of verl's RLHFDataset."""

    model_config = ConfigDict(extra="forbid")

    data_source: str = Field(description='"kernel_gym/<suite>"; verl groups validation metrics by it.')
    agent_name: str = Field(description="verl's agent loop for the row: single_turn_agent or tool_agent.")
    prompt: list[ChatMessage] = Field(description="The chat verl's rollout starts from: the task's prompt as one user message.")
    ability: str = Field(default="triton_kernels", description="verl's task category label.")
    reward_model: RewardSpec = Field(description="The reward style and ground truth (the task id).")
    extra_info: RowInfo = Field(description="What compute_score and the tool read about the row.")


SINGLE_TURN_INSTRUCTIONS = "## How to answer\n\nReply with the whole Python file in one ```python fenced block; it is graded once."


def multi_turn_instructions(max_attempts: int) -> str:
    # One wording for the tool (a call) and the interaction (a fenced block in the reply), so one dataset serves both.
    return (
        f"## How to answer\n\nSubmit the whole Python file with the `{TOOL_NAME}` tool (argument `code`) when it is offered, else as one "
        "```python fenced block in your reply. Each submission is answered with its grade and feedback; fix the kernel and submit again "
        f"until it passes. You have {max_attempts} submission(s); stop once it passes."
    )


def suite_rows(
    suite: str,
    *,
    task_ids: list[str] | None = None,
    multi_turn: bool = False,
    split: str = "train",
    max_attempts: int = 3,
    task_split: str | None = None,
    dsl: str = "triton",
) -> list[VerlRow]:
    """The rows of a suite's tasks (or of just `task_ids`; only the gym's `task_split` train / val / test when
    given, while `split` is verl's label for the file) for verl: one user prompt each, the task id in
    `extra_info` (also as the tool's create_kwargs and the interaction's kwargs) and `reward_model.ground_truth`,
    `agent_name` tool_agent when `multi_turn` (the agent loop of both the tool and the interaction)."""
    instructions = multi_turn_instructions(max_attempts) if multi_turn else SINGLE_TURN_INSTRUCTIONS
    rows = []
    for index, task in enumerate(suite_prompts(suite, task_ids, task_split, dsl)):
        rows.append(
            VerlRow(
                data_source=f"{DATA_SOURCE}/{task.suite}",
                agent_name=TOOL_AGENT if multi_turn else SINGLE_TURN_AGENT,
                prompt=[ChatMessage(role="user", content=f"{task.prompt.rstrip()}\n\n{instructions}\n")],
                reward_model=RewardSpec(ground_truth=task.task_id),
                extra_info=RowInfo(
                    index=index,
                    split=split,
                    task_id=task.task_id,
                    suite=task.suite,
                    title=task.title,
                    task_split=task.split,
                    metadata=task.metadata,
                    tools_kwargs={TOOL_NAME: {"create_kwargs": {"task_id": task.task_id}}},
                    interaction_kwargs={"name": INTERACTION_NAME, "task_id": task.task_id},
                ),
            )
        )
    return rows


def write_parquet(
    suite: str,
    path: str | Path,
    *,
    task_ids: list[str] | None = None,
    multi_turn: bool = False,
    split: str = "train",
    max_attempts: int = 3,
    dsl: str = "triton",
) -> Path:
    """Write `suite_rows(...)` to a parquet file (pyarrow, which verl brings) and return its path."""
    require("verl", "gym.integrations.verl.write_parquet", "pyarrow")
    import pyarrow as pa
    import pyarrow.parquet as pq

    rows = suite_rows(suite, task_ids=task_ids, multi_turn=multi_turn, split=split, max_attempts=max_attempts, dsl=dsl)
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    pq.write_table(pa.Table.from_pylist([row.model_dump() for row in rows]), out)
    return out
