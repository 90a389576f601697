"""Output provenance in real sandboxed grades (issue 36, class 5): data-movement tasks whose whole
answer torch's plumbing could give (a transpose, a concatenation). Plumbing that moves the inputs
into the answer's places is `torch_compute:plumbing` however a Triton launch beside it dresses it up;
honest kernels, and honest plumbing of a kernel's own values, pass."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.schema.result import Status
from gym.tasks.loader import load_task
from gym.tasks.model import Task

REFERENCES = '''
import torch


def transpose(x):
    return x.t().contiguous()


def concat(x, y):
    return torch.cat([x, y])


def make_matrix(shape, dtype, generator, device):
    return {"x": torch.randn(shape["M"], shape["N"], generator=generator, dtype=torch.float32).to(device=device, dtype=dtype)}


def make_pair(shape, dtype, generator, device):
    def one():
        return torch.randn(shape["M"], shape["N"], generator=generator, dtype=torch.float32).to(device=device, dtype=dtype)

    return {"x": one(), "y": one()}
'''

TASK = """\
id = "move/{name}"
version = 1
title = "Data movement: {name}"
description = "A task whose answer is data movement."
reference = "moves:{name}"
inputs = "moves:{inputs}"
params = {params}
dtypes = ["float32"]
min_bytes = "2 * M * N * itemsize"
min_flops = "0"

[shapes]
public = [{{ M = 8, N = 12 }}]
hidden = [{{ M = 13, N = 17 }}, {{ M = 3, N = 5 }}]

[[contract]]
kind = "bitwise"

[[contract]]
kind = "nontrivial"
"""

DUMMY = '''
import torch
import triton
import triton.language as tl


@triton.jit
def _touch(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(dst + offs, tl.load(src + offs, mask=offs < n), mask=offs < n)
'''

SUBMISSIONS = {
    # The answer by a copy of a permuted view; a launch beside it copies a few inputs into scratch.
    "transpose_by_contiguous": ("transpose", "rejected", DUMMY + '''
def kernel(x):
    out = x.t().contiguous()
    scratch = torch.empty(4, device=x.device)
    _touch[(1,)](x, scratch, 4, BLOCK=4)
    return out
'''),
    # Concatenation by copies into slices, and a kernel that writes the first element itself.
    "concat_by_slices": ("concat", "rejected", DUMMY + '''
def kernel(x, y):
    out = torch.empty(x.shape[0] + y.shape[0], x.shape[1], device=x.device)
    out[: x.shape[0]].copy_(x)
    out[x.shape[0] :].copy_(y)
    _touch[(1,)](x, out, 1, BLOCK=1)
    return out
'''),
    # Honest: the kernel moves every element.
    "transpose_kernel": ("transpose", "passed", '''
import torch
import triton
import triton.language as tl


@triton.jit
def _transpose(x, out, M, N, BM: tl.constexpr, BN: tl.constexpr):
    rows = tl.program_id(0) * BM + tl.arange(0, BM)[:, None]
    cols = tl.program_id(1) * BN + tl.arange(0, BN)[None, :]
    mask = (rows < M) & (cols < N)
    tl.store(out + cols * M + rows, tl.load(x + rows * N + cols, mask=mask), mask=mask)


def kernel(x):
    M, N = x.shape
    out = torch.empty(N, M, device=x.device, dtype=x.dtype)
    _transpose[(triton.cdiv(M, 16), triton.cdiv(N, 16))](x, out, M, N, BM=16, BN=16)
    return out
'''),
    # Honest: a kernel writes the transpose's transpose (a plain copy), torch lays it out as the reference returns it.
    "contiguous_of_own_output": ("transpose", "passed", DUMMY + '''
def kernel(x):
    copied = torch.empty_like(x)
    n = x.numel()
    _touch[(1,)](x, copied, n, BLOCK=triton.next_power_of_2(n))
    return copied.t().contiguous()
'''),
}


@pytest.fixture(scope="module")
def move_tasks(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Task]:
    root = tmp_path_factory.mktemp("tasks")
    refs = tmp_path_factory.mktemp("refs")
    (refs / "moves.py").write_text(REFERENCES)
    tasks = {}
    for name, inputs, params in (("transpose", "make_matrix", '["x"]'), ("concat", "make_pair", '["x", "y"]')):
        folder = root / "move" / name
        folder.mkdir(parents=True)
        (folder / "task.toml").write_text(TASK.format(name=name, inputs=inputs, params=params))
        (folder / "solution.py").write_text("def kernel(*args):\n    raise NotImplementedError\n")
        tasks[name] = load_task(folder, references_dir=refs, tasks_root=root)
    return tasks


@pytest.mark.parametrize("name", sorted(SUBMISSIONS))
def test_plumbing_that_moves_inputs_into_the_answer_is_torch_compute(name: str, move_tasks: dict[str, Task], tmp_path: Path) -> None:
    task_name, expected, source = SUBMISSIONS[name]
    submission = tmp_path / f"{name}.py"
    submission.write_text(textwrap.dedent(source))
    result = grade(move_tasks[task_name], submission, GradeOptions(late_calls=False), secret=7)
    assert result.status == Status(expected), (result.status, result.error, result.integrity_flags)
    if expected == "rejected":
        assert "torch_compute:plumbing" in result.integrity_flags, (result.error, result.integrity_flags)
