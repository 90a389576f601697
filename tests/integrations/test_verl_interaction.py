"""gym.integrations.verl's KernelGymInteraction against the real verl 0.7.1, whose `verl.interactions` verl 0.8 removed.

The integrations venv holds verl 0.9 (for the tool and the reward function); `make test-integrations` also
installs the verl 0.7.1 package, without its dependencies, into `.venv-integrations/verl-0.7` (or the folder
`KGYM_VERL_LEGACY` names). One subprocess imports that real verl 0.7.1 and drives, with 0.7.1's own code:
the trainer config `run_grpo.sh interaction` composes, the interaction loaded from the example's
interaction_config.yaml by `initialize_interactions_from_config`, the rows read by 0.7.1's RLHFDataset,
ToolAgentLoop's own start and interacting state over a served gym (a real `kgym serve` app with a fake
grader, run here), the episode scored by 0.7.1's reward manager, the tool on 0.7.1, and one real bwrap grade.
In this process (verl 0.9) the interaction is a one-line error."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any
from uuid import uuid4

import pytest

from tests.support.integrations import REQUIRED, needs

verl = needs("verl")

from gym.harness.reward import RewardConfig  # noqa: E402
from gym.integrations import verl as kgym_verl  # noqa: E402
from gym.sandbox import available_sandboxes  # noqa: E402
from gym.serve.server import ServerConfig  # noqa: E402
from tests.support.fake_grades import marker_grader  # noqa: E402
from tests.support.server_fixtures import FakeGrader, running_server  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "verl"
LEGACY_VARIABLE = "KGYM_VERL_LEGACY"
LEGACY_VERSION = "0.7.1"
TASK = "l1/vector_add"
SOLUTION = (ROOT / "tasks" / "l1" / "vector_add" / "solution.py").read_text()
FAKE_PASS = "```python\nimport triton\n\ndef kernel(x, y):\n    return x + y  # PASS\n```"
FAKE_WRONG = "```python\nimport triton\n\ndef kernel(x, y):\n    return x - y\n```"
NO_CODE = "I am not sure how to write this kernel."
TOKEN = "verl-interaction-token"
REPORT = "KGYM-REPORT "
# The sandbox uid range of this module's bwrap grade: KGYM_TEST_UID_BASE + 11000 + 100 * xdist worker (apart from the other tests').
UID_OFFSET = 11000
# Grades the subprocess asks of the fake grader: the loop's episode 2, the direct one 2, the concurrent ones 4, the tool 1.
FAKE_GRADES = 9


def legacy_folder() -> Path | None:
    """Where verl 0.7.1 was installed without its dependencies: KGYM_VERL_LEGACY, else the repo's
    .venv-integrations/verl-0.7, else verl-0.7 in this interpreter's venv; None when none holds verl.interactions."""
    given = os.environ.get(LEGACY_VARIABLE)
    candidates = [Path(given)] if given else [ROOT / ".venv-integrations" / "verl-0.7", Path(sys.prefix) / "verl-0.7"]
    for folder in candidates:
        if (folder / "verl" / "interactions" / "base.py").is_file():
            return folder.resolve()
    return None


def sandbox_uid() -> str:
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    return str(int(os.environ.get("KGYM_TEST_UID_BASE", "62000")) + UID_OFFSET + 100 * int(worker or 0))


def required_legacy_folder() -> Path:
    """The verl 0.7.1 install beside the integrations venv; a skip without it (a failure under KGYM_REQUIRE_INTEGRATIONS)."""
    folder = legacy_folder()
    if folder is None:
        message = f"verl {LEGACY_VERSION} is not installed beside the integrations venv (set {LEGACY_VARIABLE}, or `make test-integrations`)"
        if REQUIRED:
            pytest.fail(message, pytrace=False)
        pytest.skip(message)
    return folder


