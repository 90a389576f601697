"""Helion submissions graded end to end in a real sandbox: every shipped Helion solution passes (its
generated Triton replayed by the witness), on bwrap and on docker; a kernel that would autotune is
refused with the way to pin a config; a grade without the helion extra says which extra to install."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.sandbox import get_sandbox
from gym.schema.result import Status
from gym.tasks.loader import discover, find_task

pytest.importorskip("helion")

SECRET = 20261205
HELION_TASKS = sorted(task.id for task in discover().tasks if task.solution_for("helion").is_file())


def test_at_least_eight_l1_tasks_ship_a_helion_solution() -> None:
    assert len([task_id for task_id in HELION_TASKS if task_id.startswith("l1/")]) >= 8


@pytest.mark.parametrize("task_id", HELION_TASKS)
def test_shipped_helion_solution_passes(task_id: str) -> None:
    task = find_task(task_id)
    result = grade(task, task.solution_for("helion"), GradeOptions(timing_reps=1), secret=SECRET)
    assert result.status == Status.passed, result.feedback
    assert result.dsl == "helion"
    assert result.traffic is not None and result.traffic.launches >= 1


def test_helion_softmax_passes_on_docker() -> None:
    if get_sandbox("docker").check() is not None:
        if "docker" in os.environ.get("KGYM_REQUIRE_SANDBOXES", "").split(","):
            pytest.fail(f"docker is required here: {get_sandbox('docker').check()}")
        pytest.skip("docker is not usable here")
    task = find_task("l1/softmax")
    result = grade(task, task.solution_for("helion"), GradeOptions(sandbox="docker", timing_reps=1), secret=SECRET)
    assert result.status == Status.passed, result.feedback
    assert result.dsl == "helion"


AUTOTUNING = {
    "no config": "@helion.kernel(static_shapes=True)",
    "two configs": "@helion.kernel(configs=[helion.Config(block_sizes=[32]), helion.Config(block_sizes=[64])])",
    "force_autotune": "@helion.kernel(config=helion.Config(block_sizes=[32]), force_autotune=True)",
}


@pytest.mark.parametrize("decorator", list(AUTOTUNING.values()), ids=list(AUTOTUNING))
def test_a_kernel_that_would_autotune_is_refused_with_how_to_pin_a_config(decorator: str, write_submission: Callable[..., Path]) -> None:
    path = write_submission(
        f"""
        import torch, helion, helion.language as hl

        {decorator}
        def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            out = torch.empty_like(x)
            for tile in hl.tile(out.size()):
                out[tile] = x[tile] + y[tile]
            return out

        def kernel(x, y):
            return add(x, y)
        """
    )
    result = grade(find_task("l1/vector_add"), path, GradeOptions(timing_reps=0), secret=SECRET)
    assert result.status == Status.compile_error, result.feedback
    assert "would autotune" in (result.error or "") and "helion.Config(" in (result.error or "")


def test_generated_triton_the_kernels_file_rules_refuse_is_a_compile_error_naming_the_rule(write_submission: Callable[..., Path]) -> None:
    path = write_submission(
        """
        import torch, helion, helion.language as hl

        @helion.kernel(config=helion.Config(block_sizes=[128]))
        def add(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
            out = torch.empty_like(x)
            for tile in hl.tile(out.size()):
                a, b = x[tile], y[tile]
                out[tile] = hl.inline_triton("getattr({0}, '__add__')({1})", args=(a, b), output_like=a)
            return out

        def kernel(x, y):
            return add(x, y)
        """
    )
    result = grade(find_task("l1/vector_add"), path, GradeOptions(timing_reps=0), secret=SECRET)
    assert result.status == Status.compile_error, result.feedback
    assert "breaks the kernels-file rules" in (result.error or "") and "`getattr` is not part of the Triton language" in (result.error or "")
