"""OpenEnv, fully: openenv-core's runtime validator passes against the real server, and an episode runs
through the shipped `KernelGymEnv` (openenv-core's own EnvClient), with the token and with real grades."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
import yaml

from tests.support.integrations import needs

needs("openenv.core")

from pydantic import ValidationError  # noqa: E402

from gym.integrations.openenv import KernelAction, KernelGymEnv, KernelObservation, KernelState  # noqa: E402
from gym.schema.result import Status  # noqa: E402
from gym.serve.server import ServerConfig  # noqa: E402
from gym.tasks.loader import find_task  # noqa: E402
from tests.support.fake_grades import marker_grader  # noqa: E402
from tests.support.serve_process import ServerProcess  # noqa: E402
from tests.support.server_fixtures import FakeGrader, running_server  # noqa: E402

TASK = "l1/vector_add"
TOKEN = "openenv-test-token"
RIGHT = "def kernel(x, y):\n    return x + y  # PASS\n"
WRONG = "def kernel(x, y):\n    return x - y\n"
ROOT = Path(__file__).resolve().parents[2]
OPENENV = Path(sys.executable).with_name("openenv")


@pytest.fixture(scope="module")
def open_url() -> Iterator[str]:
    """A loopback server without a token: what `openenv validate` (which sends none) can check."""
    with running_server(ServerConfig(grader=FakeGrader(), max_attempts=3)) as url:
        yield url


@pytest.fixture(scope="module")
def guarded_url() -> Iterator[str]:
    with running_server(ServerConfig(grader=FakeGrader(), max_attempts=3, token=TOKEN)) as url:
        yield url


def test_openenv_validate_passes_every_criterion(open_url: str) -> None:
    run = subprocess.run([str(OPENENV), "validate", "--url", open_url], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    report = json.loads(run.stdout)
    assert report["passed"] is True and report["mode"] == "simulation"
    criteria = {item["id"]: item["passed"] for item in report["criteria"]}
    assert criteria == {
        "openapi_version_available": True,
        "health_endpoint": True,
        "metadata_endpoint": True,
        "schema_endpoint": True,
        "mcp_endpoint": True,
        "mode_endpoint_consistency": True,
    }


def test_an_episode_through_the_shipped_client(guarded_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KGYM_SERVE_TOKEN", raising=False)
    with KernelGymEnv(base_url=guarded_url, token=TOKEN).sync() as env:
        first = env.reset(task_id=TASK)
        assert isinstance(first.observation, KernelObservation)
        assert first.observation.task_id == TASK and "def kernel" in first.observation.prompt and not first.done
        wrong = env.step(KernelAction(code=WRONG))
        assert wrong.reward == 0.0 and not wrong.done and wrong.observation.summary is not None
        assert wrong.observation.summary.status == Status.wrong_answer and wrong.observation.attempts_left == 2
        right = env.step(KernelAction(code=RIGHT, task_id=TASK))
        assert right.done and right.reward is not None and right.reward > 1.0
        assert right.observation.grade is not None and right.observation.grade.status == Status.passed
        state = env.state()
        assert isinstance(state, KernelState) and state.step_count == state.attempts == 2 and state.done
        assert state.rewards == [0.0, right.reward]


def test_the_client_reads_the_token_variable_and_is_refused_without_it(guarded_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("KGYM_SERVE_TOKEN", raising=False)
    with pytest.raises(ConnectionError, match="401"):
        KernelGymEnv(base_url=guarded_url).sync().reset(task_id=TASK)
    monkeypatch.setenv("KGYM_SERVE_TOKEN", TOKEN)
    with KernelGymEnv(base_url=guarded_url).sync() as env:
        assert env.reset(task_id=TASK).observation.task_id == TASK


def test_a_real_grade_through_the_client() -> None:
    solution = find_task(TASK).solution_path.read_text()
    with running_server(ServerConfig(max_attempts=2)) as url, KernelGymEnv(base_url=url).sync() as env:
        env.reset(task_id=TASK)
        result = env.step(KernelAction(code=solution))
    assert result.done and result.observation.summary is not None and result.observation.summary.status == Status.passed
    assert result.observation.grade is not None and result.observation.grade.environment.sandbox == "bwrap"


def test_the_manifest_describes_the_served_environment(open_url: str) -> None:
    manifest = yaml.safe_load((ROOT / "openenv.yaml").read_text())
    assert manifest["spec_version"] == 1 and manifest["runtime"] == "fastapi"
    assert manifest["name"] == httpx.get(open_url + "/metadata").json()["name"]
    for key in ("app", "client", "action", "observation", "state"):
        module, _, attribute = manifest[key].partition(":")
        assert hasattr(importlib.import_module(module), attribute), manifest[key]


def test_the_served_reward_preset_and_return_reach_the_client() -> None:
    with running_server(ServerConfig(grader=FakeGrader(), max_attempts=3, reward="kernrl", returns="kevin")) as url:
        with KernelGymEnv(base_url=url).sync() as env:
            env.reset(task_id=TASK)
            wrong = env.step(KernelAction(code=WRONG))
            right = env.step(KernelAction(code=RIGHT))
            # kernrl: a wrong answer -0.25, a pass at 2x min(2 - 1, 2) = 1.0.
            assert (wrong.reward, right.reward) == (-0.25, pytest.approx(1.0))
            state = env.state()
            assert state.reward_preset == "kernrl" and state.returns == "discounted(0.4)"
            assert state.episode_return == pytest.approx(-0.25 + 0.4 * 1.0)


# Code the marker grader (tests.support.fake_grades) grades: "# PASS" passes at 1.5x, "# CHEAT" is rejected, the rest is wrong.
MARKED_PASS = "def kernel(x, y):\n    return x + y  # PASS\n"
MARKED_CHEAT = "def kernel(x, y):\n    return x  # CHEAT\n"


def test_kernrl_and_kevin_state_step_by_step() -> None:
    calls: list[tuple[str, str]] = []
    with running_server(ServerConfig(grader=marker_grader(calls), max_attempts=3, reward="kernrl", returns="kevin")) as url:
        with KernelGymEnv(base_url=url).sync() as env:
            env.reset(task_id=TASK)
            fresh = env.state()
            assert isinstance(fresh, KernelState)
            assert (fresh.reward_preset, fresh.returns, fresh.episode_return, fresh.rewards) == ("kernrl", "discounted(0.4)", None, [])
            wrong = env.step(KernelAction(code=WRONG))
            assert wrong.reward == -0.25 and not wrong.done  # kernrl: a wrong answer
            assert env.state().episode_return == -0.25  # one turn's return is its own reward
            right = env.step(KernelAction(code=MARKED_PASS))
            # kernrl: a pass at 1.5x min(1.5 - 1, 2) = 0.5 (the step's reward is the turn's own).
            assert right.done and right.reward == pytest.approx(0.5)
            assert right.observation.grade is not None and right.observation.grade.speedup_vs_eager == 1.5
            state = env.state()
            assert state.rewards == [-0.25, pytest.approx(0.5)] and state.best_reward == pytest.approx(0.5)
            # Kevin's return: G_0 = -0.25 + 0.4 x 0.5.
            assert state.episode_return == pytest.approx(-0.05) and state.done and state.attempts == 2
    assert len(calls) == 2


@pytest.mark.parametrize(
    ("returns", "described", "episode_return"),
    [
        # wrong then rejected under kernrl: r = [-0.25, -1].
        pytest.param("best", "best", -0.25, id="best"),
        pytest.param("last", "last", -1.0, id="last"),
        pytest.param("kevin", "discounted(0.4)", -0.65, id="kevin"),  # -0.25 + 0.4 x -1
        pytest.param("discounted", "discounted(1)", -1.25, id="discounted"),
        pytest.param({"aggregate": "discounted", "discount": 0.5}, "discounted(0.5)", -0.75, id="discounted-0.5"),
    ],
)
def test_the_served_return_of_a_failing_kernrl_episode(returns: object, described: str, episode_return: float) -> None:
    with running_server(ServerConfig(grader=marker_grader(), max_attempts=2, reward="kernrl", returns=returns)) as url:
        with KernelGymEnv(base_url=url).sync() as env:
            env.reset(task_id=TASK)
            wrong = env.step(KernelAction(code=WRONG))
            cheat = env.step(KernelAction(code=MARKED_CHEAT))
            assert (wrong.reward, cheat.reward) == (-0.25, -1.0) and cheat.done
            assert cheat.observation.summary is not None and cheat.observation.summary.status == Status.rejected
            state = env.state()
            assert state.returns == described and state.reward_preset == "kernrl"
            assert state.rewards == [-0.25, -1.0] and state.best_reward == -0.25
            assert state.episode_return == pytest.approx(episode_return)


def test_the_server_refuses_unknown_presets_and_names_fast_p_presets() -> None:
    with pytest.raises(ValidationError, match="unknown reward preset 'fastest'"):
        ServerConfig(reward="fastest")
    with pytest.raises(ValidationError, match="unknown return preset 'forever'"):
        ServerConfig(returns="forever")
    # kernelbench-fast-1.5: a pass at 1.5x is not faster than p = 1.5, so it earns `failed` (0); the state names p.
    with running_server(ServerConfig(grader=marker_grader(), max_attempts=2, reward="kernelbench-fast-1.5")) as url:
        with KernelGymEnv(base_url=url).sync() as env:
            env.reset(task_id=TASK)
            right = env.step(KernelAction(code=MARKED_PASS))
            assert right.done and right.reward == 0.0 and right.observation.summary is not None
            assert right.observation.summary.status == Status.passed
            state = env.state()
            assert (state.reward_preset, state.returns, state.episode_return) == ("kernelbench-fast-1.5", "best", 0.0)


def test_kgym_serve_reward_and_returns_options_reach_the_client(tmp_path: Path) -> None:
    """The real `kgym serve --reward kernrl --returns kevin`, grading for real (bwrap): two wrong answers."""
    wrong = find_task(TASK).solution_path.read_text().replace("x + y", "x - y")
    server = ServerProcess(tmp_path / "state", tmp_path / "serve.log", "--attempts", "2", "--reward", "kernrl", "--returns", "kevin")
    try:
        with KernelGymEnv(base_url=server.url).sync() as env:
            env.reset(task_id=TASK)
            first = env.step(KernelAction(code=wrong))
            second = env.step(KernelAction(code=wrong))
            state = env.state()
    finally:
        server.stop()
    assert first.observation.summary is not None and first.observation.summary.status == Status.wrong_answer, first.observation.feedback
    assert (first.reward, second.reward) == (-0.25, -0.25) and second.done  # kernrl: a wrong answer
    assert state.reward_preset == "kernrl" and state.returns == "discounted(0.4)"
    # Kevin's return: -0.25 + 0.4 x -0.25.
    assert state.episode_return == pytest.approx(-0.35)


MARKED_INFRA = "def kernel(x, y):\n    return x  # INFRA\n"


def test_a_masked_infra_error_comes_back_without_a_reward() -> None:
    """OpenEnv's own "no reward": StepResult.reward None, the server's number kept in metadata."""
    with running_server(ServerConfig(grader=marker_grader(), max_attempts=3, reward="kernrl")) as url:
        with KernelGymEnv(base_url=url).sync() as env:
            env.reset(task_id=TASK)
            wrong = env.step(KernelAction(code=WRONG))
            assert wrong.reward == -0.25 and not wrong.observation.masked
            infra = env.step(KernelAction(code=MARKED_INFRA))
            assert infra.reward is None and infra.observation.reward is None and infra.observation.masked
            assert infra.observation.grade is not None and infra.observation.grade.status.value == "infra_error"
            assert infra.observation.metadata["gym_reward"] == -0.25 and infra.observation.metadata["masked"] is True


def test_masked_reward_reads_an_older_servers_grade() -> None:
    from gym.integrations.openenv import masked_reward
    from tests.support.fake_grades import fake_grade

    grade = fake_grade(TASK, "", Status.infra_error).model_dump(mode="json")
    del grade["masked"]
    assert masked_reward({"grade": grade}, 0.0, {}) == (None, {"gym_reward": 0.0, "masked": True})
    wrong = fake_grade(TASK, "", Status.wrong_answer).model_dump(mode="json")
    assert masked_reward({"grade": wrong}, -0.25, {}) == (-0.25, {})