@pytest.fixture(scope="module")
def report() -> Iterator[dict[str, Any]]:
    """Run the verl 0.7.1 driver once (served gym here, bwrap grade when bwrap runs) and return what it saw."""
    folder = required_legacy_folder()
    bwrap_problem = available_sandboxes()["bwrap"].check()
    grader = FakeGrader()
    with running_server(ServerConfig(grader=grader, token=TOKEN)) as url:
        # The settings this test sets itself, not the caller's (the rest, e.g. the sandbox's, pass through).
        unset = {"KGYM_SERVER_URL", "KGYM_SERVE_TOKEN", "KGYM_SANDBOX", "KGYM_MAX_ATTEMPTS", "KGYM_VERL_DRY_RUN"}
        env = {key: value for key, value in os.environ.items() if key not in unset}
        env.update(
            {
                # The repo first: verl's wheel also installs top-level `tests` and `scripts` packages.
                "PYTHONPATH": os.pathsep.join([str(ROOT), str(folder)]),
                "KGYM_SERVER_URL": url,
                "KGYM_SERVE_TOKEN": TOKEN,
                "KGYM_SANDBOX_UID": sandbox_uid(),
                "KGYM_DRIVER_BWRAP": "0" if bwrap_problem else "1",
            }
        )
        code = "from tests.integrations.test_verl_interaction import drive; drive()"
        out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
        lines = [line for line in out.stdout.splitlines() if line.startswith(REPORT)]
        assert out.returncode == 0 and lines, f"the verl {LEGACY_VERSION} driver failed ({out.returncode}):\n{out.stdout[-4000:]}\n{out.stderr[-8000:]}"
        seen = json.loads(lines[-1].removeprefix(REPORT))
        seen["fake_grades"] = grader.calls
        seen["bwrap_problem"] = bwrap_problem
        yield seen


# ---------------------------------------------------------------- in this process: verl 0.9


def test_interaction_is_a_one_line_error_on_verl_0_9() -> None:
    version = tuple(int(part) for part in verl.__version__.split(".")[:2])
    if version < (0, 8):
        pytest.skip(f"verl {verl.__version__} still has verl.interactions")
    with pytest.raises(kgym_verl.InteractionUnavailable) as caught:
        kgym_verl.KernelGymInteraction  # noqa: B018
    message = str(caught.value)
    assert "\n" not in message and f"verl {verl.__version__} has no BaseInteraction" in message
    assert "verl >= 0.8 removed verl.interactions" in message and "use KernelGymTool" in message and "'verl>=0.5,<0.8'" in message
    assert isinstance(caught.value, kgym_verl.KernelGymError) and caught.value.http_status == 501
    assert "KernelGymInteraction" not in vars(kgym_verl)  # nothing cached: each access says it again
    assert kgym_verl.KernelGymTool.__name__ == "KernelGymTool"  # the tool is unaffected


def test_rows_carry_the_interaction_kwargs() -> None:
    for multi_turn in (False, True):
        row = kgym_verl.suite_rows("l1", task_ids=[TASK], multi_turn=multi_turn)[0].model_dump()
        assert row["extra_info"]["interaction_kwargs"] == {"name": kgym_verl.INTERACTION_NAME, "task_id": TASK}
        assert row["extra_info"]["tools_kwargs"] == {"submit_kernel": {"create_kwargs": {"task_id": TASK}}}
    prompt = row["prompt"][0]["content"]
    assert "`submit_kernel` tool" in prompt and "```python fenced block" in prompt  # one wording for the tool and the interaction
    assert kgym_verl.task_id_of({"interaction_kwargs": {"name": "kernel_gym", "task_id": TASK}}) == TASK


def test_compute_score_of_interaction_turns() -> None:
    info = {"task_id": TASK, "interaction_kwargs": {"name": "kernel_gym", "task_id": TASK}, "turn_scores": [0.0, 1.5, 0.0]}
    assert kgym_verl.compute_score("kernel_gym/l1", "no code here", TASK, info) == {
        "score": 1.5,
        "acc": 1.0,
        "status": "passed",
        "speedup": None,
        "attempts": 3,
        "task_id": TASK,
        "masked": 0.0,  # verl passes only the turns' rewards: a mask cannot be told from them
    }
    # verl 0.5's sglang rollout passes them as rollout_reward_scores.user_turn_rewards
    sglang = {**{key: value for key, value in info.items() if key != "turn_scores"}, "rollout_reward_scores": {"user_turn_rewards": [0.0, 1.5]}}
    assert kgym_verl.compute_score("kernel_gym/l1", "", TASK, sglang)["score"] == 1.5
    failed = kgym_verl.compute_score("kernel_gym/l1", "", TASK, {**info, "turn_scores": [0.0, -1.0]})
    assert failed["status"] == "not_passed" and failed["acc"] == 0.0 and failed["score"] == 0.0 and failed["attempts"] == 2
    # no interaction turn (the model ran out of length first), or turns of another task: graded from the text as usual
    assert kgym_verl.compute_score("kernel_gym/l1", "no code", TASK, {**info, "turn_scores": []})["status"] == "no_code"
    other = {**info, "interaction_kwargs": {"name": "kernel_gym", "task_id": "l1/softmax"}}
    assert kgym_verl.compute_score("kernel_gym/l1", "no code", TASK, other)["status"] == "no_code"


