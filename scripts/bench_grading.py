"""Print the wall time to grade every shipped solution and the fixed overhead of one grade.

    .venv/bin/python scripts/bench_grading.py [--parallel 2] [--suite l1]

Fixed overhead = a fresh worker process importing torch and Triton, plus the
grade of a trivial submission that launches nothing (process start, imports,
job files, reading records back). Each solution is also graded once without
the late calls (`grade(..., late_calls=False)`), side by side, to show what
they cost.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gym.grading.batch import grade_many
from gym.grading.grader import grade
from gym.tasks.loader import discover, find_task

TRIVIAL = "def kernel(x, y):\n    return x + y\n"


def median_seconds(action, reps: int) -> float:
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--suite", default=None)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()

    imports = median_seconds(lambda: subprocess.run([sys.executable, "-c", "import torch, triton"], check=True), args.reps)
    task = find_task("l1/vector_add")
    with tempfile.TemporaryDirectory() as tmp:
        trivial = Path(tmp) / "trivial.py"
        trivial.write_text(TRIVIAL)
        trivial_grade = median_seconds(lambda: grade(task, trivial, timing_reps=0), args.reps)

    tasks = discover(suite=args.suite).tasks
    jobs = [(t, t.solution_path) for t in tasks]
    start = time.perf_counter()
    sequential = grade_many(jobs, parallel=1)
    sequential_s = time.perf_counter() - start
    start = time.perf_counter()
    parallel = grade_many(jobs, parallel=args.parallel)
    parallel_s = time.perf_counter() - start
    start = time.perf_counter()
    without_late = grade_many(jobs, parallel=1, late_calls=False)
    without_late_s = time.perf_counter() - start

    print(f"fixed overhead: python -c 'import torch, triton' median {imports:.2f} s")
    print(f"fixed overhead: full grade of a trivial submission (no kernel launch) median {trivial_grade:.2f} s")
    print(f"{'task':32} {'status':10} {'grade s':>8} {'no late calls s':>16}")
    for result, plain in zip(sequential, without_late):
        print(f"{result.task_id:32} {result.status.value:10} {result.duration_s:8.2f} {plain.duration_s:16.2f}")
    failed = [r.task_id for r in sequential + parallel + without_late if r.status.value != "passed"]
    print(f"all {len(jobs)} shipped solutions, one at a time: {sequential_s:.1f} s ({without_late_s:.1f} s without the late calls)")
    print(f"all {len(jobs)} shipped solutions, {args.parallel} at a time: {parallel_s:.1f} s")
    if failed:
        print(f"NOT PASSED: {sorted(set(failed))}")
        sys.exit(1)


if __name__ == "__main__":
    main()
