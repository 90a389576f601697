"""CPU self-check of the timing path: known work measured within 5%, and the
run-to-run spread of a real interpreted kernel.

    .venv/bin/python scripts/bench_timer.py [--grades 5]

1. `gym.worker.timer.time_each` (the one timer: the reference is timed with it and
   the worker times the candidate through the same `timed_call`) measures sleeps
   of known length.
2. The shipped l1/softmax solution is graded several times; the spread of its
   candidate median across grades is the run-to-run noise of interpreted timings.
3. One grade with the stopping rule switched on (target RSE 1%, 30 s budget):
   how many rounds and repetitions the interpreter needs to get there.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch

from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.grading.timing.timing_policy import TimingPolicy
from gym.tasks.loader import find_task
from gym.worker.timer import time_each

TOLERANCE = 0.05


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--grades", type=int, default=5)
    args = parser.parse_args()
    worst = 0.0
    for target_ms in (2.0, 10.0, 50.0):
        samples = time_each(lambda seconds: time.sleep(seconds), iter([target_ms / 1e3] * 7), torch.device("cpu"))
        measured_ms = statistics.median(samples) * 1e3
        error = (measured_ms - target_ms) / target_ms
        worst = max(worst, abs(error))
        print(f"sleep {target_ms:5.1f} ms: measured median {measured_ms:7.3f} ms ({error:+.1%})")
    print(f"worst timer error on known work: {worst:.1%} ({'within' if worst <= TOLERANCE else 'OUTSIDE'} {TOLERANCE:.0%})")
    task = find_task("l1/softmax")
    medians = []
    for _ in range(args.grades):
        result = grade(task, task.solution_path, GradeOptions(timing_reps=5))
        assert result.timings and result.timings.candidate, result.feedback
        medians.append(result.timings.candidate.median_s * 1e3)
    spread = (max(medians) - min(medians)) / statistics.median(medians)
    print(
        f"l1/softmax interpreted candidate median over {args.grades} grades: "
        f"{statistics.median(medians):.2f} ms (min {min(medians):.2f}, max {max(medians):.2f}, spread {spread:.1%})"
    )
    rule = TimingPolicy(min_reps=5, max_reps=80, budget_s=30.0, warmup_s=0.2, target_rse=0.01)
    result = grade(task, task.solution_path, GradeOptions(timing=rule))
    timings = result.timings
    assert timings and timings.candidate, result.feedback
    rse = timings.candidate.rse
    rse_text = f"RSE {rse:.2%}" if rse is not None else "RSE n/a"
    print(
        f"l1/softmax with the stopping rule (target RSE 1%, 30 s budget): stopped on {timings.stop_reason} after "
        f"{timings.candidate.reps} reps in {timings.rounds} rounds, {rse_text}"
    )
    sys.exit(0 if worst <= TOLERANCE else 1)


if __name__ == "__main__":
    main()