def test_compute_score_returns_and_presets_by_name() -> None:
    info = {"task_id": TASK, "interaction_kwargs": {"name": "kernel_gym", "task_id": TASK}, "turn_scores": [0.0, 1.5, 0.0]}
    # Kevin's discounted sum: 0 + 0.4 x 1.5 + 0.16 x 0 = 0.6; the last turn's: 0; gamma 0.5 alone: 0.75.
    assert kgym_verl.compute_score("kernel_gym/l1", "", TASK, info, returns="kevin")["score"] == pytest.approx(0.6)
    assert kgym_verl.compute_score("kernel_gym/l1", "", TASK, info, returns="last")["score"] == 0.0
    assert kgym_verl.compute_score("kernel_gym/l1", "", TASK, info, discount=0.5)["score"] == pytest.approx(0.75)
    # Still passed: 1.5 is a reward only a pass earns, whatever the return.
    assert kgym_verl.compute_score("kernel_gym/l1", "", TASK, info, returns="kevin")["status"] == "passed"
    # Under kernelbench-fast-p a pass earns `correct` (1); 0 is a slow pass or a failure.
    fast_p = {**info, "turn_scores": [0.0, 1.0]}
    scored = kgym_verl.compute_score("kernel_gym/l1", "", TASK, fast_p, reward="kernelbench-fast-p")
    assert scored["status"] == "passed" and scored["score"] == 1.0
    with pytest.raises(ValueError, match="unknown reward preset 'fastest'"):
        kgym_verl.compute_score("kernel_gym/l1", "", TASK, info, reward="fastest")
    with pytest.raises(ValueError, match="unknown return preset"):
        kgym_verl.compute_score("kernel_gym/l1", "", TASK, info, returns="forever")


# ---------------------------------------------------------------- verl 0.7.1, in the subprocess


def test_on_the_real_verl_0_7_1(report: dict[str, Any]) -> None:
    # One test for the one subprocess: under pytest-xdist, tests of a module spread over workers and each would run it.
    check_config_dataset_and_loading(report)
    check_agent_loop_episode_no_code_wrong_right(report)
    check_direct_calls_metadata_and_over(report)
    check_bad_input_and_idle_episodes(report)
    check_tool_works_on_verl_0_7_1(report)
    check_real_bwrap_grade(report)


def check_config_dataset_and_loading(report: dict[str, Any]) -> None:
    assert report["version"] == LEGACY_VERSION and report["verl_file"].startswith(str(legacy_folder()))
    assert report["base_interaction"] and report["mro"][1] == "verl.interactions.base.BaseInteraction"
    # run_grpo.sh interaction composes with 0.7.1's own trainer config
    assert report["config"] == {
        "default_agent_loop": "tool_agent",
        "enable": True,
        "interaction_config_path": str(EXAMPLES / "interaction_config.yaml"),
        "tool_config_path": None,
        "reward_path": "pkg://gym.integrations.verl",
        "reward_name": "compute_score",
    }
    assert report["interactions"] == {"kernel_gym": "gym.integrations.verl.KernelGymInteraction"}
    assert report["settings"]["max_attempts"] == 3 and report["settings"]["server_url"].startswith("http://127.0.0.1:")
    # 0.7.1's RLHFDataset hands the agent loop the row's interaction kwargs
    assert report["dataset_interaction_kwargs"] == {"name": "kernel_gym", "task_id": TASK}
    assert report["fake_grades"] == FAKE_GRADES  # the reward manager graded nothing again


def check_agent_loop_episode_no_code_wrong_right(report: dict[str, Any]) -> None:
    loop = report["loop"]
    assert [turn["state"] for turn in loop["turns"]] == ["generating", "generating", "terminated"]
    no_code, wrong, right = (turn["user"] for turn in loop["turns"])
    assert "No submission found" in no_code and "(2 attempt(s) left)" in no_code
    assert wrong.startswith("status: wrong_answer") and "attempt: 2 (1 left)" in wrong and "differs" in wrong and "submit it again" in wrong
    assert right.startswith("status: passed") and "The submission passed." in right
    best = RewardConfig().correct + RewardConfig().speedup_weight  # the fake's 2x: log2 = 1
    assert loop["turn_scores"] == [0.0, 0.0, best]
    assert loop["calculate_score"] == best and loop["after_finalize"] == 0.0 and loop["open_after"] == 0
    # 0.7.1's reward manager hands compute_score the turn scores: the best turn, nothing graded again
    assert loop["reward"] == {"reward_score": best, "status": "passed", "acc": 1.0, "attempts": 3, "task_id": TASK}


