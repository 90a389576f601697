"""gym.integrations.verl against verl 0.9 itself: compute_score loaded and called by verl's own reward manager
(from the trainer config the example's run_grpo.sh composes), KernelGymTool loaded from the example's
tool_config.yaml and called through ToolAgentLoop's own tool dispatch, the parquet rows read by RLHFDataset.
Grades are real: in this process (bwrap) and by a served gym (a real `kgym serve` app with a fake grader)."""

from __future__ import annotations

import asyncio
import copy
import gc
import json
import os
import pickle
import runpy
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from tests.support.integrations import needs

verl = needs("verl")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from hydra import compose, initialize_config_dir  # noqa: E402
from omegaconf import OmegaConf, open_dict  # noqa: E402
from verl import DataProto  # noqa: E402
from verl.experimental.agent_loop.tool_agent_loop import AgentData, ToolAgentLoop  # noqa: E402
from verl.experimental.agent_loop.tool_parser import FunctionCall  # noqa: E402
from verl.experimental.reward_loop.reward_loop import migrate_legacy_reward_impl  # noqa: E402
from verl.tools.base_tool import BaseTool  # noqa: E402
from verl.tools.tool_registry import initialize_tools_from_config  # noqa: E402
from verl.trainer.ppo.reward import get_custom_reward_fn, load_reward_manager  # noqa: E402

from gym.errors import GymClientError  # noqa: E402
from gym.harness.reward import RewardConfig, reward_for  # noqa: E402
from gym.integrations import verl as kgym_verl  # noqa: E402
from gym.integrations.episodes import EpisodeSource, Turn, suite_prompts  # noqa: E402
from gym.integrations.verl import common as verl_common  # noqa: E402
from gym.integrations.verl import reward as verl_reward  # noqa: E402
from gym.serve.server import ServerConfig  # noqa: E402
from tests.support.fake_grades import marker_grader  # noqa: E402
from tests.support.server_fixtures import FakeGrader, running_server  # noqa: E402
from tests.support.warm_bwrap import bwrap_with_pools  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "verl"
TASK = "l1/vector_add"
SOLUTION = (ROOT / "tasks" / "l1" / "vector_add" / "solution.py").read_text()
WRONG_CODE = SOLUTION.replace("x + y", "x - y")
RIGHT = f"Here is my kernel:\n```python\n{SOLUTION}\n```"
WRONG = f"```python\n{WRONG_CODE}\n```"
FAKE_PASS = "```python\nimport triton\n\ndef kernel(x, y):\n    return x + y  # PASS\n```"
FAKE_WRONG_CODE = "import triton\n\ndef kernel(x, y):\n    return x - y\n"
FAKE_WRONG = f"```python\n{FAKE_WRONG_CODE}```"
TOKEN = "verl-test-token"


class ByteTokenizer:
    """The reward manager only decodes a response: here its ids are the text's UTF-8 bytes."""

    eos_token = ""

    def decode(self, ids: Any, skip_special_tokens: bool = True) -> str:
        return bytes(int(i) for i in ids).decode("utf-8")


def row_of(task_id: str = TASK, multi_turn: bool = False) -> dict[str, Any]:
    return kgym_verl.suite_rows(task_id.split("/")[0], task_ids=[task_id], multi_turn=multi_turn)[0].model_dump()


def sample(text: str, row: dict[str, Any], extra_fields: dict[str, Any] | None = None) -> DataProto:
    """One rollout as verl's agent loop hands it to the reward loop: padded prompt + response ids, the row's columns."""
    response = torch.tensor(list(text.encode("utf-8")), dtype=torch.long).unsqueeze(0)
    prompt = torch.zeros((1, 3), dtype=torch.long)
    non_tensors = {key: np.array([row[key]], dtype=object) for key in ("data_source", "reward_model", "extra_info")}
    if extra_fields is not None:
        non_tensors["tool_extra_fields"] = np.array([extra_fields], dtype=object)
    return DataProto.from_dict(
        tensors={"prompts": prompt, "responses": response, "attention_mask": torch.ones((1, 3 + response.shape[1]), dtype=torch.long)},
        non_tensors=non_tensors,
    )


