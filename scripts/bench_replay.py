"""What the witness's replay costs: every shipped solution graded with and without it, side by side.

    .venv/bin/python scripts/bench_replay.py [--suite l1] [--tasks l1/softmax,l2/moe_permute] [--reps 1]

Each grade runs cold (no warm pool), in the default sandbox, with the grader's
defaults (hidden shapes, late calls, timing); `replay=False` is the one switch
(`grade(..., replay=False)`: no tapes written, no witness phase, no replay). Prints
per task the median wall time of each, the difference and the ratio, then the totals.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.tasks.loader import discover


def seconds(task_id: str, replay: bool, reps: int) -> tuple[float, str]:
    task = next(task for task in discover().tasks if task.id == task_id)
    samples, status = [], ""
    for rep in range(reps):
        started = time.perf_counter()
        result = grade(task, task.solution_path, GradeOptions(warm=False, replay=replay), secret=100 + rep)
        samples.append(time.perf_counter() - started)
        status = result.status.value
    return statistics.median(samples), status


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default=None, help="only this suite's tasks (default: every shipped task)")
    parser.add_argument("--tasks", default=None, help="comma-separated task ids (overrides --suite)")
    parser.add_argument("--reps", type=int, default=1, help="grades per task and setting (the median is shown)")
    args = parser.parse_args()
    tasks = [task.id for task in discover().tasks if args.suite is None or task.id.startswith(args.suite + "/")]
    if args.tasks:
        tasks = [task.strip() for task in args.tasks.split(",") if task.strip()]
    print(f"{'task':34} {'no replay s':>12} {'replay s':>9} {'extra s':>8} {'ratio':>6}  status")
    totals = [0.0, 0.0]
    for task_id in tasks:
        # Interleaved, so a slow moment of the machine hits both settings alike.
        without, status_without = seconds(task_id, False, args.reps)
        with_replay, status_with = seconds(task_id, True, args.reps)
        totals[0] += without
        totals[1] += with_replay
        status = status_with if status_with == status_without else f"{status_without} -> {status_with}"
        print(f"{task_id:34} {without:12.2f} {with_replay:9.2f} {with_replay - without:8.2f} {with_replay / without:6.2f}  {status}", flush=True)
    print(f"{'total':34} {totals[0]:12.2f} {totals[1]:9.2f} {totals[1] - totals[0]:8.2f} {totals[1] / max(totals[0], 1e-9):6.2f}")


if __name__ == "__main__":
    main()
