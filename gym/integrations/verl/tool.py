"""The multi-turn `submit_kernel` tool (verl >= 0.7): `KernelGymTool`, made on first access of
`gym.integrations.verl.KernelGymTool` (it subclasses verl's BaseTool, so this module imports no verl)."""

from __future__ import annotations

import asyncio
import weakref
from typing import Any
from uuid import uuid4

from gym.extras import require
from gym.integrations.episodes import code_from_text
from gym.integrations.verl.common import EPISODE_FIELD, NO_CODE, TOOL_NAME, GymSettings, _close_in_background, _Trajectory, episode_source


def submit_kernel_schema() -> dict[str, Any]:
    """The `submit_kernel` tool's schema in OpenAI function format (what the model sees)."""
    return {
        "type": "function",
        "function": {
            "name": TOOL_NAME,
            "description": "Submit your Triton kernel for grading. Returns the grade (status, speedup) and feedback on what failed; "
            "resubmit a fixed kernel until it passes or the attempts run out.",
            "parameters": {
                "type": "object",
                "properties": {
                    "code": {
                        "type": "string",
                        "description": "The whole Python file: imports, the @triton.jit kernels and `def kernel(...)` that launches them.",
                    }
                },
                "required": ["code"],
            },
        },
    }


def _code_argument(parameters: Any) -> str | None:
    code = parameters.get("code") if isinstance(parameters, dict) else None
    if not isinstance(code, str) or not code.strip():
        return None
    # A model that wraps the file in a fence inside the argument still means the file.
    return (code_from_text(code) or code) if "```" in code else code


def _define_tool() -> type:
    require("verl", "gym.integrations.verl.KernelGymTool")
    from verl.tools.base_tool import BaseTool
    from verl.tools.schemas import OpenAIFunctionToolSchema, ToolResponse

    class KernelGymTool(BaseTool):
        """The `submit_kernel` tool of verl's ToolAgentLoop (verl >= 0.7): each call grades the code and answers the grade's feedback.

        tool_config.yaml: `class_name: gym.integrations.verl.KernelGymTool`, `config: {type: native}` plus any of
        GymSettings' fields (server_url, sandbox, max_attempts, reward, timeout_s, returns, discount; the token is better left to
        KGYM_SERVE_TOKEN); an unknown key is a ValueError. A sample's task comes from
        `extra_info.tools_kwargs.submit_kernel.create_kwargs.task_id` (what `suite_rows` writes).

        verl (0.7 and 0.9 alike) creates and releases an instance around every call, so the episode belongs to the trajectory
        (the loop's AgentData, passed as `agent_data`): attempts carry over between calls, the episode closes
        when it passes or runs out of attempts (or when the trajectory is dropped), and its record goes into
        `agent_data.extra_fields["kgym_episode"]`, which reaches `compute_score` as `extra_info["kgym_episode"]`."""

        def __init__(self, config: dict[str, Any], tool_schema: OpenAIFunctionToolSchema | None = None) -> None:
            unknown = sorted(set(config) - set(GymSettings.model_fields) - {"type"})
            if unknown:
                raise ValueError(f"{TOOL_NAME} config: unknown key(s) {', '.join(unknown)} (known: type, {', '.join(GymSettings.model_fields)})")
            self.settings = GymSettings.from_env(**{key: value for key, value in config.items() if key != "type"})
            super().__init__(config, tool_schema)
            self._tasks: dict[str, str] = {}
            self._instances: dict[str, _Trajectory] = {}
            self._owned: dict[str, _Trajectory] = {}
            self._by_agent: weakref.WeakKeyDictionary[Any, _Trajectory] = weakref.WeakKeyDictionary()

        def get_openai_tool_schema(self) -> OpenAIFunctionToolSchema:
            return OpenAIFunctionToolSchema.model_validate(submit_kernel_schema())

        async def create(self, instance_id: str | None = None, **kwargs: Any) -> tuple[str, ToolResponse]:
            create_kwargs = kwargs.get("create_kwargs") or {}
            task_id = create_kwargs.get("task_id") or kwargs.get("task_id")
            if not task_id:
                raise ValueError(f"{TOOL_NAME} needs the sample's task id: extra_info.tools_kwargs.{TOOL_NAME}.create_kwargs.task_id")
            instance_id = instance_id or uuid4().hex
            self._tasks[instance_id] = str(task_id)
            return instance_id, ToolResponse()

        def _trajectory(self, instance_id: str, task_id: str, agent_data: Any) -> _Trajectory:
            trajectory: _Trajectory | None
            if agent_data is None:
                # No trajectory to hang it on: the episode lives as long as this instance.
                trajectory = self._owned.get(instance_id)
                if trajectory is None:
                    trajectory = self._owned[instance_id] = _Trajectory(episode_source(self.settings), task_id)
            else:
                trajectory = self._by_agent.get(agent_data)
                if trajectory is None or trajectory.task_id != task_id:
                    trajectory = _Trajectory(episode_source(self.settings), task_id)
                    self._by_agent[agent_data] = trajectory
                    weakref.finalize(agent_data, _close_in_background, trajectory)
            self._instances[instance_id] = trajectory
            return trajectory

        async def execute(self, instance_id: str, parameters: dict[str, Any], **kwargs: Any) -> tuple[ToolResponse, float, dict[str, Any]]:
            task_id = self._tasks.get(instance_id)
            if task_id is None:
                raise ValueError(f"no {TOOL_NAME} instance {instance_id!r}: create() it first")
            agent_data = kwargs.get("agent_data")
            trajectory = self._trajectory(instance_id, task_id, agent_data)
            code = _code_argument(parameters)
            calls = [{"function": {"name": TOOL_NAME, "arguments": {"code": code}}}] if code is not None else None
            turn, _ = await trajectory.respond("", calls)
            extra_fields = getattr(agent_data, "extra_fields", None)
            if isinstance(extra_fields, dict):
                extra_fields[EPISODE_FIELD] = trajectory.record().model_dump()
            metrics = {"status": turn.status.value if turn.status is not None else NO_CODE, "attempt": turn.attempt, "done": turn.done, "masked": turn.masked}
            return ToolResponse(text=turn.message), turn.reward, metrics

        async def calc_reward(self, instance_id: str, **kwargs: Any) -> float:
            trajectory = self._instances.get(instance_id)
            return trajectory.episode_return if trajectory is not None else self.settings.reward.failed

        async def release(self, instance_id: str, **kwargs: Any) -> None:
            self._tasks.pop(instance_id, None)
            self._instances.pop(instance_id, None)
            owned = self._owned.pop(instance_id, None)
            if owned is not None:
                await asyncio.to_thread(owned.close)

    # It lives where verl's class_name names it (and pickle finds it): the package, whose __getattr__ makes it.
    KernelGymTool.__module__ = __name__.rpartition(".")[0]
    KernelGymTool.__qualname__ = "KernelGymTool"
    return KernelGymTool
