"""Triton benchmarking under the interpreter: the worker's do_bench shim and autotuning."""

from __future__ import annotations

import time

import pytest

from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.schema.result import Status
from gym.tasks.model import Task
from gym.worker.interpreter.shim import cpu_do_bench

AUTOTUNED = """
import torch, triton, triton.language as tl

@triton.autotune(configs=[triton.Config({"BLOCK": 128}), triton.Config({"BLOCK": 256})], key=["n"])
@triton.jit
def _add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)

def kernel(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    grid = lambda meta: (triton.cdiv(n, meta["BLOCK"]),)
    _add[grid](x, y, out, n)
    ms = triton.testing.do_bench(lambda: _add[grid](x, y, out, n), quantiles=[0.5])
    assert ms > 0
    return out
"""


def test_do_bench_shim_measures_milliseconds() -> None:
    ms = cpu_do_bench(lambda: time.sleep(0.01), rep=30)
    assert 9 <= ms <= 30
    low, mid = cpu_do_bench(lambda: None, quantiles=[0.2, 0.5])
    assert 0 <= low <= mid
    assert isinstance(cpu_do_bench(lambda: None, return_mode="all"), list)
    with pytest.raises(AssertionError):
        cpu_do_bench(lambda: None, return_mode="p99")


def test_autotune_and_do_bench_work_in_a_graded_submission(vector_add: Task, write_submission) -> None:
    result = grade(vector_add, write_submission(AUTOTUNED), GradeOptions(timing_reps=1), secret=5)
    assert result.status == Status.passed, result.feedback
