"""gym.integrations.verifiers: real verifiers rollouts (interception, harness, scoring) against a scripted
OpenAI-compatible server, graded for real in process (bwrap) or by a served gym."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.integrations import needs

vf = needs("verifiers.v1")

from verifiers.v1.cli.eval.runner import run_eval  # noqa: E402
from verifiers.v1.configs.cli.eval import EvalConfig  # noqa: E402

from gym.harness.reward import RewardConfig, reward_for  # noqa: E402
from gym.integrations.episodes import NO_CODE_MESSAGE, suite_prompts  # noqa: E402
from gym.integrations.verifiers import (  # noqa: E402
    PLUGIN_ID,
    STOP_OUT_OF_ATTEMPTS,
    STOP_PASSED,
    SYSTEM_PROMPT,
    KernelEnv,
    KernelEnvConfig,
    KernelState,
    evaluate,
    load_environment,
)
from gym.schema.result import Status  # noqa: E402
from gym.serve.server import ServerConfig  # noqa: E402
from gym.tasks.loader import find_task  # noqa: E402
from tests.support.fake_grades import marker_grader  # noqa: E402
from tests.support.fake_openai import FakeOpenAI, submit, text  # noqa: E402
from tests.support.server_fixtures import FakeGrader, running_server  # noqa: E402
from tests.support.warm_bwrap import bwrap_with_pools  # noqa: E402

KEY_VAR = "KGYM_TEST_VF_KEY"
SECRET = "sk-vf-test-5678"
TOKEN = "serve-token-for-the-verifiers-test"
MODEL = "fake-model-1"
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeOpenAI]:
    monkeypatch.setenv(KEY_VAR, SECRET)
    server = FakeOpenAI()
    yield server
    server.close()


@pytest.fixture
def bwrap(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    yield from bwrap_with_pools(monkeypatch, 3500)


def client(fake: FakeOpenAI) -> Any:
    return vf.EvalClientConfig(base_url=fake.base_url, api_key_var=KEY_VAR)


def state_of(trace: Any) -> KernelState:
    assert isinstance(trace.state, KernelState)
    return trace.state


def fenced(code: str, before: str = "Here is my kernel.") -> str:
    return f"{before}\n```python\n{code}```\n"


def solution(task_id: str) -> str:
    return find_task(task_id).solution_path.read_text(encoding="utf-8")


def broken(task_id: str, old: str, new: str) -> str:
    code = solution(task_id)
    assert old in code
    return code.replace(old, new)


def test_rollout_over_two_tasks_feeds_grades_back_and_stops_on_pass(fake: FakeOpenAI, bwrap: str) -> None:
    """vector_add answers in fenced blocks, silu through the submit_kernel tool: wrong first, then the shipped solution."""
    right = {task_id: solution(task_id) for task_id in ("l1/vector_add", "l1/silu")}
    fake.route(
        "l1/vector_add",
        [text(fenced(broken("l1/vector_add", "x + y", "x - y"), "First try.")), text(fenced(right["l1/vector_add"])), text("never asked")],
    )
    fake.route(
        "l1/silu",
        [submit(broken("l1/silu", "y = x / (1.0 + tl.exp(-x))", "y = x"), "call_a"), submit(right["l1/silu"], "call_b"), submit("never", "call_c")],
    )
    env = load_environment(suite="l1", attempts=3, task_ids=["l1/vector_add", "l1/silu"], sandbox=bwrap)
    assert isinstance(env, KernelEnv)
    ctx = vf.ModelContext(model=MODEL, client=client(fake))

    async def rollouts() -> list[Any]:
        # verifiers' own rollout API: the env's serving resources, one planned slot per task, run concurrently.
        async with env.serving():
            slots = [slot for task in env.taskset for slot in env.slots(task)]
            return list(await asyncio.gather(*(env.run_slot(slot, ctx) for slot in slots)))

    episodes = asyncio.run(rollouts())

    traces = {episode.traces[0].task.data.id: episode.traces[0] for episode in episodes}
    assert sorted(traces) == ["l1/silu", "l1/vector_add"]
    prompts = {prompt.task_id: prompt.prompt for prompt in suite_prompts("l1", list(traces))}
    for task_id, trace in traces.items():
        assert trace.ok, trace.errors
        state = state_of(trace)
        grades = [turn.grade for turn in state.turns]
        assert [turn.status for turn in state.turns] == [Status.wrong_answer, Status.passed], [g.feedback if g else None for g in grades]
        assert all(grade is not None for grade in grades)
        # The rubric is the gym's reward of the real grades: each turn's, and the episode's best (its pass).
        assert [turn.reward for turn in state.turns] == [reward_for(grade) for grade in grades if grade is not None]
        expected = max(reward_for(grade) for grade in grades if grade is not None)
        assert expected == state.turns[-1].reward > 0
        assert trace.rewards["kernel_reward"] is not None and trace.rewards["kernel_reward"].score == expected
        assert trace.reward == expected
        assert trace.metrics["attempts"] == 2 and trace.metrics["passed"] == 1
        assert trace.metrics["last_reward"] == expected and trace.metrics["best_reward"] == expected
        assert trace.stop_condition == STOP_PASSED
        assert state.episode is None  # closed with the rollout
        assert [turn["status"] for turn in trace.info["kgym"]["turns"]] == ["wrong_answer", "passed"]

        # Two model calls, no third after the pass; the first carries the system prompt, the task's prompt and the tool.
        bodies = fake.bodies(task_id)
        assert len(bodies) == 2 and len(fake.routes[task_id]) == 1
        first = bodies[0]["messages"]
        assert first[0] == {"role": "system", "content": SYSTEM_PROMPT}
        assert first[1] == {"role": "user", "content": prompts[task_id]}
        assert [tool["function"]["name"] for tool in bodies[0]["tools"]] == ["submit_kernel"]
        assert bodies[0]["model"] == MODEL

        # The environment's reply to the wrong turn is its grade feedback, after the whole conversation so far.
        answered_as = "tool" if task_id == "l1/silu" else "user"
        assert [message["role"] for message in bodies[1]["messages"]] == ["system", "user", "assistant", answered_as]
        reply = bodies[1]["messages"][-1]
        wrong = state.turns[0]
        assert wrong.grade is not None and wrong.grade.feedback.strip()
        assert reply["content"] == wrong.message
        assert "status: wrong_answer" in reply["content"] and "attempt: 1 (2 left)" in reply["content"]
        assert wrong.grade.feedback.strip() in reply["content"]

    # A fenced answer is answered as the user; a tool call, as that call's result.
    vector_add = fake.bodies("l1/vector_add")[1]["messages"]
    assert vector_add[-2]["role"] == "assistant" and vector_add[-2]["content"].startswith("First try.")
    assert vector_add[-1]["role"] == "user"
    silu = fake.bodies("l1/silu")[1]["messages"]
    assert [call["id"] for call in silu[-2]["tool_calls"]] == ["call_a"]
    assert silu[-1]["role"] == "tool" and silu[-1]["tool_call_id"] == "call_a"
    assert all(request["headers"]["authorization"] == f"Bearer {SECRET}" for request in fake.requests)


def test_served_gym_grades_the_episode_with_a_bearer_token(fake: FakeOpenAI) -> None:
    grader = FakeGrader()
    fake.route("l1/vector_add", [text(fenced("def kernel(x, y):\n    return x\n")), submit("def kernel(x, y):\n    return x + y  # PASS\n")])
    with running_server(ServerConfig(grader=grader, token=TOKEN)) as url:
        env = load_environment(attempts=3, server_url=url, token=TOKEN, task_ids=["l1/vector_add"])
        assert env.config.server_url == url
        assert TOKEN not in env.config.model_dump_json()
        [episode] = asyncio.run(evaluate(env, model=MODEL, client=client(fake)))

        trace = episode.traces[0]
        assert trace.ok, trace.errors
        state = state_of(trace)
        assert grader.calls == 2
        assert [turn.status for turn in state.turns] == [Status.wrong_answer, Status.passed]
        assert [turn.reward for turn in state.turns] == [reward_for(turn.grade) for turn in state.turns if turn.grade is not None]
        assert trace.reward == reward_for(state.turns[-1].grade) == 1.5  # FakeGrader's 2x speedup  # type: ignore[arg-type]
        assert trace.stop_condition == STOP_PASSED

        # Without the token the served gym refuses to open the episode: the rollout fails, nothing is graded.
        fake.route("l1/vector_add", [text("unused")])
        refused = load_environment(server_url=url, token="not-the-token", task_ids=["l1/vector_add"])
        [failed] = asyncio.run(evaluate(refused, model=MODEL, client=client(fake)))
        assert not failed.ok
        assert "401" in json.dumps([error.message for trace in failed.traces for error in trace.errors] + [e.message for e in failed.errors])
        assert grader.calls == 2


def test_turn_without_code_gets_the_no_code_message_and_counts_an_attempt(fake: FakeOpenAI, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through verifiers' eval runner, the env resolved by its plugin id and graded by a served gym."""
    monkeypatch.setenv("KGYM_SERVE_TOKEN", TOKEN)
    monkeypatch.setenv("VF_RUN_ID", "kgym-verifiers-test")
    grader = FakeGrader()
    fake.route("l1/vector_add", [text("Let me first explain the algorithm."), text("Still no code, sorry."), text("never asked")])
    with running_server(ServerConfig(grader=grader, token=TOKEN)) as url:
        config = EvalConfig(
            env={"taskset": {"id": PLUGIN_ID, "task_ids": ["l1/vector_add"]}, "server_url": url, "attempts": 2},
            model=MODEL,
            client=client(fake),
            rich=None,
            push=False,
            output_dir=tmp_path,
        )
        assert isinstance(config.env, KernelEnvConfig)
        [episode] = asyncio.run(run_eval(config))

    trace = episode.traces[0]
    assert trace.ok, trace.errors
    state = state_of(trace)
    failed = RewardConfig().failed
    assert [(turn.status, turn.attempt, turn.reward) for turn in state.turns] == [(None, 1, failed), (None, 2, failed)]
    assert trace.reward == failed and trace.metrics["attempts"] == 2 and trace.metrics["passed"] == 0
    assert trace.stop_condition == STOP_OUT_OF_ATTEMPTS
    assert grader.calls == 0
    bodies = fake.bodies("l1/vector_add")
    assert len(bodies) == 2  # the second no-code turn spent the last attempt: no third call
    reply = bodies[1]["messages"][-1]
    assert reply["role"] == "user" and reply["content"].startswith(NO_CODE_MESSAGE) and "(1 attempt(s) left)" in reply["content"]
    written = "".join(path.read_text() for path in tmp_path.rglob("*") if path.is_file())
    assert "l1/vector_add" in written and TOKEN not in written