def check_direct_calls_metadata_and_over(report: dict[str, Any]) -> None:
    direct = report["direct"]
    wrong, right, over = direct["turns"]
    best = RewardConfig().correct + RewardConfig().speedup_weight
    assert wrong[0] is False and wrong[2] == 0.0
    assert wrong[3] == {
        "task_id": TASK,
        "status": "wrong_answer",
        "attempt": 1,
        "attempts_left": 2,
        "done": False,
        "passed": False,
        "reward": 0.0,
        "best_reward": 0.0,
        "episode_return": 0.0,
        "speedup": None,
        "error": "output 0 differs from the reference at 12 of 4096 elements",
        "masked": False,
    }
    assert right[0] is True and right[2] == best and right[3]["status"] == "passed" and right[3]["speedup"] == 2.0 and right[3]["best_reward"] == best
    assert right[3]["episode_return"] == best
    assert over[0] is True and "is over (it passed)" in over[1] and over[3]["status"] == "over" and over[2] == 0.0
    assert direct["calculate_score"] == best and direct["session_closed"]
    # concurrent rollouts on one interaction keep their own episodes
    assert direct["concurrent"] == [[True, best], [False, 0.0], [True, best], [False, 0.0]]


def check_bad_input_and_idle_episodes(report: dict[str, Any]) -> None:
    errors = report["errors"]
    assert "unknown key(s) max_attemps" in errors["config"]
    assert "needs the sample's task id" in errors["no_task"]
    assert "start_interaction() it first" in errors["unknown_instance"]
    assert errors["unknown_task"].startswith("GymClientError")
    idle = report["idle"]
    assert idle["forgotten"] and idle["closed"]
    # verl passes the interaction kwargs to generate_response too: a forgotten episode starts afresh
    assert idle["recovered"]["attempt"] == 1 and idle["recovered"]["status"] == "no_code"


def check_tool_works_on_verl_0_7_1(report: dict[str, Any]) -> None:
    tool = report["tool"]
    assert tool["text"].startswith("status: passed") and tool["reward"] == RewardConfig().correct + RewardConfig().speedup_weight
    assert tool["record"]["passed"] and tool["record"]["attempts"] == 1


def check_real_bwrap_grade(report: dict[str, Any]) -> None:
    # Last: where bwrap cannot run, everything else has passed when this skips.
    if report["bwrap_problem"]:
        if "bwrap" in {name for name in os.environ.get("KGYM_REQUIRE_SANDBOXES", "").split(",") if name}:
            pytest.fail(f"bwrap is required here but unavailable: {report['bwrap_problem']}")
        pytest.skip(f"the served-gym checks passed; the real grade did not run: bwrap unavailable: {report['bwrap_problem']}")
    real = report["bwrap"]
    assert real["settings"]["server_url"] is None and real["settings"]["sandbox"] == "bwrap"
    done, message, reward, metadata = real["turn"]
    assert done is True and message.startswith("status: passed") and metadata["status"] == "passed" and metadata["attempt"] == 1
    assert reward >= RewardConfig().correct - RewardConfig().speedup_weight and real["calculate_score"] == reward
    assert real["seconds"] < 120


# ---------------------------------------------------------------- the driver (runs under verl 0.7.1)


class _ByteTokenizer:
    """The reward manager only decodes a response: here its ids are the text's UTF-8 bytes."""

    eos_token = ""

    def decode(self, ids: Any, skip_special_tokens: bool = True) -> str:
        return bytes(int(i) for i in ids).decode("utf-8")


async def _no_template(messages: Any, **kwargs: Any) -> list[int]:
    return [0]


def _error(call: Any) -> str:
    try:
        call()
    except Exception as error:  # noqa: BLE001 - the driver reports what was raised
        return f"{type(error).__name__}: {error}"
    return "no error"


async def _expect_error(awaitable: Any) -> str:
    try:
        await awaitable
    except Exception as error:  # noqa: BLE001 - the driver reports what was raised
        return f"{type(error).__name__}: {error}"
    return "no error"


