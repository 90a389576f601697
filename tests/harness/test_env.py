"""gym.harness.Env: episodes, budget, rewards, state; one real grade end to end."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from gym.errors import EnvError
from gym.harness import Action, Env, RewardConfig, reward_for
from gym.schema.result import Status
from tests.support.fake_grades import fake_grade, marker_grader


def test_episode_ends_on_pass_and_keeps_the_best() -> None:
    calls: list[tuple[str, str]] = []
    env = Env(max_attempts=3, grader=marker_grader(calls))
    first = env.reset(task_id="l1/softmax")
    assert first.task_id == "l1/softmax" and first.attempt == 0 and first.attempts_left == 3 and not first.done
    assert "def kernel(" in first.prompt and "hidden" in first.prompt
    wrong = env.step(Action(code="x = 1"))
    assert wrong.summary is not None and wrong.summary.status == Status.wrong_answer
    assert wrong.reward == 0.0 and not wrong.done and wrong.attempts_left == 2
    assert "wrong_answer" in wrong.feedback or wrong.feedback
    right = env.step(Action(code="x = 2  # PASS"))
    assert right.summary is not None and right.summary.status == Status.passed and right.done
    assert right.reward == pytest.approx(1.0 + 0.5 * 0.5849625, rel=1e-4)  # 1 + 0.5*log2(1.5)
    state = env.state
    assert state.attempts == 2 and state.done and state.best is not None and state.best.status == Status.passed
    assert state.rewards == [wrong.reward, right.reward]
    with pytest.raises(EnvError, match="episode is over"):
        env.step(Action(code="x = 3"))
    assert [task for task, _ in calls] == ["l1/softmax", "l1/softmax"]


def test_budget_ends_the_episode_and_reset_starts_a_new_one() -> None:
    env = Env(max_attempts=2, grader=marker_grader())
    episode = env.reset(task_id="l1/vector_add")
    env.step(Action(code="a"))
    last = env.step(Action(code="b"))
    assert last.done and last.attempts_left == 0
    first_id = env.state.episode_id
    again = env.reset(task_id="l1/vector_add")
    assert not again.done and env.state.episode_id != first_id and env.state.attempts == 0
    assert episode.prompt == again.prompt


def test_keep_optimising_after_a_pass_when_asked() -> None:
    env = Env(max_attempts=3, grader=marker_grader(), stop_on_pass=False)
    env.reset(task_id="l1/vector_add")
    assert not env.step(Action(code="# PASS")).done
    assert not env.step(Action(code="# PASS again")).done
    assert env.step(Action(code="# PASS three")).done


def test_rejected_is_never_rewarded_positively() -> None:
    env = Env(grader=marker_grader())
    env.reset(task_id="l1/vector_add")
    observation = env.step(Action(code="# CHEAT # PASS"))
    assert observation.summary is not None and observation.summary.status == Status.rejected
    assert observation.reward < 0
    with pytest.raises(ValidationError):
        RewardConfig(rejected=0.5)
    # A flagged grade is not rewarded even if its status were passed.
    flagged = fake_grade("l1/x", "c", Status.passed, speedup=8.0).model_copy(update={"integrity_flags": ["below_speed_of_light"]})
    assert reward_for(flagged) <= 0


def test_reward_is_monotone_in_speedup_and_clipped() -> None:
    rewards = [reward_for(fake_grade("l1/x", "c", Status.passed, speedup=s)) for s in (0.1, 0.5, 1.0, 2.0, 8.0, 100.0)]
    assert rewards == sorted(rewards)
    assert rewards[0] == pytest.approx(0.5) and rewards[-1] == pytest.approx(2.5) and rewards[-2] == pytest.approx(2.5)
    assert reward_for(fake_grade("l1/x", "c", Status.passed, speedup=None)) == 1.0
    assert min(rewards) > reward_for(fake_grade("l1/x", "c", Status.wrong_answer))


def test_bad_calls_are_clear_errors() -> None:
    env = Env(grader=marker_grader())
    with pytest.raises(EnvError, match="reset"):
        env.step(Action(code="x"))
    with pytest.raises(Exception, match="no_such"):
        env.reset(task_id="l1/no_such_task")
    with pytest.raises(ValidationError):
        Action(code="")
    with pytest.raises(ValidationError):
        Action.model_validate({"code": "x", "extra": 1})
    with pytest.raises(EnvError):
        Env(max_attempts=0)


def test_reset_draws_from_a_suite_reproducibly() -> None:
    env = Env(grader=marker_grader())
    drawn = {env.reset(suite="l1", seed=seed).task_id for seed in range(12)}
    assert len(drawn) > 1 and all(task.startswith("l1/") for task in drawn)
    assert env.reset(suite="l1", seed=7).task_id == env.reset(suite="l1", seed=7).task_id


def test_async_variants() -> None:
    async def play() -> tuple[str, bool]:
        env = Env(grader=marker_grader())
        first = await env.areset(task_id="l1/vector_add")
        observation = await env.astep(Action(code="# PASS"))
        await env.aclose()
        return first.task_id, observation.done

    assert asyncio.run(play()) == ("l1/vector_add", True)


def test_real_grade_through_env(vector_add) -> None:
    env = Env(max_attempts=2)
    env.reset(task_id="l1/vector_add")
    broken = env.step(Action(code="import triton\ndef kernel(x, y):\n    return x +\n"))
    assert broken.summary is not None and broken.summary.status == Status.compile_error and not broken.done
    assert "SyntaxError" in broken.feedback
    good = env.step(Action(code=vector_add.solution_path.read_text()))
    assert good.summary is not None and good.summary.status == Status.passed and good.done
    assert good.grade is not None and good.grade.timings is not None and good.grade.timings.interpreted


def test_a_reward_preset_and_a_discounted_return_by_name() -> None:
    # marker_grader: "# PASS" passes at 1.5x vs eager, anything else is a wrong answer.
    env = Env(max_attempts=3, grader=marker_grader(), reward="kernrl", returns="kevin")
    env.reset(task_id="l1/vector_add")
    assert env.state.reward_preset == "kernrl" and env.state.returns == "discounted(0.4)" and env.state.episode_return is None
    wrong = env.step(Action(code="x = 1"))
    assert wrong.reward == -0.25  # kernrl: a wrong answer
    right = env.step(Action(code="# PASS"))
    assert right.reward == pytest.approx(0.5)  # kernrl: min(1.5 - 1, 2)
    state = env.state
    # Kevin's return from the first turn: r0 + 0.4 r1.
    assert state.episode_return == pytest.approx(-0.25 + 0.4 * 0.5)
    assert state.best_reward == pytest.approx(0.5)


def test_an_unknown_reward_preset_is_refused() -> None:
    with pytest.raises(ValidationError, match="unknown reward preset 'fastest'"):
        Env(grader=marker_grader(), reward="fastest")
    with pytest.raises(ValidationError, match="unknown return preset"):
        Env(grader=marker_grader(), returns="forever")


# ---------------------------------------------------------------- masked samples (issue 36: fail closed)

INFRA_CODE = "import triton\n\ndef kernel(x, y):\n    return x  # INFRA\n"
WRONG_CODE = "import triton\n\ndef kernel(x, y):\n    return x - y\n"


@pytest.mark.parametrize("preset", ["default", "kernelbench-fast-p", "kernrl", "kernelgym", "modelled"])
def test_a_masked_infra_error_is_flagged_and_paid_no_more_than_a_wrong_answer(preset: str) -> None:
    env = Env(max_attempts=3, grader=marker_grader(), reward=preset)
    env.reset(task_id="l1/vector_add")
    wrong = env.step(Action(code=WRONG_CODE))
    infra = env.step(Action(code=INFRA_CODE))
    assert not wrong.masked and infra.masked
    assert infra.grade is not None and infra.grade.status == Status.infra_error and infra.grade.masked
    assert infra.reward <= wrong.reward
    env.reset(task_id="l1/vector_add")
    assert not env.step(Action(code=WRONG_CODE)).masked


def test_kernel_episodes_carry_the_mask_per_turn_and_per_episode() -> None:
    from gym.integrations.episodes import EpisodeSource

    source = EpisodeSource(grader=marker_grader(), max_attempts=3, reward="kernrl")
    episode = source.open("l1/vector_add")
    wrong = episode.respond(f"```python\n{WRONG_CODE}```")
    assert not wrong.masked and not episode.masked
    no_code = episode.respond("no code here")
    assert not no_code.masked
    infra = episode.respond(f"```python\n{INFRA_CODE}```")
    assert infra.masked and infra.status == Status.infra_error and episode.masked
    assert infra.reward == -0.25 == wrong.reward  # kernrl: infra_error pays what a wrong answer does (it paid 0 before)
    assert episode.masks == [False, False, True]
    episode.close()


def test_verl_scores_say_masked() -> None:
    """verl's reward function is importable without verl: a masked turn's score says masked = 1.0."""
    from gym.integrations.episodes import EpisodeSource
    from gym.integrations.verl.common import EPISODE_FIELD, EpisodeRecord
    from gym.integrations.verl.reward import _turn_score, compute_score

    episode = EpisodeSource(grader=marker_grader(), max_attempts=2).open("l1/vector_add")
    turn = episode.respond(f"```python\n{INFRA_CODE}```")
    score = _turn_score("l1/vector_add", turn)
    assert score.masked == 1.0 and score.status == "infra_error" and score.score == 0.0
    record = EpisodeRecord(task_id="l1/vector_add", score=0.0, passed=False, status="infra_error", attempts=1, masked=True)
    scored = compute_score("kgym", "", None, {"task_id": "l1/vector_add", EPISODE_FIELD: record.model_dump()})
    assert scored["masked"] == 1.0
    plain = EpisodeRecord(task_id="l1/vector_add", score=0.0, passed=False, status="wrong_answer", attempts=1)
    assert compute_score("kgym", "", None, {"task_id": "l1/vector_add", EPISODE_FIELD: plain.model_dump()})["masked"] == 0.0
    # The keys never vary (verl reads every sample's extra info by the first one's keys).
    assert set(scored) == set(compute_score("kgym", "no code", None, {"task_id": "l1/vector_add"}))