def test_missing_verifiers_ends_in_one_line_naming_the_extra() -> None:
    blocker = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.partition('.')[0] == 'verifiers':\n"
        "            raise ModuleNotFoundError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from gym.extras import MissingExtra\n"
        "try:\n"
        "    import gym.integrations.verifiers\n"
        "except MissingExtra as error:\n"
        "    print(error)\n"
    )
    result = subprocess.run([sys.executable, "-c", blocker], capture_output=True, text=True, cwd=ROOT, env={**os.environ}, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "gym.integrations.verifiers needs the 'verifiers' extra: pip install 'kernel-gym[verifiers]'"


def test_a_reward_preset_and_kevins_return_by_name(fake: FakeOpenAI) -> None:
    fake.route("l1/vector_add", [text(fenced("def kernel(x, y):\n    return x\n")), submit("def kernel(x, y):\n    return x + y  # PASS\n")])
    with running_server(ServerConfig(grader=FakeGrader(), token=TOKEN)) as url:
        env = load_environment(attempts=3, server_url=url, token=TOKEN, task_ids=["l1/vector_add"], reward="kernrl", episode_reward="kevin")
        assert env.config.reward.preset == "kernrl" and env.config.returns.discount == 0.4
        [episode] = asyncio.run(evaluate(env, model=MODEL, client=client(fake)))
        trace = episode.traces[0]
        assert trace.ok, trace.errors
        # kernrl: a wrong answer -0.25, a pass at 2x min(2 - 1, 2) = 1.0; Kevin's G_0 = -0.25 + 0.4 x 1.0.
        assert [turn.reward for turn in state_of(trace).turns] == [-0.25, pytest.approx(1.0)]
        assert trace.reward == pytest.approx(0.15)
        assert trace.info["kgym"]["turn_returns"] == [pytest.approx(0.15), pytest.approx(1.0)]
    with pytest.raises(ValueError, match="unknown reward preset 'fastest'"):
        load_environment(task_ids=["l1/vector_add"], reward="fastest")


# Code the marker grader (tests.support.fake_grades) grades: "# PASS" passes at 1.5x, "# CHEAT" is rejected, the rest is wrong.
MARKED_WRONG = "def kernel(x, y):\n    return x - y\n"
MARKED_PASS = "def kernel(x, y):\n    return x + y  # PASS\n"
MARKED_CHEAT = "def kernel(x, y):\n    return x  # CHEAT\n"


@pytest.mark.parametrize(
    ("episode_reward", "discount", "passing", "failing"),
    [
        # kernrl under the marker grader: wrong -0.25, a pass at 1.5x min(1.5 - 1, 2) = 0.5, a rejected one -1.
        # vector_add: wrong then pass, r = [-0.25, 0.5]; silu: wrong then rejected, r = [-0.25, -1].
        # (return, turn_returns); turn_returns use the return's gamma (1 for best and last).
        pytest.param("best", None, (0.5, [0.25, 0.5]), (-0.25, [-1.25, -1.0]), id="best"),
        pytest.param("last", None, (0.5, [0.25, 0.5]), (-1.0, [-1.25, -1.0]), id="last"),
        # Kevin: G_0 = r_0 + 0.4 r_1.
        pytest.param("kevin", None, (-0.05, [-0.05, 0.5]), (-0.65, [-0.65, -1.0]), id="kevin"),
        # discounted with gamma 0.5: G_0 = r_0 + 0.5 r_1.
        pytest.param("discounted", 0.5, (0.0, [0.0, 0.5]), (-0.75, [-0.75, -1.0]), id="discounted-0.5"),
    ],
)
def test_kernrl_episode_returns_by_name_over_a_passing_and_a_failing_episode(
    fake: FakeOpenAI, episode_reward: str, discount: float | None, passing: tuple[float, list[float]], failing: tuple[float, list[float]]
) -> None:
    calls: list[tuple[str, str]] = []
    fake.route("l1/vector_add", [text(fenced(MARKED_WRONG)), submit(MARKED_PASS), text("never asked")])
    fake.route("l1/silu", [submit(MARKED_WRONG, "call_a"), text(fenced(MARKED_CHEAT)), text("never asked")])
    with running_server(ServerConfig(grader=marker_grader(calls), token=TOKEN)) as url:
        env = load_environment(
            attempts=2,
            server_url=url,
            token=TOKEN,
            task_ids=["l1/vector_add", "l1/silu"],
            reward="kernrl",
            episode_reward=episode_reward,  # type: ignore[arg-type]
            discount=discount,
        )
        episodes = asyncio.run(evaluate(env, model=MODEL, client=client(fake)))
    assert len(calls) == 4
    traces = {episode.traces[0].task.data.id: episode.traces[0] for episode in episodes}
    expected = {"l1/vector_add": (passing, [-0.25, 0.5], STOP_PASSED), "l1/silu": (failing, [-0.25, -1.0], STOP_OUT_OF_ATTEMPTS)}
    for task_id, ((episode_return, turn_returns), rewards, stop) in expected.items():
        trace = traces[task_id]
        assert trace.ok, trace.errors
        state = state_of(trace)
        # Each turn keeps its own reward; only the episode's reward is the return.
        assert [turn.reward for turn in state.turns] == [pytest.approx(reward) for reward in rewards]
        assert [record["reward"] for record in trace.info["kgym"]["turns"]] == [pytest.approx(reward) for reward in rewards]
        assert state.reward == pytest.approx(episode_return)
        assert trace.reward == pytest.approx(episode_return)
        assert trace.rewards["kernel_reward"] is not None and trace.rewards["kernel_reward"].score == pytest.approx(episode_return)
        assert trace.info["kgym"]["turn_returns"] == [pytest.approx(value) for value in turn_returns]
        assert trace.metrics["best_reward"] == pytest.approx(max(rewards)) and trace.metrics["last_reward"] == pytest.approx(rewards[-1])
        assert trace.stop_condition == stop


def test_env_config_takes_presets_by_name_and_refuses_unknown_ones() -> None:
    config = KernelEnvConfig.model_validate({"reward": "kernelbench-fast-1.5", "episode_reward": "kevin"})
    assert config.reward.preset == "kernelbench-fast-p" and config.reward.fast_p == 1.5 and config.reward.name == "kernelbench-fast-1.5"
    assert (config.returns.aggregate, config.returns.discount) == ("discounted", 0.4)
    # A discount given beside kevin overrides its 0.4; the default return is the best turn's.
    assert KernelEnvConfig.model_validate({"episode_reward": "kevin", "discount": 0.9}).returns.discount == 0.9
    assert KernelEnvConfig().returns.aggregate == "best" and KernelEnvConfig().reward.preset == "default"
    # A preset's field given explicitly overrides the preset's value.
    env = load_environment(task_ids=["l1/vector_add"], reward={"preset": "kernrl", "failed": -0.1}, episode_reward="last")
    assert env.config.reward.failed == -0.1 and env.config.reward.compile_failed == -0.5 and env.config.returns.aggregate == "last"
    with pytest.raises(ValueError, match="unknown reward preset 'kernrl2'"):
        KernelEnvConfig.model_validate({"reward": "kernrl2"})
    with pytest.raises(ValueError, match="episode_reward"):
        load_environment(task_ids=["l1/vector_add"], episode_reward="forever")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="discount"):
        load_environment(task_ids=["l1/vector_add"], episode_reward="discounted", discount=1.5)