async def _served(out: dict[str, Any], work: Path) -> None:
    import numpy as np
    import torch
    from hydra import compose, initialize_config_dir
    from omegaconf import OmegaConf
    from verl import DataProto
    from verl.experimental.agent_loop.tool_agent_loop import AgentData, ToolAgentLoop
    from verl.experimental.agent_loop.tool_parser import FunctionCall
    from verl.experimental.reward_loop.reward_loop import migrate_legacy_reward_impl
    from verl.interactions.base import BaseInteraction
    from verl.interactions.utils.interaction_registry import initialize_interactions_from_config
    from verl.tools.utils.tool_registry import initialize_tools_from_config
    from verl.trainer.ppo.reward import load_reward_manager
    from verl.utils.dataset.rl_dataset import RLHFDataset

    # the trainer config `run_grpo.sh interaction` composes, as 0.7.1's main_ppo sees it
    env = {**os.environ, "KGYM_VERL_DRY_RUN": "1", "MODEL": "/models/tiny", "GPUS": "1"}
    overrides = subprocess.run(["bash", str(EXAMPLES / "run_grpo.sh"), "interaction"], env=env, capture_output=True, text=True, check=True).stdout.split()
    with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer" / "config"), version_base=None):
        config = migrate_legacy_reward_impl(compose("ppo_trainer", overrides=overrides))
    multi_turn = config.actor_rollout_ref.rollout.multi_turn
    out["config"] = {
        "default_agent_loop": config.actor_rollout_ref.rollout.agent.default_agent_loop,
        "enable": multi_turn.enable,
        "interaction_config_path": multi_turn.interaction_config_path,
        "tool_config_path": multi_turn.tool_config_path,
        "reward_path": config.reward.custom_reward_function.path,
        "reward_name": config.reward.custom_reward_function.name,
    }

    # the interactions as ToolAgentLoop loads them
    interactions = initialize_interactions_from_config(multi_turn.interaction_config_path)
    out["interactions"] = {name: f"{type(value).__module__}.{type(value).__qualname__}" for name, value in interactions.items()}
    interaction = interactions["kernel_gym"]
    out["base_interaction"] = isinstance(interaction, BaseInteraction)
    out["mro"] = [f"{cls.__module__}.{cls.__qualname__}" for cls in type(interaction).__mro__]
    out["settings"] = interaction.settings.model_dump(exclude={"token"})

    # the rows as 0.7.1's RLHFDataset hands them to the agent loop
    rows = kgym_verl.write_parquet("l1", work / "train.parquet", task_ids=[TASK], multi_turn=True)
    dataset = RLHFDataset(data_files=[str(rows)], tokenizer=None, config=OmegaConf.create({"cache_dir": str(work / "verl"), "filter_overlong_prompts": False}))
    item = dataset[0]
    out["dataset_interaction_kwargs"] = dict(item["interaction_kwargs"])

    # ToolAgentLoop.run's start, then its interacting state after each assistant reply (what _handle_generating_state appends)
    interaction_kwargs = item["extra_info"]["interaction_kwargs"]
    request_id = uuid4().hex
    chosen = interactions[interaction_kwargs["name"]]
    await chosen.start_interaction(request_id, **interaction_kwargs)
    agent = AgentData(
        messages=list(item["raw_prompt"]),
        image_data=None,
        video_data=None,
        metrics={},
        request_id=request_id,
        tools_kwargs=item["tools_kwargs"],
        interaction=chosen,
        interaction_kwargs=interaction_kwargs,
    )
    stub = SimpleNamespace(apply_chat_template=_no_template)
    turns = []
    for reply in (NO_CODE, FAKE_WRONG, FAKE_PASS):
        agent.messages.append({"role": "assistant", "content": reply})
        state = await ToolAgentLoop._handle_interacting_state(stub, agent)
        turns.append({"state": state.value, "user": agent.messages[-1]["content"]})
    loop: dict[str, Any] = {"turns": turns, "turn_scores": list(agent.turn_scores), "calculate_score": await chosen.calculate_score(request_id)}
    await chosen.finalize_interaction(request_id)
    loop["after_finalize"] = await chosen.calculate_score(request_id)
    loop["open_after"] = len(chosen._episodes)

    # 0.7.1's reward manager, with the agent loop's extra fields (turn_scores) as it gets them
    manager = load_reward_manager(config, _ByteTokenizer())
    text = "\n".join(message["content"] for message in agent.messages[1:])
    response = torch.tensor(list(text.encode("utf-8")), dtype=torch.long).unsqueeze(0)
    non_tensors = {key: np.array([item[key]], dtype=object) for key in ("data_source", "reward_model", "extra_info")}
    non_tensors["tool_extra_fields"] = np.array([{"turn_scores": agent.turn_scores, "tool_rewards": agent.tool_rewards}], dtype=object)
    sample = DataProto.from_dict(
        tensors={
            "prompts": torch.zeros((1, 3), dtype=torch.long),
            "responses": response,
            "attention_mask": torch.ones((1, 3 + response.shape[1]), dtype=torch.long),
        },
        non_tensors=non_tensors,
    )
    scored = await manager.run_single(sample)
    info = scored["reward_extra_info"]
    loop["reward"] = {"reward_score": scored["reward_score"], **{key: info[key] for key in ("status", "acc", "attempts", "task_id")}}
    out["loop"] = loop

    # direct calls: metadata, a turn after the end, the session closed on the pass
    direct_id = await interaction.start_interaction(None, name="kernel_gym", task_id=TASK)
    trajectory = interaction._episodes[direct_id]
    replies = []
    for reply in (FAKE_WRONG, FAKE_PASS, FAKE_PASS):
        messages = [{"role": "user", "content": "write it"}, {"role": "assistant", "content": [{"type": "text", "text": reply}]}]
        replies.append(list(await interaction.generate_response(direct_id, messages, name="kernel_gym", task_id=TASK)))
    direct: dict[str, Any] = {"turns": replies, "calculate_score": await interaction.calculate_score(direct_id)}
    direct["session_closed"] = trajectory.episode is not None and trajectory.episode._close is None
    await interaction.finalize_interaction(direct_id)

    async def rollout(index: int) -> list[Any]:
        instance = await interaction.start_interaction(f"rollout-{index}", task_id=TASK)
        reply = FAKE_PASS if index % 2 == 0 else FAKE_WRONG
        done, _, reward, _ = await interaction.generate_response(instance, [{"role": "assistant", "content": reply}])
        score = await interaction.calculate_score(instance)
        await interaction.finalize_interaction(instance)
        assert score == reward
        return [done, reward]

    direct["concurrent"] = list(await asyncio.gather(*(rollout(index) for index in range(4))))
    out["direct"] = direct

    # bad input
    cls = type(interaction)
    errors = {"config": _error(lambda: cls({"name": "kernel_gym", "max_attemps": 2}))}
    errors["no_task"] = await _expect_error(interaction.start_interaction("x", name="kernel_gym"))
    errors["unknown_instance"] = await _expect_error(interaction.generate_response("nobody", [{"role": "assistant", "content": NO_CODE}]))
    errors["unknown_task"] = await _expect_error(interaction.start_interaction("y", task_id="l1/no_such_task"))
    out["errors"] = errors

    # idle episodes are closed and forgotten as new ones start (verl 0.7's agent loop never finalizes)
    idle_one = cls({"name": "kernel_gym"})
    await idle_one.start_interaction("old", task_id=TASK)
    old = idle_one._episodes["old"]
    idle_one.idle_s = 0.0
    await idle_one.start_interaction("new", task_id=TASK)
    deadline = time.monotonic() + 10
    while old.episode is not None and old.episode._close is not None and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    idle: dict[str, Any] = {"forgotten": "old" not in idle_one._episodes, "closed": old.episode is not None and old.episode._close is None}
    idle_one.idle_s = 3600.0
    _, _, _, recovered = await idle_one.generate_response("old", [{"role": "assistant", "content": NO_CODE}], name="kernel_gym", task_id=TASK)
    idle["recovered"] = recovered
    for instance in list(idle_one._episodes):
        await idle_one.finalize_interaction(instance)
    out["idle"] = idle

    # the tool on 0.7.1: ToolAgentLoop's own dispatch, the episode record in the extra fields
    tools = initialize_tools_from_config(str(EXAMPLES / "tool_config.yaml"))
    tool_loop = SimpleNamespace(tools={tool.name: tool for tool in tools}, max_tool_response_length=8192, tool_response_truncate_side="middle")
    tool_agent = AgentData(
        messages=list(item["raw_prompt"]), image_data=None, video_data=None, metrics={}, request_id="tool-1", tools_kwargs=item["tools_kwargs"]
    )
    call = FunctionCall(name="submit_kernel", arguments=json.dumps({"code": FAKE_PASS}))
    answer, reward, _ = await ToolAgentLoop._call_tool(tool_loop, call, tool_agent.tools_kwargs, tool_agent)
    out["tool"] = {"text": answer.text, "reward": reward, "record": tool_agent.extra_fields[kgym_verl.EPISODE_FIELD]}