def example_overrides(mode: str) -> list[str]:
    env = {**os.environ, "KGYM_VERL_DRY_RUN": "1", "MODEL": "/models/tiny", "GPUS": "1"}
    out = subprocess.run(["bash", str(EXAMPLES / "run_grpo.sh"), mode], env=env, capture_output=True, text=True, check=True, cwd=ROOT)
    return out.stdout.split()


@pytest.fixture(scope="module")
def trainer_config() -> Any:
    """verl's trainer config (ppo_trainer.yaml) composed with the example's multi-turn overrides, as main_ppo sees it."""
    with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer" / "config"), version_base=None):
        config = compose("ppo_trainer", overrides=example_overrides("multi"))
    return migrate_legacy_reward_impl(config)


@pytest.fixture(autouse=True)
def no_served_gym(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ("KGYM_SERVER_URL", "KGYM_SERVE_TOKEN", "KGYM_SANDBOX", "KGYM_MAX_ATTEMPTS"):
        monkeypatch.delenv(name, raising=False)
    yield


@pytest.fixture(scope="module")
def bwrap() -> Iterator[str]:
    with pytest.MonkeyPatch.context() as patch:
        pools = bwrap_with_pools(patch, uid_offset=8000)
        try:
            yield next(pools)
        finally:
            kgym_verl.close_sources()
            next(pools, None)


@pytest.fixture
def graded(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, Turn, int]]:
    """Every real grade_once of any EpisodeSource: (text, turn, thread), to check a score against its own grade."""
    seen: list[tuple[str, Turn, int]] = []
    lock = threading.Lock()
    original = EpisodeSource.grade_once

    def spy(self: EpisodeSource, task_id: str, text: str, tool_calls: Any = None) -> Turn:
        turn = original(self, task_id, text, tool_calls)
        with lock:
            seen.append((text, turn, threading.get_ident()))
        return turn

    monkeypatch.setattr(EpisodeSource, "grade_once", spy)
    return seen


def run_manager(config: Any, samples: list[DataProto]) -> list[dict[str, Any]]:
    """verl's reward manager, loaded from the config, scoring the samples concurrently (as RewardLoopWorker does)."""
    manager = load_reward_manager(config, ByteTokenizer())
    assert type(manager).__name__ == "NaiveRewardManager"

    async def score_all() -> list[dict[str, Any]]:
        return list(await asyncio.gather(*(manager.run_single(item) for item in samples)))

    return manager.loop.run_until_complete(score_all())


# ---------------------------------------------------------------- compute_score through verl's reward manager


def test_example_config_points_verl_at_compute_score(trainer_config: Any) -> None:
    reward = trainer_config.reward
    assert reward.custom_reward_function.path == "pkg://gym.integrations.verl" and reward.custom_reward_function.name == "compute_score"
    multi_turn = trainer_config.actor_rollout_ref.rollout.multi_turn
    assert multi_turn.enable and Path(multi_turn.tool_config_path) == EXAMPLES / "tool_config.yaml"
    assert trainer_config.actor_rollout_ref.rollout.agent.default_agent_loop == "tool_agent"
    assert trainer_config.algorithm.adv_estimator == "grpo"
    assert "ray_kwargs" in trainer_config and example_overrides("single")  # the single-turn variant composes its overrides too
    with initialize_config_dir(config_dir=str(Path(verl.__file__).parent / "trainer" / "config"), version_base=None):
        single = compose("ppo_trainer", overrides=example_overrides("single"))
    assert single.actor_rollout_ref.rollout.agent.default_agent_loop == "single_turn_agent" and not single.actor_rollout_ref.rollout.multi_turn.enable