MARKED_INFRA = "def kernel(x, y):\n    return x  # INFRA\n"


def test_a_masked_infra_error_makes_the_rollout_untrainable(fake: FakeOpenAI) -> None:
    fake.route("l1/vector_add", [text(fenced(MARKED_WRONG)), submit(MARKED_INFRA), text("never asked")])
    fake.route("l1/silu", [text(fenced(MARKED_WRONG)), submit(MARKED_PASS), text("never asked")])
    with running_server(ServerConfig(grader=marker_grader(), token=TOKEN)) as url:
        env = load_environment(attempts=2, server_url=url, token=TOKEN, task_ids=["l1/vector_add", "l1/silu"], reward="kernrl")
        episodes = asyncio.run(evaluate(env, model=MODEL, client=client(fake)))
    traces = {episode.traces[0].task.data.id: episode.traces[0] for episode in episodes}
    masked, clean = traces["l1/vector_add"], traces["l1/silu"]
    assert masked.ok and clean.ok
    assert state_of(masked).masked and masked.agent is not None and masked.agent.trainable is False
    assert masked.metrics["masked"] == 1.0 and masked.info["kgym"]["masked"] is True
    assert [record["masked"] for record in masked.info["kgym"]["turns"]] == [False, True]
    # Its reward is still the gym's, never above a wrong answer (kernrl: -0.25 both).
    assert [turn.reward for turn in state_of(masked).turns] == [-0.25, -0.25]
    assert not state_of(clean).masked and clean.agent is not None and clean.agent.trainable is True and clean.metrics["masked"] == 0.0