async def _in_process(out: dict[str, Any]) -> None:
    from verl.interactions.utils.interaction_registry import initialize_interactions_from_config

    for name in ("KGYM_SERVER_URL", "KGYM_SERVE_TOKEN"):
        os.environ.pop(name, None)
    interaction = initialize_interactions_from_config(str(EXAMPLES / "interaction_config.yaml"))["kernel_gym"]
    started = time.monotonic()
    instance = await interaction.start_interaction(None, name="kernel_gym", task_id=TASK)
    turn = await interaction.generate_response(instance, [{"role": "assistant", "content": f"```python\n{SOLUTION}\n```"}], task_id=TASK)
    out["bwrap"] = {
        "settings": interaction.settings.model_dump(exclude={"token"}),
        "turn": list(turn),
        "calculate_score": await interaction.calculate_score(instance),
        "seconds": time.monotonic() - started,
    }
    await interaction.finalize_interaction(instance)


def drive() -> None:
    """The subprocess: everything above under the real verl 0.7.1; prints one REPORT line of JSON."""
    from gym.sandbox.warm_pool import shutdown_pools

    out: dict[str, Any] = {"version": verl.__version__, "verl_file": verl.__file__}
    with tempfile.TemporaryDirectory() as work:
        import datasets

        datasets.config.HF_DATASETS_CACHE = Path(work) / "hf"
        try:
            started = time.monotonic()
            asyncio.run(_served(out, Path(work)))
            out["served_seconds"] = time.monotonic() - started
            kgym_verl.close_sources()
            if os.environ.get("KGYM_DRIVER_BWRAP") == "1":
                asyncio.run(_in_process(out))
        finally:
            kgym_verl.close_sources()
            shutdown_pools()
    print(REPORT + json.dumps(out, default=str), flush=True)


