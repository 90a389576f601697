"""gym.integrations.skyrl against the real skyrl-gym package: the env built by `skyrl_gym.make`, graded for
real in this process (bwrap) and by a served gym (a real `kgym serve` app with a fake grader)."""

from __future__ import annotations

import importlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.integrations import needs

skyrl_gym = needs("skyrl_gym")

from pydantic import ValidationError  # noqa: E402
from skyrl_gym.envs.base_text_env import BaseTextEnv  # noqa: E402

from gym.errors import GymClientError, MissingExtra  # noqa: E402
from gym.harness.reward import reward_for  # noqa: E402
from gym.integrations import skyrl  # noqa: E402
from gym.integrations.episodes import NO_CODE_MESSAGE, suite_prompts  # noqa: E402
from gym.schema.result import GradeResult, Status  # noqa: E402
from gym.serve.server import ServerConfig  # noqa: E402
from tests.support.fake_grades import marker_grader  # noqa: E402
from tests.support.server_fixtures import FakeGrader, running_server  # noqa: E402
from tests.support.warm_bwrap import bwrap_with_pools  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
TASK = "l1/vector_add"
SOLUTION = (ROOT / "tasks" / "l1" / "vector_add" / "solution.py").read_text()
RIGHT = f"Here is my kernel:\n```python\n{SOLUTION}\n```"
WRONG = f"```python\n{SOLUTION.replace('x + y', 'x - y')}\n```"
FAKE_WRONG = "```python\nimport triton\n\ndef kernel(x, y):\n    return x - y\n```"
FAKE_PASS_CALL = (
    "<tool_call>"
    + json.dumps({"name": "submit_kernel", "arguments": {"code": "import triton\n\ndef kernel(x, y):\n    return x + y  # PASS\n"}})
    + "</tool_call>"
)


def row_of(task_id: str = TASK) -> dict[str, Any]:
    """A dataset row as SkyRL's PromptDataset reads it."""
    return skyrl.dataset_rows(task_id.split("/")[0], [task_id])[0].model_dump(mode="json")


def extras_of(row: dict[str, Any], max_turns: int = 5) -> dict[str, Any]:
    """What SkyRL's generator hands the env: every column but prompt and env_class, plus generator.max_turns."""
    return {key: value for key, value in row.items() if key not in ("prompt", "env_class")} | {"max_turns": max_turns}


def grade_of(output: dict[str, Any]) -> GradeResult:
    return GradeResult.model_validate(output["metadata"]["grade"])


