"""A real grade carries the witness's traffic count, the modelled speed and the feedback they make.

Each grade runs in the default sandbox (bubblewrap) with the kernels replayed and counted by the
witness, the clean process the submission's own never touches.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.grading.signal.training_signal import NCU_NEEDS_GPU
from gym.schema.result import GradeResult, Status
from gym.tasks.model import Task

SHIPPED = Path(__file__).resolve().parents[2] / "tasks" / "l1" / "vector_add" / "solution.py"

# Right but wasteful: `x` is loaded twice (the second load is a separate instruction, so counted again).
READS_X_TWICE = """
import torch, triton, triton.language as tl

@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    a = tl.load(x_ptr + offs, mask=mask)
    b = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, (a + b) * 0.5 + y, mask=mask)

def kernel(x, y):
    out = torch.empty_like(x)
    _add[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out
"""

# Wrong but close: drops the last element of each 1024 block.
DROPS_A_LANE = READS_X_TWICE.replace("mask = offs < n", "mask = (offs < n) & (offs % 1024 != 1023)")


def _grade(task: Task, path: Path, **kwargs: object) -> GradeResult:
    result = grade(task, path, GradeOptions(timing_reps=0, **kwargs), secret=11)  # type: ignore[arg-type]
    # The new fields serialise and read back (compared as JSON: a wrong answer's error figures may be NaN).
    text = result.model_dump_json()
    assert GradeResult.model_validate_json(text).model_dump_json() == text
    return result


@pytest.fixture(scope="module")
def shipped(vector_add: Task) -> GradeResult:
    return _grade(vector_add, SHIPPED, profile="ncu")


def test_the_shipped_solution_moves_exactly_the_minimum(shipped: GradeResult) -> None:
    assert shipped.status == Status.passed, shipped.feedback
    traffic = shipped.traffic
    assert traffic is not None
    n = traffic.shape["N"]
    # A hidden trial the secret picks (never shown: scaled to the modelled shape): x and y read once, out written once, float32.
    assert traffic.trial.startswith("float32 hidden") and "never shown" in traffic.trial
    assert (traffic.bytes_read, traffic.bytes_written) == (2 * n * 4, n * 4)
    programs = -(-n // 1024)
    # One add per lane of every block: masked-off lanes compute too (only their memory traffic is not counted);
    # counted at a hidden shape and scaled to the shown one, so the block count is that shape's within rounding.
    assert traffic.launches == 1 and traffic.programs == pytest.approx(programs, rel=0.05) and traffic.flops == pytest.approx(programs * 1024, rel=0.05)
    assert traffic.min_bytes == 3 * n * 4 and shipped.traffic_ratio == pytest.approx(1.0)
    by_name = {row.name: row for row in traffic.buffers}
    assert by_name["x"].times_read == pytest.approx(1.0) and by_name["y"].times_read == pytest.approx(1.0)
    assert by_name["output #1"].times_written == pytest.approx(1.0)


def test_the_modelled_speed_is_labelled_and_said_in_the_feedback(shipped: GradeResult) -> None:
    modelled = shipped.modelled
    assert modelled is not None and modelled.profile == "H100 SXM"
    assert modelled.label == "modelled on H100 SXM, not measured"
    # Modelled at the bench shape (N = 2^24), where one launch moving the minimum is memory-bound.
    assert modelled.shape == {"N": 16777216} and modelled.bound == "memory"
    assert shipped.modelled_speedup_vs_eager == modelled.speedup_vs_eager and modelled.speedup_vs_eager == pytest.approx(1.0, rel=0.05)
    assert "Modelled on H100 SXM" in shipped.feedback and "not measured" in shipped.feedback


def test_ncu_on_a_cpu_says_it_needs_a_gpu_instead_of_failing(shipped: GradeResult) -> None:
    assert shipped.profile is not None and shipped.profile.note == NCU_NEEDS_GPU
    assert shipped.profile.memory_throughput_pct is None
    assert NCU_NEEDS_GPU in shipped.feedback


def test_a_slow_but_right_kernel_is_told_which_buffer_it_rereads(vector_add: Task, write_submission) -> None:
    result = _grade(vector_add, write_submission(READS_X_TWICE), gpu_profile="a100")
    assert result.status == Status.passed, result.feedback
    assert result.traffic is not None and result.modelled is not None
    # x twice, y once, out once: 4 N elements against the minimum's 3 N.
    assert result.traffic_ratio == pytest.approx(4 / 3)
    assert {row.name: row.times_read for row in result.traffic.buffers}["x"] == pytest.approx(2.0)
    assert "`x` read 2 times" in result.feedback
    assert result.modelled.profile == "A100 80GB" and result.modelled_speedup_vs_eager == pytest.approx(0.75, rel=0.05)


def test_a_wrong_kernel_gets_no_speed_signal(vector_add: Task, write_submission) -> None:
    result = _grade(vector_add, write_submission(DROPS_A_LANE))
    assert result.status == Status.wrong_answer
    assert result.traffic is None and result.modelled is None and result.modelled_speedup_vs_eager is None


def test_an_unknown_gpu_profile_is_an_infra_error_naming_the_profiles(vector_add: Task) -> None:
    result = _grade(vector_add, SHIPPED, gpu_profile="TPU v9")
    assert result.status == Status.infra_error
    assert "TPU v9" in (result.error or "") and "H100 SXM" in (result.error or "")
