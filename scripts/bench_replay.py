"""What the witness's replay costs: every shipped solution graded with and without it, side by side.

    .venv/bin/python scripts/bench_replay.py [--suite l1] [--tasks l1/softmax,l2/moe_permute] [--reps 1]
    .venv/bin/python scripts/bench_replay.py --suite l1 --before c1c9a0e

With `--before REV`, the grade with the replay is compared instead with the same grade as the
commit REV made it (a git worktree of REV in a temporary folder, imported first in a child
process): the per-grade cost of a change to the witness, before and after, side by side.

Each grade runs cold (no warm pool), in the default sandbox, with the grader's
defaults (hidden shapes, late calls, timing); `replay=False` is the one switch
(`grade(..., replay=False)`: no tapes written, no witness phase, no replay). Prints
per task the median wall time of each, the difference and the ratio, then the totals.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
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


REPO = Path(__file__).resolve().parent.parent
CHILD = """
import json, sys, time
from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.tasks.loader import discover
task = next(task for task in discover().tasks if task.id == sys.argv[1])
started = time.perf_counter()
result = grade(task, task.solution_path, GradeOptions(warm=False), secret=int(sys.argv[2]))
print(json.dumps([time.perf_counter() - started, result.status.value]))
"""


def seconds_in(tree: Path, task_id: str, reps: int) -> tuple[float, str]:
    """`seconds(task_id, True, reps)` as the gym in `tree` grades (a child process importing it first)."""
    samples, status = [], ""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    for rep in range(reps):
        done = subprocess.run([sys.executable, "-c", CHILD, task_id, str(100 + rep)], cwd=tree, env=env, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            return float("nan"), f"failed: {done.stderr.strip().splitlines()[-1:] or done.returncode}"
        took, status = json.loads(done.stdout.strip().splitlines()[-1])
        samples.append(took)
    return statistics.median(samples), status


def before_and_after(tasks: list[str], revision: str, reps: int) -> None:
    with tempfile.TemporaryDirectory(prefix="kgym-before-") as folder:
        before = Path(folder) / "tree"
        subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", str(before), revision], check=True, capture_output=True)
        try:
            print(f"{'task':34} {'before s':>9} {'after s':>8} {'ratio':>6}  status")
            totals = [0.0, 0.0]
            for task_id in tasks:
                # Interleaved, so a slow moment of the machine hits both alike.
                old, status_old = seconds_in(before, task_id, reps)
                new, status_new = seconds_in(REPO, task_id, reps)
                totals[0] += old
                totals[1] += new
                status = status_new if status_new == status_old else f"{status_old} -> {status_new}"
                print(f"{task_id:34} {old:9.2f} {new:8.2f} {new / old:6.2f}  {status}", flush=True)
            print(f"{'total':34} {totals[0]:9.2f} {totals[1]:8.2f} {totals[1] / max(totals[0], 1e-9):6.2f}")
        finally:
            subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(before)], check=False, capture_output=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default=None, help="only this suite's tasks (default: every shipped task)")
    parser.add_argument("--tasks", default=None, help="comma-separated task ids (overrides --suite)")
    parser.add_argument("--reps", type=int, default=1, help="grades per task and setting (the median is shown)")
    parser.add_argument("--before", default=None, help="compare with the grade as this git revision made it (a worktree of it)")
    args = parser.parse_args()
    tasks = [task.id for task in discover().tasks if args.suite is None or task.id.startswith(args.suite + "/")]
    if args.tasks:
        tasks = [task.strip() for task in args.tasks.split(",") if task.strip()]
    if args.before:
        before_and_after(tasks, args.before, args.reps)
        return
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