def test_in_process_scores_concurrently(bwrap: str, trainer_config: Any, graded: list[tuple[str, Turn, int]]) -> None:
    # verl's manager runs a sync compute_score in its event loop's thread pool: four samples at once, two submissions
    row = row_of()
    texts = [RIGHT, WRONG, RIGHT, WRONG]
    results = run_manager(trainer_config, [sample(text, row) for text in texts])
    assert len(graded) == 4 and len({thread for _, _, thread in graded}) >= 2
    for text, result in zip(texts, results, strict=True):
        turns = [turn for seen, turn, _ in graded if seen == text]
        assert len(turns) == 2 and all(turn.grade is not None for turn in turns)
        info = result["reward_extra_info"]
        assert set(info) == set(kgym_verl.Score.model_fields) and info["task_id"] == TASK and info["attempts"] == 1
        assert result["reward_score"] == info["score"]
        # each concurrent grade of a text scores exactly its own grade's reward
        assert result["reward_score"] in {reward_for(turn.grade) for turn in turns if turn.grade is not None}
        if text == RIGHT:
            assert info["status"] == "passed" and info["acc"] == 1.0 and info["score"] >= RewardConfig().correct - RewardConfig().speedup_weight
        else:
            assert info["status"] == "wrong_answer" and info["acc"] == 0.0 and info["score"] == RewardConfig().failed and info["speedup"] is None
    assert min(results[0]["reward_score"], results[2]["reward_score"]) > max(results[1]["reward_score"], results[3]["reward_score"])
    assert len(verl_common._SOURCES) == 1  # one source (one executor) per setting and process, however many threads


def test_bad_completions_never_raise_and_bad_samples_do(trainer_config: Any, graded: list[tuple[str, Turn, int]]) -> None:
    for text in ("", "I could not write it.", "```python\nprint('no kernel here')\n```", 12345):
        result = kgym_verl.compute_score("kernel_gym/l1", text, TASK, {"task_id": TASK}, reward_router_address=None)  # type: ignore[arg-type]
        assert result["status"] == "no_code" and result["score"] == RewardConfig().failed and result["acc"] == 0.0
    assert graded == []  # nothing to grade, nothing graded
    # the task id: extra_info first, then the tool's create_kwargs, then a ground truth holding it
    assert kgym_verl.task_id_of({"task_id": TASK}, "x") == TASK
    assert kgym_verl.task_id_of({"tools_kwargs": {"submit_kernel": {"create_kwargs": {"task_id": TASK}}}}) == TASK
    assert kgym_verl.task_id_of(None, TASK) == TASK
    with pytest.raises(ValueError, match="no task id"):
        kgym_verl.compute_score("kernel_gym/l1", RIGHT, None, {})
    # custom_reward_function.reward_kwargs configure the reward, through verl's loader (which copies them shallowly)
    config = copy.deepcopy(trainer_config)
    with open_dict(config):
        config.reward.custom_reward_function.reward_kwargs = {"reward": {"failed": -0.25}}
    results = run_manager(config, [sample("I give up.", row_of())])
    assert results[0]["reward_score"] == -0.25 and results[0]["reward_extra_info"]["status"] == "no_code"
    # the loaded function pickles by reference (verl's remote reward manager ships it to Ray actors)
    loaded = get_custom_reward_fn(config)
    assert pickle.loads(pickle.dumps(loaded)).args[0] is kgym_verl.compute_score