# ---------------------------------------------------------------- reward presets and returns by name

# Replies the marker grader (tests.support.fake_grades) grades: "# PASS" passes at 1.5x, "# CHEAT" is rejected, the rest is wrong.
MARKED_WRONG = "```python\nimport triton\n\ndef kernel(x, y):\n    return x - y\n```"
MARKED_PASS = "```python\nimport triton\n\ndef kernel(x, y):\n    return x + y  # PASS\n```"
MARKED_CHEAT = "```python\nimport triton\n\ndef kernel(x, y):\n    return x  # CHEAT\n```"
# kernrl under the marker grader: wrong -0.25, a pass at 1.5x min(1.5 - 1, 2) = 0.5, a rejected one -1.
KERNRL_PASSING = [-0.25, 0.5]
KERNRL_FAILING = [-0.25, -1.0]


@pytest.mark.parametrize(
    ("turn_scores", "returns", "discount", "score", "status"),
    [
        pytest.param(KERNRL_PASSING, "kevin", None, -0.05, "passed", id="passing-kevin"),  # -0.25 + 0.4 x 0.5
        pytest.param(KERNRL_PASSING, "best", None, 0.5, "passed", id="passing-best"),
        pytest.param(KERNRL_PASSING, "last", None, 0.5, "passed", id="passing-last"),
        pytest.param(KERNRL_PASSING, None, 0.5, 0.0, "passed", id="passing-discount-alone"),  # -0.25 + 0.5 x 0.5
        pytest.param(KERNRL_PASSING, {"aggregate": "discounted", "discount": 0.25}, None, -0.125, "passed", id="passing-dict"),
        pytest.param(KERNRL_FAILING, "kevin", None, -0.65, "not_passed", id="failing-kevin"),  # -0.25 + 0.4 x -1
        pytest.param(KERNRL_FAILING, None, None, -0.25, "not_passed", id="failing-best-by-default"),
        pytest.param(KERNRL_FAILING, "last", None, -1.0, "not_passed", id="failing-last"),
    ],
)
def test_compute_score_of_kernrl_interaction_turns(turn_scores: list[float], returns: Any, discount: float | None, score: float, status: str) -> None:
    info = {"task_id": TASK, "interaction_kwargs": {"name": "kernel_gym", "task_id": TASK}, "turn_scores": turn_scores}
    scored = kgym_verl.compute_score("kernel_gym/l1", "", TASK, info, reward="kernrl", returns=returns, discount=discount)
    assert scored["score"] == pytest.approx(score) and scored["status"] == status
    assert scored["acc"] == (1.0 if status == "passed" else 0.0) and scored["attempts"] == 2 and scored["speedup"] is None
    # The same reward as a dict of RewardConfig's fields.
    assert kgym_verl.compute_score("kernel_gym/l1", "", TASK, info, reward={"preset": "kernrl"}, returns=returns, discount=discount) == scored


@pytest.fixture(scope="module")
def returns_report() -> Iterator[dict[str, Any]]:
    """Run the verl 0.7.1 returns driver once against a served gym with the marker grader; return what it saw."""
    folder = required_legacy_folder()
    calls: list[tuple[str, str]] = []
    with running_server(ServerConfig(grader=marker_grader(calls))) as url:
        unset = {"KGYM_SERVER_URL", "KGYM_SERVE_TOKEN", "KGYM_SANDBOX", "KGYM_MAX_ATTEMPTS", "KGYM_VERL_DRY_RUN"}
        env = {key: value for key, value in os.environ.items() if key not in unset}
        env.update({"PYTHONPATH": os.pathsep.join([str(ROOT), str(folder)]), "KGYM_SERVER_URL": url})
        code = "from tests.integrations.test_verl_interaction import drive_returns; drive_returns()"
        out = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True, text=True, timeout=300)
        lines = [line for line in out.stdout.splitlines() if line.startswith(REPORT)]
        assert out.returncode == 0 and lines, f"the verl {LEGACY_VERSION} returns driver failed ({out.returncode}):\n{out.stdout[-4000:]}\n{out.stderr[-8000:]}"
        seen = json.loads(lines[-1].removeprefix(REPORT))
        seen["grades"] = len(calls)
        yield seen


