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

from gym.harness.server import ServerConfig  # noqa: E402
from gym.integrations.openenv import KernelAction, KernelGymEnv, KernelObservation, KernelState  # noqa: E402
from gym.schema.result import Status  # noqa: E402
from gym.tasks.loader import find_task  # noqa: E402
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