def test_served_gym_with_token(trainer_config: Any, monkeypatch: pytest.MonkeyPatch, graded: list[tuple[str, Turn, int]]) -> None:
    grader = FakeGrader()
    with running_server(ServerConfig(grader=grader, token=TOKEN)) as url:
        monkeypatch.setenv("KGYM_SERVER_URL", url)
        monkeypatch.setenv("KGYM_SERVE_TOKEN", TOKEN)
        row = row_of()
        results = run_manager(trainer_config, [sample(text, row) for text in (FAKE_PASS, FAKE_WRONG, FAKE_PASS, FAKE_WRONG)])
        assert grader.calls == 4
        by_text = {text: turn for text, turn, _ in graded}
        assert by_text[FAKE_PASS].grade is not None and by_text[FAKE_PASS].grade.speedup_vs_eager == 2.0
        assert [result["reward_score"] for result in results] == [reward_for(by_text[FAKE_PASS].grade), 0.0] * 2
        assert results[0]["reward_score"] == RewardConfig().correct + RewardConfig().speedup_weight  # log2(2x) = 1
        assert results[0]["reward_extra_info"]["speedup"] == 2.0
        monkeypatch.setenv("KGYM_SERVE_TOKEN", "wrong-token")
        with pytest.raises(GymClientError, match="401"):
            kgym_verl.compute_score("kernel_gym/l1", FAKE_PASS, TASK, {"task_id": TASK})
    kgym_verl.close_sources()


# ---------------------------------------------------------------- the multi-turn tool through ToolAgentLoop's dispatch


def loop_stub(tools: list[Any]) -> Any:
    """What ToolAgentLoop._call_tool reads of its loop (the rest needs a rollout server)."""
    return SimpleNamespace(tools={tool.name: tool for tool in tools}, max_tool_response_length=8192, tool_response_truncate_side="middle")


def agent_data_of(row: dict[str, Any]) -> AgentData:
    return AgentData(
        messages=list(row["prompt"]),
        image_data=None,
        video_data=None,
        audio_data=None,
        mm_processor_kwargs=None,
        metrics={},
        request_id="req-1",
        tools_kwargs=row["extra_info"]["tools_kwargs"],
    )


def call(code: str | None) -> FunctionCall:
    return FunctionCall(name="submit_kernel", arguments=json.dumps({} if code is None else {"code": code}))


