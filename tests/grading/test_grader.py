"""Each way a submission can go wrong ends in its precise status, never an exception."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.sandbox.base import Job, RunOutcome, register
from gym.schema.result import GradeResult, Status
from gym.tasks.model import Task

HONEST_BODY = """
import torch, triton, triton.language as tl

@triton.jit
def _add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)

def honest(x, y):
    out = torch.empty_like(x)
    _add[(triton.cdiv(x.numel(), 256),)](x, y, out, x.numel(), BLOCK=256)
    return out
"""


def run(task: Task, path: Path, **kwargs: object) -> GradeResult:
    # These tests are about statuses, so the static audit and its run-time hooks (tested elsewhere) are off.
    kwargs.setdefault("audit", False)
    kwargs.setdefault("audit_hooks", False)
    result = grade(task, path, GradeOptions(timing_reps=0, **kwargs), secret=7)  # type: ignore[arg-type]
    # Every grade serialises and round-trips through the shared schema.
    assert GradeResult.model_validate_json(result.model_dump_json()) == result
    return result


def test_honest_submission_passes_with_interpreted_timings(vector_add: Task, write_submission) -> None:
    path = write_submission(
        HONEST_BODY
        + """
def kernel(x, y):
    out = torch.empty_like(x)
    _add[(triton.cdiv(x.numel(), 256),)](x, y, out, x.numel(), BLOCK=256)
    return out
"""
    )
    result = grade(vector_add, path, GradeOptions(timing_reps=2), secret=7)
    assert result.status == Status.passed, result.feedback
    assert result.timings is not None and result.timings.interpreted
    assert result.timings.candidate is not None and result.timings.candidate.reps == 2
    assert result.speedup_vs_eager is not None and result.speedup_vs_eager > 0
    # No torch.compile number on CPU: the reason is given instead, never a guess.
    assert result.speedup_vs_compile is None and result.timings.compiled is None
    assert "not measured on CPU" in (result.timings.compiled_note or "")
    assert result.environment.sandbox == "bwrap" and result.environment.device == "cpu"
    assert len(result.submission_sha256) == 64


def test_syntax_error_is_compile_error(vector_add: Task, write_submission) -> None:
    result = run(vector_add, write_submission("def kernel(x, y)\n    return x\n"))
    assert result.status == Status.compile_error
    assert "SyntaxError" in (result.error or "")
    assert "SyntaxError" in result.feedback


def test_missing_kernel_is_compile_error(vector_add: Task, write_submission) -> None:
    result = run(vector_add, write_submission("def kernal(x, y):\n    return x\n"))
    assert result.status == Status.compile_error
    assert "defines no function `kernel" in (result.error or "")


def test_failing_import_is_compile_error(vector_add: Task, write_submission) -> None:
    result = run(vector_add, write_submission("import not_a_module_anywhere\ndef kernel(x, y):\n    return x\n"))
    assert result.status == Status.compile_error
    assert "not_a_module_anywhere" in (result.error or "")


def test_missing_file_is_compile_error(vector_add: Task, tmp_path: Path) -> None:
    result = run(vector_add, tmp_path / "nope.py")
    assert result.status == Status.compile_error
    assert "does not exist" in (result.error or "")


def test_exception_is_runtime_error_with_trial(vector_add: Task, write_submission) -> None:
    result = run(vector_add, write_submission("def kernel(x, y):\n    raise ValueError('boom at launch')\n"))
    assert result.status == Status.runtime_error
    assert "boom at launch" in (result.error or "")
    # The worker stops at the first call that raises (calls run in shuffled order): its trial is named.
    failed = [trial for trial in result.trials if not trial.passed]
    assert len(failed) == 1 and failed[0].label.split(" ")[1] in result.feedback


def test_triton_error_in_kernel_is_runtime_error(vector_add: Task, write_submission) -> None:
    path = write_submission(
        HONEST_BODY
        + """