@pytest.fixture(autouse=True)
def no_served_gym(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KGYM_SERVER_URL", raising=False)
    monkeypatch.delenv("KGYM_SERVE_TOKEN", raising=False)


@pytest.fixture(scope="module")
def bwrap() -> Iterator[str]:
    with pytest.MonkeyPatch.context() as patch:
        pools = bwrap_with_pools(patch, uid_offset=500)
        try:
            yield next(pools)
        finally:
            skyrl.close_executors()
            next(pools, None)


def test_registered_on_import_and_made_by_skyrl() -> None:
    assert skyrl.ENV_ID == "kernel-gym" and "kernel-gym" in skyrl_gym.registry
    assert skyrl.register_env() == "kernel-gym"  # a second registration is a no-op, not a RegistrationError
    env = skyrl_gym.make("kernel-gym", env_config={"server_url": "http://127.0.0.1:9"}, extras=extras_of(row_of()))
    assert isinstance(env, skyrl.KernelGymEnv) and isinstance(env, BaseTextEnv)
    assert env.task_id == TASK and env.max_turns == 5  # generator.max_turns when the env config names no max_attempts
    env.close()


def test_env_config_forms_and_bad_rows() -> None:
    from omegaconf import OmegaConf

    config = OmegaConf.create({"server_url": "http://127.0.0.1:9", "max_attempts": 2, "reward": {"correct": 2.0}})
    env = skyrl_gym.make("kernel-gym", env_config=config, extras={"task_id": TASK, "max_turns": 7})
    assert env.max_turns == 2 and env.settings.reward is not None and env.settings.reward.correct == 2.0
    with pytest.raises(ValidationError, match="max_attemps"):
        skyrl_gym.make("kernel-gym", env_config={"max_attemps": 2}, extras=extras_of(row_of()))
    with pytest.raises(ValueError, match="task_id"):
        skyrl_gym.make("kernel-gym", env_config={"server_url": "http://127.0.0.1:9"}, extras={"extra_info": {}})


def test_dataset_round_trip(tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    path = skyrl.write_dataset("l1", tmp_path / "data" / "train.parquet", task_ids=[TASK, "l1/softmax"], system_prompt="Write Triton.")
    # Read as SkyRL's PromptDataset does.
    loaded = datasets.load_dataset("parquet", data_files=str(path), keep_in_memory=True, cache_dir=str(tmp_path / "hf"))["train"]
    rows = [dict(row) for row in loaded]
    prompts = {prompt.task_id: prompt for prompt in suite_prompts("l1", [TASK, "l1/softmax"])}
    assert [row["extra_info"]["task_id"] for row in rows] == ["l1/softmax", TASK]
    for index, row in enumerate(rows):
        assert row["env_class"] == "kernel-gym" and row["data_source"] == "kernel-gym"
        task = prompts[row["extra_info"]["task_id"]]
        assert row["prompt"] == [{"role": "system", "content": "Write Triton."}, {"role": "user", "content": task.prompt}]
        assert row["extra_info"] == {
            "task_id": task.task_id,
            "suite": "l1",
            "title": task.title,
            "index": index,
            "task_split": task.split,
            "metadata": task.metadata,
        }
        # The gym's split and curriculum metadata travel with the row.
        assert task.split in ("train", "val", "test") and task.metadata["source"] == "shipped" and task.metadata["split"] == task.split
        assert row == skyrl.DatasetRow.model_validate(row).model_dump(mode="json")
    held_out = skyrl.dataset_rows("l1", task_split="test")
    assert held_out and {row.extra_info.task_split for row in held_out} == {"test"}
    assert {row.extra_info.task_id for row in held_out} == {prompt.task_id for prompt in suite_prompts("l1") if prompt.split == "test"}
    env = skyrl_gym.make(rows[1]["env_class"], env_config={"server_url": "http://127.0.0.1:9"}, extras=extras_of(rows[1]))
    assert env.task_id == TASK


def test_in_process_episode_no_code_wrong_then_right(bwrap: str) -> None:
    row = row_of()
    env = skyrl_gym.make("kernel-gym", env_config={"max_attempts": 3, "sandbox": bwrap}, extras=extras_of(row))
    prompt, info = env.init(row["prompt"])
    assert prompt == row["prompt"] and info["task_id"] == TASK

    empty = env.step("I am not sure how to write this kernel.")
    assert set(empty) >= {"observations", "reward", "done", "metadata"}
    assert empty["observations"] == [{"role": "user", "content": f"{NO_CODE_MESSAGE} (2 attempt(s) left)"}]
    assert empty["reward"] == 0.0 and empty["done"] is False and empty["metadata"]["status"] is None

    wrong = env.step(WRONG)
    grade = grade_of(wrong)
    assert grade.status == Status.wrong_answer and wrong["done"] is False
    assert wrong["reward"] == reward_for(grade) == 0.0
    [message] = wrong["observations"]
    assert message["role"] == "user" and "status: wrong_answer" in message["content"] and "(1 left)" in message["content"]
    assert grade.feedback.strip().splitlines()[0] in message["content"]

    right = env.step(RIGHT)
    grade = grade_of(right)
    assert grade.status == Status.passed and right["done"] is True and right["metadata"]["passed"] is True
    assert right["reward"] == reward_for(grade) and right["reward"] > 0
    # As in SkyRL's own environments, the last step sends no observation; its message stays in the metadata.
    assert right["observations"] == [] and "The submission passed." in right["metadata"]["message"]
    # The episode's return is the best turn's by default.
    assert env.get_metrics() == {"attempts": 3, "passed": 1.0, "best_reward": right["reward"], "episode_return": right["reward"], "masked": 0.0}
    assert right["metadata"]["episode_return"] == right["reward"] and right["metadata"]["turn_returns"][-1] == right["reward"]
    with pytest.raises(skyrl.EpisodeOver):
        env.step(RIGHT)
    env.close()
    assert env.episode is None


def test_in_process_attempts_run_out(bwrap: str) -> None:
    row = row_of()
    # No max_attempts in the env config: generator.max_turns=1 (SkyRL's extras) makes it a single-turn episode.
    env = skyrl_gym.make("kernel-gym", env_config={"sandbox": bwrap}, extras=extras_of(row, max_turns=1))
    env.init(row["prompt"])
    out = env.step(WRONG)
    assert out["done"] is True and out["observations"] == [] and out["metadata"]["passed"] is False
    assert out["reward"] == reward_for(grade_of(out)) == 0.0 and "No attempts left." in out["metadata"]["message"]
    assert env.get_metrics()["passed"] == 0.0
    env.close()


def test_served_gym_with_token(monkeypatch: pytest.MonkeyPatch) -> None:
    row = row_of()
    grader = FakeGrader()
    with running_server(ServerConfig(grader=grader, token="s3cret", max_attempts=5)) as url:
        monkeypatch.setenv("KGYM_SERVER_URL", url)
        monkeypatch.setenv("KGYM_SERVE_TOKEN", "wrong")
        refused = skyrl_gym.make("kernel-gym", env_config={}, extras=extras_of(row))
        with pytest.raises(GymClientError):
            refused.init(row["prompt"])

        monkeypatch.setenv("KGYM_SERVE_TOKEN", "s3cret")
        env = skyrl_gym.make("kernel-gym", env_config={"max_attempts": 3}, extras=extras_of(row))
        assert env.episodes.server_url == url
        prompt, _ = env.init(row["prompt"])
        assert prompt == row["prompt"]
        wrong = env.step(FAKE_WRONG)
        assert wrong["done"] is False and wrong["reward"] == reward_for(grade_of(wrong)) == 0.0
        assert wrong["observations"][0]["role"] == "user" and "differs from the reference" in wrong["observations"][0]["content"]
        # A submit_kernel tool call written in the text, as Hermes/Qwen chat templates do.
        right = env.step(f"Submitting now.\n{FAKE_PASS_CALL}")
        assert right["done"] is True and right["metadata"]["status"] == "passed"
        assert right["reward"] == reward_for(grade_of(right)) > 0
        assert grader.calls == 2
        env.close()

        spent = skyrl_gym.make("kernel-gym", env_config={"max_attempts": 2}, extras=extras_of(row))
        spent.init(row["prompt"])
        assert spent.step(FAKE_WRONG)["done"] is False
        last = spent.step(FAKE_WRONG)
        assert last["done"] is True and last["metadata"]["passed"] is False and last["metadata"]["attempts_left"] == 0
        with pytest.raises(skyrl.EpisodeOver):
            spent.step(FAKE_WRONG)
        spent.close()
        health = httpx.get(f"{url}/health").json()
        assert health["sessions"] == 0  # close() ended each env's server session


def test_missing_skyrl_gym_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "skyrl_gym", None)  # type: ignore[arg-type]
    monkeypatch.delitem(sys.modules, "gym.integrations.skyrl")
    with pytest.raises(MissingExtra) as error:
        importlib.import_module("gym.integrations.skyrl")
    assert str(error.value) == "gym.integrations.skyrl needs the 'skyrl' extra: pip install 'kernel-gym[skyrl]'"


def test_a_reward_preset_and_kevins_return_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    row = row_of()
    with running_server(ServerConfig(grader=FakeGrader(), max_attempts=5)) as url:
        monkeypatch.setenv("KGYM_SERVER_URL", url)
        env = skyrl_gym.make("kernel-gym", env_config={"max_attempts": 3, "reward": "kernrl", "returns": "kevin"}, extras=extras_of(row))
        assert env.settings.reward is not None and env.settings.reward.preset == "kernrl"
        env.init(row["prompt"])
        wrong = env.step(FAKE_WRONG)
        assert wrong["reward"] == -0.25  # kernrl: a wrong answer
        right = env.step(FAKE_PASS_CALL)
        # kernrl: min(2x - 1, 2) = 1.0; each step's reward stays its own turn's.
        assert right["reward"] == pytest.approx(1.0)
        # Kevin's return: G_0 = -0.25 + 0.4 x 1.0, G_1 = 1.0.
        assert right["metadata"]["turn_returns"] == [pytest.approx(0.15), pytest.approx(1.0)]
        assert right["metadata"]["episode_return"] == pytest.approx(0.15) and env.get_metrics()["episode_return"] == pytest.approx(0.15)
        env.close()
    with pytest.raises(ValidationError, match="unknown reward preset 'fastest'"):
        skyrl_gym.make("kernel-gym", env_config={"reward": "fastest"}, extras=extras_of(row))


# Code the marker grader (tests.support.fake_grades) grades: "# PASS" passes at 1.5x, "# CHEAT" is rejected, the rest is wrong.
MARKED_WRONG = "```python\nimport triton\n\ndef kernel(x, y):\n    return x - y\n```"
MARKED_PASS = "```python\nimport triton\n\ndef kernel(x, y):\n    return x + y  # PASS\n```"
MARKED_CHEAT = "```python\nimport triton\n\ndef kernel(x, y):\n    return x  # CHEAT\n```"


def test_kernrl_and_kevin_from_skyrls_config_step_by_step(monkeypatch: pytest.MonkeyPatch) -> None:
    from omegaconf import OmegaConf

    row = row_of()
    calls: list[tuple[str, str]] = []
    with running_server(ServerConfig(grader=marker_grader(calls), max_attempts=5)) as url:
        monkeypatch.setenv("KGYM_SERVER_URL", url)
        config = OmegaConf.create({"max_attempts": 3, "reward": "kernrl", "returns": "kevin"})  # as SkyRL's env config hands it over
        env = skyrl_gym.make("kernel-gym", env_config=config, extras=extras_of(row))
        assert env.settings.returns is not None and (env.settings.returns.aggregate, env.settings.returns.discount) == ("discounted", 0.4)
        env.init(row["prompt"])
        wrong = env.step(MARKED_WRONG)
        # kernrl: a wrong answer -0.25; one turn's return is its own reward.
        assert wrong["reward"] == -0.25 and wrong["done"] is False
        assert wrong["metadata"]["episode_return"] == -0.25 and wrong["metadata"]["turn_returns"] == [-0.25]
        assert env.get_metrics()["episode_return"] == -0.25
        right = env.step(MARKED_PASS)
        # kernrl: a pass at 1.5x earns min(1.5 - 1, 2) = 0.5 (the step's own reward); Kevin: G_0 = -0.25 + 0.4 x 0.5.
        assert right["done"] is True and right["metadata"]["status"] == "passed" and right["metadata"]["speedup_vs_eager"] == 1.5
        assert right["reward"] == pytest.approx(0.5)
        assert right["metadata"]["turn_returns"] == [pytest.approx(-0.05), pytest.approx(0.5)]
        assert right["metadata"]["episode_return"] == pytest.approx(-0.05)
        assert env.get_metrics() == {"attempts": 2, "passed": 1.0, "best_reward": pytest.approx(0.5), "episode_return": pytest.approx(-0.05), "masked": 0.0}
        env.close()
    assert len(calls) == 2


@pytest.mark.parametrize(
    ("returns", "episode_return", "turn_returns"),
    [
        # wrong then rejected under kernrl: r = [-0.25, -1]; turn_returns use the return's gamma (1 for best and last).
        pytest.param({}, -0.25, [-1.25, -1.0], id="best-by-default"),
        pytest.param({"returns": "best"}, -0.25, [-1.25, -1.0], id="best"),
        pytest.param({"returns": "last"}, -1.0, [-1.25, -1.0], id="last"),
        pytest.param({"returns": "kevin"}, -0.65, [-0.65, -1.0], id="kevin"),  # -0.25 + 0.4 x -1
        pytest.param({"discount": 0.5}, -0.75, [-0.75, -1.0], id="discount-alone"),  # -0.25 + 0.5 x -1
        pytest.param({"returns": "kevin", "discount": 0.5}, -0.75, [-0.75, -1.0], id="kevin-discount-0.5"),
        pytest.param({"returns": {"aggregate": "discounted", "discount": 0.25}}, -0.5, [-0.5, -1.0], id="discounted-0.25"),
    ],
)
def test_returns_of_a_failing_kernrl_episode(
    monkeypatch: pytest.MonkeyPatch, returns: dict[str, Any], episode_return: float, turn_returns: list[float]
) -> None:
    row = row_of()
    with running_server(ServerConfig(grader=marker_grader(), max_attempts=5)) as url:
        monkeypatch.setenv("KGYM_SERVER_URL", url)
        env = skyrl_gym.make("kernel-gym", env_config={"max_attempts": 2, "reward": "kernrl", **returns}, extras=extras_of(row))
        env.init(row["prompt"])
        wrong = env.step(MARKED_WRONG)
        cheat = env.step(MARKED_CHEAT)
        assert cheat["done"] is True and cheat["metadata"]["status"] == "rejected" and cheat["metadata"]["passed"] is False
        # Each step's reward stays its own turn's: kernrl's wrong answer, then the rejected -1.
        assert (wrong["reward"], cheat["reward"]) == (-0.25, -1.0)
        assert cheat["metadata"]["turn_returns"] == [pytest.approx(value) for value in turn_returns]
        assert cheat["metadata"]["episode_return"] == pytest.approx(episode_return)
        assert env.get_metrics() == {"attempts": 2, "passed": 0.0, "best_reward": -0.25, "episode_return": pytest.approx(episode_return), "masked": 0.0}
        env.close()


def test_unknown_return_presets_and_bad_discounts_are_refused() -> None:
    extras = extras_of(row_of())
    with pytest.raises(ValidationError, match="unknown return preset 'forever'"):
        skyrl_gym.make("kernel-gym", env_config={"server_url": "http://127.0.0.1:9", "returns": "forever"}, extras=extras)
    with pytest.raises(ValidationError, match="discount"):
        skyrl_gym.make("kernel-gym", env_config={"server_url": "http://127.0.0.1:9", "returns": "kevin", "discount": 1.5}, extras=extras)
    with pytest.raises(ValidationError, match="unknown reward preset 'kernrl2'"):
        skyrl_gym.make("kernel-gym", env_config={"server_url": "http://127.0.0.1:9", "reward": "kernrl2"}, extras=extras)


MARKED_INFRA = "```python\nimport triton\n\ndef kernel(x, y):\n    return x  # INFRA\n```"


def test_a_masked_infra_error_is_marked_and_paid_no_more_than_a_wrong_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    row = row_of()
    with running_server(ServerConfig(grader=marker_grader(), max_attempts=5)) as url:
        monkeypatch.setenv("KGYM_SERVER_URL", url)
        env = skyrl_gym.make("kernel-gym", env_config={"max_attempts": 3, "reward": "kernrl"}, extras=extras_of(row))
        env.init(row["prompt"])
        wrong = env.step(MARKED_WRONG)
        assert wrong["metadata"]["masked"] is False and env.get_metrics()["masked"] == 0.0
        infra = env.step(MARKED_INFRA)
        assert infra["metadata"]["status"] == "infra_error" and infra["metadata"]["masked"] is True
        assert infra["reward"] == wrong["reward"] == -0.25  # kernrl: never above a wrong answer (it paid 0 before)
        assert env.get_metrics()["masked"] == 1.0
        env.close()