def test_interaction_returns_under_kernrl_on_the_real_verl_0_7_1(returns_report: dict[str, Any]) -> None:
    report = returns_report
    assert report["version"] == LEGACY_VERSION and report["grades"] == 4
    assert report["settings"]["reward"]["preset"] == "kernrl" and report["settings"]["returns"]["discount"] == 0.4

    kevin = report["kevin"]
    assert kevin["before"] == -0.25  # kernrl's `failed` before any turn
    (wrong_done, _, wrong_reward, wrong_meta), (right_done, right_text, right_reward, right_meta) = kevin["turns"]
    assert (wrong_done, wrong_reward) == (False, -0.25)
    assert wrong_meta["status"] == "wrong_answer" and wrong_meta["best_reward"] == -0.25 and wrong_meta["episode_return"] == -0.25
    # A pass at 1.5x: the turn's reward 0.5; the episode's return Kevin's G_0 = -0.25 + 0.4 x 0.5.
    assert right_done is True and right_text.startswith("status: passed") and right_reward == pytest.approx(0.5)
    assert right_meta["status"] == "passed" and right_meta["speedup"] == 1.5
    assert right_meta["best_reward"] == pytest.approx(0.5) and right_meta["episode_return"] == pytest.approx(-0.05)
    assert kevin["calculate_score"] == pytest.approx(-0.05)
    # verl hands compute_score the turn rewards; scored with the same settings, it agrees with calculate_score.
    assert kevin["turn_scores"] == [-0.25, pytest.approx(0.5)]
    assert kevin["compute_score"]["score"] == pytest.approx(-0.05) and kevin["compute_score"]["status"] == "passed"

    last = report["last"]
    assert [turn[2] for turn in last["turns"]] == [-0.25, -1.0]
    assert [turn[3]["episode_return"] for turn in last["turns"]] == [-0.25, -1.0]
    assert [turn[3]["best_reward"] for turn in last["turns"]] == [-0.25, -0.25]
    assert last["turns"][1][0] is True and last["turns"][1][3]["status"] == "rejected"
    assert last["calculate_score"] == -1.0

    assert "unknown reward preset 'fastest'" in report["errors"]["reward"]
    assert "unknown return preset 'forever'" in report["errors"]["returns"]


async def _returns(out: dict[str, Any]) -> None:
    from verl.interactions.base import BaseInteraction

    cls = kgym_verl.KernelGymInteraction
    interaction = cls({"name": "kernel_gym", "reward": "kernrl", "returns": "kevin"})
    assert isinstance(interaction, BaseInteraction)
    out["settings"] = interaction.settings.model_dump(mode="json", exclude={"token"})
    instance = await interaction.start_interaction(None, name="kernel_gym", task_id=TASK)
    kevin: dict[str, Any] = {"before": await interaction.calculate_score(instance), "turns": []}
    for reply in (MARKED_WRONG, MARKED_PASS):
        kevin["turns"].append(list(await interaction.generate_response(instance, [{"role": "assistant", "content": reply}])))
    kevin["calculate_score"] = await interaction.calculate_score(instance)
    await interaction.finalize_interaction(instance)
    kevin["turn_scores"] = [turn[2] for turn in kevin["turns"]]
    info = {"task_id": TASK, "interaction_kwargs": {"name": "kernel_gym", "task_id": TASK}, "turn_scores": kevin["turn_scores"]}
    kevin["compute_score"] = kgym_verl.compute_score("kernel_gym/l1", "", TASK, info, reward="kernrl", returns="kevin")
    out["kevin"] = kevin

    last_one = cls({"name": "kernel_gym", "reward": "kernrl", "returns": "last", "max_attempts": 2})
    instance = await last_one.start_interaction(None, name="kernel_gym", task_id=TASK)
    last: dict[str, Any] = {"turns": []}
    for reply in (MARKED_WRONG, MARKED_CHEAT):
        last["turns"].append(list(await last_one.generate_response(instance, [{"role": "assistant", "content": reply}])))
    last["calculate_score"] = await last_one.calculate_score(instance)
    await last_one.finalize_interaction(instance)
    out["last"] = last

    out["errors"] = {
        "reward": _error(lambda: cls({"name": "kernel_gym", "reward": "fastest"})),
        "returns": _error(lambda: cls({"name": "kernel_gym", "returns": "forever"})),
    }


def drive_returns() -> None:
    """The subprocess of test_interaction_returns_under_kernrl_on_the_real_verl_0_7_1 (verl 0.7.1, a served gym); one REPORT line."""
    out: dict[str, Any] = {"version": verl.__version__}
    try:
        asyncio.run(_returns(out))
    finally:
        kgym_verl.close_sources()
    print(REPORT + json.dumps(out, default=str), flush=True)