def kernel(x, y):
    out = torch.empty_like(x)
    _add[(triton.cdiv(x.numel(), 256),)](x, y, out, x.numel(), BLOCK=100)  # not a power of two
    return out
"""
    )
    result = run(vector_add, path)
    assert result.status in {Status.runtime_error, Status.compile_error}
    assert result.error


def test_system_exit_is_runtime_error(vector_add: Task, write_submission) -> None:
    result = run(vector_add, write_submission("import sys\ndef kernel(x, y):\n    sys.exit(0)\n"))
    assert result.status == Status.runtime_error


def test_segfault_is_runtime_error(vector_add: Task, write_submission) -> None:
    result = run(vector_add, write_submission("import os, signal\ndef kernel(x, y):\n    os.kill(os.getpid(), signal.SIGSEGV)\n"))
    assert result.status == Status.runtime_error
    assert "signal 11" in (result.error or "")


def test_hang_is_timeout_and_kills_children(vector_add: Task, write_submission, tmp_path: Path) -> None:
    marker = tmp_path / "child-alive"
    path = write_submission(f"""
import subprocess, sys
def kernel(x, y):
    subprocess.Popen([sys.executable, "-c", "import time, pathlib; time.sleep(4); pathlib.Path({str(marker)!r}).write_text('x')"])
    while True:
        pass
""")
    result = run(vector_add, path, timeout_s=3)
    assert result.status == Status.timeout
    assert "limit" in (result.error or "")
    import time

    time.sleep(2.5)
    assert not marker.exists(), "a process the submission started outlived the grade"


def test_zeros_are_wrong_answer_with_diagnostics(vector_add: Task, write_submission) -> None:
    result = run(vector_add, write_submission(HONEST_BODY + "\ndef kernel(x, y):\n    return torch.zeros_like(honest(x, y))\n"))
    assert result.status == Status.wrong_answer
    check = result.trials[0].checks[0]
    assert check.kind == "bitwise" and not check.passed
    assert check.diagnostics[0].worst and check.diagnostics[0].worst[0].got == 0.0
    assert "never written" in result.feedback


def test_unmasked_tail_is_named_in_feedback(vector_add: Task, write_submission) -> None:
    path = write_submission(
        HONEST_BODY
        + """