def test_tool_episode_wrong_then_right(trainer_config: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    grader = FakeGrader()
    with running_server(ServerConfig(grader=grader, token=TOKEN)) as url:
        monkeypatch.setenv("KGYM_SERVER_URL", url)
        monkeypatch.setenv("KGYM_SERVE_TOKEN", TOKEN)
        tools = initialize_tools_from_config(str(EXAMPLES / "tool_config.yaml"))
        assert len(tools) == 1 and isinstance(tools[0], BaseTool) and type(tools[0]) is kgym_verl.KernelGymTool
        tool = tools[0]
        assert tool.name == "submit_kernel" and tool.settings.max_attempts == 3 and tool.settings.server_url == url
        assert tool.tool_schema.function.parameters.required == ["code"]
        loop = loop_stub(tools)
        row = row_of(multi_turn=True)
        assert row["agent_name"] == "tool_agent"
        agent = agent_data_of(row)

        async def episode() -> list[tuple[Any, float, dict[str, Any]]]:
            turns = []
            for code in (None, FAKE_WRONG_CODE, FAKE_PASS, FAKE_PASS):
                turns.append(await ToolAgentLoop._call_tool(loop, call(code), agent.tools_kwargs, agent))
            return turns

        (none, _, _), (wrong, wrong_reward, _), (right, right_reward, _), (over, over_reward, _) = asyncio.run(episode())
        assert grader.calls == 2
    assert "No submission found" in (none.text or "")
    assert (wrong.text or "").startswith("status: wrong_answer") and "feedback:" in (wrong.text or "") and "differs" in (wrong.text or "")
    assert "attempt: 2 (1 left)" in (wrong.text or "") and wrong_reward == 0.0
    assert (right.text or "").startswith("status: passed") and "The submission passed." in (right.text or "")
    assert right_reward == RewardConfig().correct + RewardConfig().speedup_weight  # the fake's 2x: log2 = 1
    # after the pass the episode is over: the fourth call grades nothing
    assert "is over (it passed)" in (over.text or "") and over_reward == 0.0
    record = agent.extra_fields[kgym_verl.EPISODE_FIELD]
    assert record == {"task_id": TASK, "score": right_reward, "passed": True, "status": "passed", "speedup": 2.0, "attempts": 3, "masked": False}
    # verl's reward manager merges the extra fields into extra_info: compute_score scores the episode, grading nothing
    results = run_manager(trainer_config, [sample("<tool_call>...</tool_call> done", row, extra_fields=dict(agent.extra_fields))])
    assert results[0]["reward_score"] == right_reward and results[0]["reward_extra_info"]["attempts"] == 3
    kgym_verl.close_sources()


def test_tool_lifecycle_without_agent_data_and_bad_rows() -> None:
    with pytest.raises(ValueError, match="unknown key.*max_attemps"):
        kgym_verl.KernelGymTool({"type": "native", "max_attemps": 2}, None)
    grader = FakeGrader()
    with running_server(ServerConfig(grader=grader)) as url:
        tool = kgym_verl.KernelGymTool({"type": "native", "server_url": url, "max_attempts": 2}, None)
        assert tool.settings.server_url == url and tool.settings.max_attempts == 2

        async def lifecycle() -> tuple[Any, ...]:
            instance, created = await tool.create(create_kwargs={"task_id": TASK})
            first = await tool.execute(instance, {"code": FAKE_WRONG_CODE})
            second = await tool.execute(instance, {"code": FAKE_PASS})  # a fence inside the argument still means the file
            score = await tool.calc_reward(instance)
            await tool.release(instance)
            with pytest.raises(ValueError, match="task id"):
                await tool.create(create_kwargs={})
            return created, first, second, score

        created, (first, first_reward, metrics), (second, second_reward, _), score = asyncio.run(lifecycle())
        assert created.is_empty() and metrics == {"status": "wrong_answer", "attempt": 1, "done": False, "masked": False}
        assert (first.text or "").startswith("status: wrong_answer") and first_reward == 0.0
        assert (second.text or "").startswith("status: passed") and second_reward == score == RewardConfig().correct + RewardConfig().speedup_weight
        assert grader.calls == 2

        # a trajectory dropped before its episode ended (the model stopped calling) has its session closed
        agent: AgentData | None = agent_data_of(row_of(multi_turn=True))

        async def abandoned() -> Any:
            instance, _ = await tool.create(create_kwargs={"task_id": TASK})
            await tool.execute(instance, {"code": FAKE_WRONG_CODE}, agent_data=agent)
            await tool.release(instance)
            return tool._by_agent[agent].episode

        episode = asyncio.run(abandoned())
        assert not episode.done and episode._close is not None and agent is not None
        assert agent.extra_fields[kgym_verl.EPISODE_FIELD]["status"] == "wrong_answer"
        agent = None
        gc.collect()
        deadline = time.monotonic() + 10
        while episode._close is not None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert episode._close is None and len(tool._by_agent) == 0
    kgym_verl.close_sources()


# ---------------------------------------------------------------- the dataset


def test_parquet_rows_as_verl_reads_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pyarrow.parquet as pq
    from verl.utils.dataset.rl_dataset import RLHFDataset

    out = tmp_path / "data"
    monkeypatch.setattr(sys, "argv", ["build_dataset.py", "--suite", "l1", "--out", str(out), "--multi-turn"])
    runpy.run_path(str(EXAMPLES / "build_dataset.py"), run_name="__main__")
    prompts = {prompt.task_id: prompt for prompt in suite_prompts("l1")}
    table = pq.read_table(out / "train.parquet").to_pylist()
    assert [row["extra_info"]["task_id"] for row in table] == sorted(prompts)
    for index, row in enumerate(table):
        task = prompts[row["extra_info"]["task_id"]]
        assert set(row) == {"data_source", "agent_name", "prompt", "ability", "reward_model", "extra_info"}
        assert row["data_source"] == "kernel_gym/l1" and row["agent_name"] == "tool_agent" and row["ability"] == "triton_kernels"
        assert row["reward_model"] == {"style": "rule", "ground_truth": task.task_id}
        assert len(row["prompt"]) == 1 and row["prompt"][0]["role"] == "user" and row["prompt"][0]["content"].startswith(task.prompt.rstrip())
        assert "submit_kernel" in row["prompt"][0]["content"]
        assert row["extra_info"] == {
            "index": index,
            "split": "train",
            "task_id": task.task_id,
            "suite": "l1",
            "title": task.title,
            "task_split": task.split,
            "metadata": task.metadata,
            "tools_kwargs": {"submit_kernel": {"create_kwargs": {"task_id": task.task_id}}},
            "interaction_kwargs": {"name": "kernel_gym", "task_id": task.task_id},
        }
    assert pq.read_table(out / "val.parquet").to_pylist()[0]["extra_info"]["split"] == "val"
    single = kgym_verl.write_parquet("l1", tmp_path / "single.parquet", task_ids=[TASK])
    assert pq.read_table(single).to_pylist()[0]["agent_name"] == "single_turn_agent"

    # verl's own dataset: what the agent loop gets per sample
    import datasets

    monkeypatch.setattr(datasets.config, "HF_DATASETS_CACHE", tmp_path / "hf")
    config = OmegaConf.create({"cache_dir": str(tmp_path / "verl"), "filter_overlong_prompts": False, "tool_config_path": str(EXAMPLES / "tool_config.yaml")})
    dataset = RLHFDataset(data_files=[str(out / "train.parquet")], tokenizer=None, config=config)
    assert len(dataset) == len(prompts) and dataset.tool_schemas == [kgym_verl.submit_kernel_schema()]
    item = dataset[len(prompts) - 1]
    assert item["extra_info"]["task_id"] == TASK and item["raw_prompt"][0]["role"] == "user"
    assert item["tools_kwargs"] == {"submit_kernel": {"create_kwargs": {"task_id": TASK}}} and item["agent_name"] == "tool_agent"
    assert kgym_verl.task_id_of(item["extra_info"], item["reward_model"]["ground_truth"]) == TASK


def test_without_verl_the_reward_function_works_and_the_tool_names_the_extra() -> None:
    script = """
import importlib.abc, sys
class Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "verl":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
sys.meta_path.insert(0, Block())
import gym.integrations.verl as v
rows = v.suite_rows("l1", task_ids=["l1/vector_add"])
print(v.compute_score("kernel_gym/l1", "no code", "l1/vector_add", {"task_id": "l1/vector_add"})["status"], "verl" in sys.modules)
for name in ("KernelGymTool", "KernelGymInteraction"):
    try:
        getattr(v, name)
    except Exception as error:
        print(type(error).__name__, error)
"""
    env = {key: value for key, value in os.environ.items() if not key.startswith("KGYM_SERVE")}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, env=env, timeout=120)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.strip().splitlines()
    assert lines[0] == "no_code False"
    assert lines[1] == "MissingExtra gym.integrations.verl.KernelGymTool needs the 'verl' extra: pip install 'kernel-gym[verl]'"
    assert lines[2] == "MissingExtra gym.integrations.verl.KernelGymInteraction needs the 'verl' extra: pip install 'kernel-gym[verl]'"
    assert len(lines) == 3


