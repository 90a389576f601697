"""The prompt asks for the kernel language it is given: Triton's example and rules by default,
Helion's (`--dsl helion`, `Env(dsl=)`, `reset(dsl=)`) in their place; anything else is refused."""

from __future__ import annotations

import pytest

from gym.errors import EnvError
from gym.harness.env import Env
from gym.tasks.loader import find_task
from gym.tasks.prompt import HELION_EXAMPLE, SUBMISSION_EXAMPLE, render_prompt
from tests.support.fake_grades import marker_grader


def test_the_helion_prompt_replaces_the_triton_format_and_keeps_the_rest() -> None:
    task = find_task("l1/softmax")
    triton, helion = render_prompt(task, cpu=True), render_prompt(task, cpu=True, dsl="helion")
    assert SUBMISSION_EXAMPLE in triton and HELION_EXAMPLE not in triton
    assert HELION_EXAMPLE in helion and SUBMISSION_EXAMPLE not in helion
    assert "pins exactly one config" in helion and "persistent program-id types" in helion
    for section in ("## Signature", "## Reference (the spec)", "## Contract", "## Allowed torch calls", "## CPU grading"):
        assert section in helion
    assert render_prompt(task, cpu=True, dsl="triton") == triton


def test_an_unknown_language_is_refused() -> None:
    with pytest.raises(ValueError, match="dsl must be one of triton, helion"):
        render_prompt(find_task("l1/softmax"), dsl="cuda")  # type: ignore[arg-type]
    with pytest.raises(EnvError, match="dsl must be one of"):
        Env(dsl="cuda", grader=marker_grader())  # type: ignore[arg-type]


def test_env_asks_for_its_language_and_a_reset_may_choose_another() -> None:
    env = Env(dsl="helion", grader=marker_grader())
    assert HELION_EXAMPLE in env.reset("l1/vector_add").prompt
    assert SUBMISSION_EXAMPLE in env.reset("l1/vector_add", dsl="triton").prompt
    assert env.episode_dsl == "triton" and env.dsl == "helion"