def kernel(x, y):
    out = torch.zeros_like(x)
    n = x.numel() // 256 * 256
    _add[(max(1, n // 256),)](x, y, out, n, BLOCK=256)
    return out
"""
    )
    result = run(vector_add, path)
    assert result.status == Status.wrong_answer
    assert "tail" in result.feedback


def test_wrong_dtype_and_shape_are_wrong_answer(vector_add: Task, write_submission) -> None:
    result = run(vector_add, write_submission(HONEST_BODY + "\ndef kernel(x, y):\n    return honest(x, y).double()\n"))
    assert result.status == Status.wrong_answer
    assert "dtype float64" in result.feedback
    result = run(vector_add, write_submission(HONEST_BODY + "\ndef kernel(x, y):\n    return honest(x, y)[:-1].clone()\n"))
    assert result.status == Status.wrong_answer
    assert "shape" in result.feedback


def test_tuple_instead_of_tensor_is_wrong_answer(vector_add: Task, write_submission) -> None:
    result = run(vector_add, write_submission(HONEST_BODY + "\ndef kernel(x, y):\n    return (honest(x, y),)\n"))
    assert result.status == Status.wrong_answer
    assert "returned tuple" in result.feedback


def test_input_mutation_is_rejected(vector_add: Task, write_submission) -> None:
    result = run(vector_add, write_submission(HONEST_BODY + "\ndef kernel(x, y):\n    out = honest(x, y)\n    x.copy_(out)\n    return out\n"))
    assert result.status == Status.rejected
    assert "input_mutated:x" in result.integrity_flags


def test_tensor_subclass_is_rejected(vector_add: Task, write_submission) -> None:
    path = write_submission(
        HONEST_BODY
        + """
class Lazy(torch.Tensor):
    pass
def kernel(x, y):
    return honest(x, y).as_subclass(Lazy)
"""
    )
    result = run(vector_add, path)
    assert result.status == Status.rejected
    assert "non_tensor_output" in result.integrity_flags


def test_printed_verdict_changes_nothing(vector_add: Task, write_submission) -> None:
    path = write_submission(
        HONEST_BODY
        + """
import sys
def kernel(x, y):
    print('{"status": "passed"}')
    print('passed', file=sys.stderr)
    return torch.zeros_like(honest(x, y))
"""
    )
    assert run(vector_add, path).status == Status.wrong_answer


def test_hidden_shapes_never_appear_in_the_result(vector_add: Task, write_submission) -> None:
    result = run(vector_add, write_submission(HONEST_BODY + "\ndef kernel(x, y):\n    return torch.zeros_like(honest(x, y))\n"))
    hidden = [trial for trial in result.trials if trial.hidden]
    assert hidden and all(trial.shape is None for trial in hidden)
    text = result.model_dump_json()
    for shape in vector_add.spec.shapes.hidden:
        for value in shape.values():
            assert f'"N":{value}' not in text.replace(" ", "")


def test_unknown_sandbox_is_infra_error(vector_add: Task) -> None:
    result = run(vector_add, vector_add.solution_path, sandbox="no-such-backend")
    assert result.status == Status.infra_error
    assert "unknown sandbox" in (result.error or "")


class ForgingSandbox:
    """Plays a worker that writes the given files instead of running anything."""

    isolated = True

    def __init__(self, name: str, files: dict[str, bytes]) -> None:
        self.name = name
        self.files = files

    def check(self) -> str | None:
        return None

    def run(self, job: Job, timeout_s: float, link: object = None) -> RunOutcome:
        for name, data in self.files.items():
            (job.out_dir / name).write_bytes(data)
        return RunOutcome(exit_code=0, timed_out=False, wall_s=0.0, stdout_tail="", stderr_tail="")


def _record(**fields: object) -> bytes:
    record = {"id": 0, "ok": True, "container": "tensor", "outputs": []}
    record.update(fields)
    return json.dumps(record).encode()


REPORT = json.dumps({"phase": "done"}).encode()
TENSOR = {"python_type": "torch.Tensor", "exact_tensor": True, "dtype": "float32", "shape": [1000], "device": "cpu", "strides": [1]}


@pytest.mark.parametrize(
    "label, files",
    [
        ("not json", {"call0.json": b"{not json", "report.json": REPORT}),
        ("unknown field", {"call0.json": _record(verdict="passed"), "report.json": REPORT}),
        ("report says done, no records", {"report.json": REPORT}),
        (
            "bytes do not match shape",
            {"call0.json": _record(outputs=[{**TENSOR, "data": {"file": "o.bin", "dtype": "float32", "shape": [1000], "nbytes": 12}}]), "report.json": REPORT},
        ),
        (
            "file shorter than claimed",
            {
                "call0.json": _record(outputs=[{**TENSOR, "data": {"file": "o.bin", "dtype": "float32", "shape": [1000], "nbytes": 4000}}]),
                "o.bin": b"\0" * 10,
                "report.json": REPORT,
            },
        ),
        (
            "path escape",
            {
                "call0.json": _record(outputs=[{**TENSOR, "data": {"file": "../in/x.bin", "dtype": "float32", "shape": [1000], "nbytes": 4000}}]),
                "report.json": REPORT,
            },
        ),
    ],
)
def test_malformed_worker_output_is_runtime_error(vector_add: Task, label: str, files: dict[str, bytes]) -> None:
    name = f"forging-{abs(hash(label))}"
    register(ForgingSandbox(name, files))
    result = run(vector_add, vector_add.solution_path, sandbox=name)
    assert result.status == Status.runtime_error, (label, result.error)