def test_score_model_keys_are_fixed() -> None:
    # verl's reward loop reads every sample's extra info by the first sample's keys: the dict never varies
    turn = Turn(message="m", reward=0.0, done=False, attempt=1)
    assert set(verl_reward._turn_score(TASK, turn).model_dump()) == set(kgym_verl.Score.model_fields)


# ---------------------------------------------------------------- reward presets and returns by name

# Code the marker grader (tests.support.fake_grades) grades: "# PASS" passes at 1.5x, "# CHEAT" is rejected, the rest is wrong.
MARKED_WRONG_CODE = "import triton\n\ndef kernel(x, y):\n    return x - y\n"
MARKED_PASS_CODE = "import triton\n\ndef kernel(x, y):\n    return x + y  # PASS\n"
MARKED_CHEAT_CODE = "import triton\n\ndef kernel(x, y):\n    return x  # CHEAT\n"


@pytest.mark.parametrize(
    ("reward", "passed", "wrong"),
    [
        # A pass at 1.5x, a wrong answer, by hand:
        pytest.param(None, 1.0 + 0.5 * 0.5849625007211562, 0.0, id="default"),  # 1 + 0.5 log2(1.5)
        pytest.param("kernrl", 0.5, -0.25, id="kernrl"),  # min(1.5 - 1, 2); -0.25
        pytest.param("kernelgym", 1.5, 0.1, id="kernelgym"),  # 1 + 0.5 [1.5 > 1.05], no compile or coverage term; compiled 0.1
        pytest.param("kernelbench-fast-1.5", 0.0, 0.0, id="fast-1.5"),  # 1.5x is not faster than p = 1.5: a pass earns 0
        pytest.param("kernelbench-fast-1.4", 1.0, 0.0, id="fast-1.4"),
        pytest.param({"preset": "kernrl", "failed": -0.1}, 0.5, -0.1, id="kernrl-dict"),
    ],
)
def test_single_turn_scores_under_each_reward_preset(
    monkeypatch: pytest.MonkeyPatch, graded: list[tuple[str, Turn, int]], reward: Any, passed: float, wrong: float
) -> None:
    calls: list[tuple[str, str]] = []
    with running_server(ServerConfig(grader=marker_grader(calls))) as url:
        monkeypatch.setenv("KGYM_SERVER_URL", url)
        # A single turn's score is its own reward: `returns` changes nothing here.
        right = kgym_verl.compute_score("kernel_gym/l1", f"```python\n{MARKED_PASS_CODE}```", TASK, {"task_id": TASK}, reward=reward, returns="kevin")
        bad = kgym_verl.compute_score("kernel_gym/l1", f"```python\n{MARKED_WRONG_CODE}```", TASK, {"task_id": TASK}, reward=reward)
    kgym_verl.close_sources()
    assert len(calls) == 2 and len(graded) == 2
    assert right["score"] == pytest.approx(passed) and right["status"] == "passed" and right["acc"] == 1.0 and right["speedup"] == 1.5
    assert bad["score"] == pytest.approx(wrong) and bad["status"] == "wrong_answer" and bad["acc"] == 0.0 and bad["speedup"] is None


