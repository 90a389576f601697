"""The traffic count: what it costs an interpreted grade, and what it says of every shipped solution.

    .venv/bin/python scripts/bench_traffic.py [--suite l1] [--tasks l1/softmax,l1/matmul] [--reps 1] [--gpu-profile "H100 SXM"]

Each shipped solution is graded twice, interleaved, in the default sandbox with the grader's
defaults: once with the training signal off (`grade(..., signal=False)`: the witness
neither counts nor profiles) and once as every grade runs (the witness counts the first public
trial's replay, interpreted). Prints per task the median wall time of each and their ratio, then
the counted grade's traffic ratio (bytes moved / the task's minimum), its launches, and the
speedups modelled on the GPU profile (never measured: a roofline bound), then the totals.
The README's traffic table is this script's output over `--suite l1`.
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
from gym.schema.result import GradeResult
from gym.tasks.loader import discover
from gym.tasks.model import Task


def graded(task: Task, signal: bool, reps: int, gpu_profile: str) -> tuple[float, GradeResult]:
    samples: list[float] = []
    result: GradeResult | None = None
    for rep in range(reps):
        started = time.perf_counter()
        result = grade(task, task.solution_path, GradeOptions(warm=False, signal=signal, gpu_profile=gpu_profile), secret=100 + rep)
        samples.append(time.perf_counter() - started)
    assert result is not None
    return statistics.median(samples), result


def _figure(value: float | None, spec: str) -> str:
    return format(value, spec) if value is not None else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", default=None, help="only this suite's tasks (default: every shipped task)")
    parser.add_argument("--tasks", default=None, help="comma-separated task ids (overrides --suite)")
    parser.add_argument("--reps", type=int, default=1, help="grades per task and setting (the median is shown)")
    parser.add_argument("--gpu-profile", default="H100 SXM", help="the GPU profile the speed is modelled on")
    args = parser.parse_args()
    tasks = [task for task in discover().tasks if task.solution_path is not None and (args.suite is None or task.id.startswith(args.suite + "/"))]
    if args.tasks:
        wanted = {name.strip() for name in args.tasks.split(",") if name.strip()}
        tasks = [task for task in tasks if task.id in wanted]
    print(
        f"{'task':30} {'plain s':>8} {'counted s':>9} {'ratio':>6} | {'traffic':>7} {'launches':>8} {'mod. eager':>10} {'mod. compile':>12} {'bound':>7}  status"
    )
    totals = [0.0, 0.0]
    for task in tasks:
        # Interleaved, so a slow moment of the machine hits both settings alike.
        plain, _ = graded(task, False, args.reps, args.gpu_profile)
        counted, result = graded(task, True, args.reps, args.gpu_profile)
        totals[0] += plain
        totals[1] += counted
        traffic, modelled = result.traffic, result.modelled
        print(
            f"{task.id:30} {plain:8.2f} {counted:9.2f} {counted / plain:6.2f} | {_figure(result.traffic_ratio, '7.2f')} "
            f"{(traffic.launches if traffic else '-'):>8} {_figure(result.modelled_speedup_vs_eager, '10.2f')} "
            f"{_figure(result.modelled_speedup_vs_compile, '12.2f')} {(modelled.bound if modelled else '-'):>7}  {result.status.value}",
            flush=True,
        )
    print(f"{'total':30} {totals[0]:8.2f} {totals[1]:9.2f} {totals[1] / max(totals[0], 1e-9):6.2f}")


if __name__ == "__main__":
    main()
