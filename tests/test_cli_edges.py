"""The newcomer's edges of the CLI (issue 39): ids never cut in `kgym list`, tracebacks trimmed to the
submission's frames, `kgym grade --secret` reproducing a grade, interpreted timings shown as no speed."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gym.cli import app
from gym.grading.feedback import trimmed_traceback
from gym.tasks.loader import discover, find_task

WORKER_TRACE = """Traceback (most recent call last):
  File "/job/lib/gym/worker/timer.py", line 88, in timed_call
    result = call()
             ^^^^^^
  File "/job/in/submission.py", line 21, in kernel
    _add[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)
  File "/job/lib/gym/worker/op_trace.py", line 402, in __call__
    result = _in_launch(call, self, *args, **kwargs)
  File "/opt/kgym/runtime/lib/python3.11/site-packages/triton/runtime/jit.py", line 419, in run
    kernel = self.compile(src, target=target, options=options.__dict__)
triton.compiler.errors.CompilationError: at 3:4:
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arang(0, BLOCK)
    ^
AttributeError("module 'triton.language' has no attribute 'arang'")
"""


def test_a_traceback_keeps_the_submissions_frames_and_the_message() -> None:
    trimmed = trimmed_traceback(WORKER_TRACE)
    assert "timer.py" not in trimmed and "op_trace.py" not in trimmed and "jit.py" not in trimmed
    assert '  File "/job/in/submission.py", line 21, in kernel' in trimmed
    assert "    _add[(triton.cdiv(n, 1024),)](x, y, out, n, BLOCK=1024)" in trimmed
    assert trimmed.endswith("AttributeError(\"module 'triton.language' has no attribute 'arang'\")")
    assert "tl.arang(0, BLOCK)" in trimmed and "    ^" in trimmed
    assert trimmed_traceback("no traceback here") == "no traceback here"


def test_list_never_cuts_an_id_in_80_columns() -> None:
    result = CliRunner().invoke(app, ["list"], env={"COLUMNS": "80"}, terminal_width=80)
    assert result.exit_code == 0, result.output
    for task in discover().tasks:
        assert task.id in result.output, task.id


@pytest.mark.sandbox
def test_grade_secret_reproduces_a_grade_and_is_printed(tmp_path: Path) -> None:
    solution = str(find_task("l1/vector_add").solution_path)
    runner = CliRunner()
    graded = [json.loads(runner.invoke(app, ["grade", "l1/vector_add", solution, "--json", "--secret", "77", "--no-confirm"]).output) for _ in range(2)]
    figures = [[(check["kind"], check["figure"]) for trial in result["trials"] for check in trial["checks"]] for result in graded]
    assert figures[0] == figures[1]
    human = runner.invoke(app, ["grade", "l1/vector_add", solution, "--no-confirm"], terminal_width=200)
    text = " ".join(human.output.split())
    assert "secret " in text and "--secret" in text
    # Interpreted timings carry no ratio in the human output; the JSON keeps its fields.
    assert "Timing interpreted (not a speed)" in text and "speedup" not in text, text
    assert graded[0]["timings"]["interpreted"] is True


def test_show_asks_for_the_kernel_language_named_and_refuses_others() -> None:
    runner = CliRunner()
    helion = runner.invoke(app, ["show", "l1/softmax", "--dsl", "helion"])
    assert helion.exit_code == 0 and "## Submission format (Helion)" in helion.stdout
    triton = runner.invoke(app, ["show", "l1/softmax"])
    assert triton.exit_code == 0 and "## Submission format (Helion)" not in triton.stdout
    refused = runner.invoke(app, ["show", "l1/softmax", "--dsl", "cuda"])
    assert refused.exit_code == 2 and "--dsl must be one of triton, helion" in refused.output
