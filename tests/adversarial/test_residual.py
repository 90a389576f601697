"""Known residuals (tests/adversarial/residual/): tricks the grader cannot tell from honest work, graded
for the property that makes them harmless: they gain nothing.

A forged tape whose claimed kernels compute, bit for bit, what torch computed in the call (an exact
elementwise op: the own-inputs replay reproduces torch's bits) passes. The grade then says what the
file's kernels do, on fresh inputs, at the speed the witness measured for them: the same label the
honest kernel alone earns, so the forgery pays exactly what writing the kernel pays, never more. What
it does not say is that the call itself ran them (docs/how/defences.md, "Residual risk")."""

from __future__ import annotations

from pathlib import Path

from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.schema.result import Status
from gym.tasks.loader import find_task

RESIDUAL = Path(__file__).resolve().parent / "residual"


def test_a_bit_exact_forged_tape_gains_nothing_over_its_honest_kernel() -> None:
    task = find_task("l1/vector_add")
    options = GradeOptions(late_calls=False)
    forged = grade(task, RESIDUAL / "bitexact_forged_tape_vector_add.py", options, secret=1129)
    honest = grade(task, task.solution_path, options, secret=1129)
    assert honest.status == Status.passed
    assert forged.status in (Status.passed, Status.rejected), (forged.status, forged.error)
    if forged.status == Status.passed:
        assert forged.timings is not None and honest.timings is not None
        # The reported speed is the witness's replay of the same kernel: no faster than the honest grade's, within noise.
        for mine, theirs in zip(forged.timings.shapes, honest.timings.shapes):
            assert mine.candidate is not None and theirs.candidate is not None
            assert mine.candidate.median_s >= 0.5 * theirs.candidate.median_s, (mine.candidate.median_s, theirs.candidate.median_s)