def test_reward_kwargs_name_a_preset_through_verls_loader(trainer_config: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    config = copy.deepcopy(trainer_config)
    with open_dict(config):
        config.reward.custom_reward_function.reward_kwargs = {"reward": "kernrl", "returns": "kevin"}
    with running_server(ServerConfig(grader=marker_grader())) as url:
        monkeypatch.setenv("KGYM_SERVER_URL", url)
        row = row_of()
        texts = [f"```python\n{MARKED_PASS_CODE}```", f"```python\n{MARKED_WRONG_CODE}```", "I give up."]
        results = run_manager(config, [sample(text, row) for text in texts])
    kgym_verl.close_sources()
    # kernrl: a pass at 1.5x 0.5, a wrong answer -0.25, no code `failed` (-0.25) without grading.
    assert [result["reward_score"] for result in results] == [pytest.approx(0.5), -0.25, -0.25]
    assert [result["reward_extra_info"]["status"] for result in results] == ["passed", "wrong_answer", "no_code"]
    with pytest.raises(ValueError, match="unknown reward preset 'fastest'"):
        kgym_verl.compute_score("kernel_gym/l1", "I give up.", TASK, {"task_id": TASK}, reward="fastest")
    with pytest.raises(ValueError, match="unknown return preset 'forever'"):
        kgym_verl.compute_score("kernel_gym/l1", "I give up.", TASK, {"task_id": TASK}, returns="forever")


def test_tool_episode_return_under_kernrl_and_kevin(trainer_config: Any) -> None:
    calls: list[tuple[str, str]] = []
    with running_server(ServerConfig(grader=marker_grader(calls))) as url:
        tool = kgym_verl.KernelGymTool({"type": "native", "server_url": url, "max_attempts": 3, "reward": "kernrl", "returns": "kevin"}, None)
        assert tool.settings.reward.preset == "kernrl" and tool.settings.return_config.discount == 0.4
        row = row_of(multi_turn=True)

        async def lifecycle() -> tuple[Any, ...]:
            # Without agent data: the instance holds the episode; calc_reward is its return.
            instance, _ = await tool.create(create_kwargs={"task_id": TASK})
            before = await tool.calc_reward(instance)
            _, first, _ = await tool.execute(instance, {"code": MARKED_WRONG_CODE})
            after_wrong = await tool.calc_reward(instance)
            _, second, _ = await tool.execute(instance, {"code": MARKED_PASS_CODE})
            score = await tool.calc_reward(instance)
            await tool.release(instance)
            # Through ToolAgentLoop's dispatch: the trajectory's record in the extra fields.
            loop, agent = loop_stub([tool]), agent_data_of(row)
            rewards = []
            for code in (MARKED_WRONG_CODE, MARKED_PASS_CODE):
                _, reward, _ = await ToolAgentLoop._call_tool(loop, call(code), agent.tools_kwargs, agent)
                rewards.append(reward)
            return before, first, after_wrong, second, score, rewards, agent

        before, first, after_wrong, second, score, rewards, agent = asyncio.run(lifecycle())
        assert len(calls) == 4
        # kernrl's `failed` before any turn; a wrong answer -0.25; a pass at 1.5x 0.5; Kevin's G_0 = -0.25 + 0.4 x 0.5.
        assert before == -0.25 and (first, after_wrong) == (-0.25, -0.25)
        assert second == pytest.approx(0.5) and score == pytest.approx(-0.05)
        assert rewards == [-0.25, pytest.approx(0.5)]
        record = agent.extra_fields[kgym_verl.EPISODE_FIELD]
        assert record == {"task_id": TASK, "score": pytest.approx(-0.05), "passed": True, "status": "passed", "speedup": 1.5, "attempts": 2, "masked": False}
        # compute_score scores the recorded return, grading nothing again (whatever returns its own kwargs name).
        results = run_manager(trainer_config, [sample("done", row, extra_fields=dict(agent.extra_fields))])
        assert results[0]["reward_score"] == pytest.approx(-0.05) and len(calls) == 4
    kgym_verl.close_sources()


def test_tool_failing_episode_scores_its_last_turn_under_last() -> None:
    with running_server(ServerConfig(grader=marker_grader())) as url:
        tool = kgym_verl.KernelGymTool({"type": "native", "server_url": url, "max_attempts": 2, "reward": "kernrl", "returns": "last"}, None)
        agent = agent_data_of(row_of(multi_turn=True))
        loop = loop_stub([tool])

        async def episode() -> list[float]:
            rewards = []
            for code in (MARKED_WRONG_CODE, MARKED_CHEAT_CODE):
                _, reward, metrics = await ToolAgentLoop._call_tool(loop, call(code), agent.tools_kwargs, agent)
                rewards.append(reward)
            assert metrics == {"status": "rejected", "attempt": 2, "done": True, "masked": False}
            return rewards

        assert asyncio.run(episode()) == [-0.25, -1.0]
    record = agent.extra_fields[kgym_verl.EPISODE_FIELD]
    # The score is the last turn's (rejected, -1); status and speedup stay the best turn's (the wrong answer).
    assert record == {"task_id": TASK, "score": -1.0, "passed": False, "status": "wrong_answer", "speedup": None, "attempts": 2, "masked": False}
    kgym_verl.close_sources()
