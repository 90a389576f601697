"""What a Helion grade costs beside the Triton solution of the same task, side by side in one run.

    .venv/bin/python scripts/bench_helion.py [--sandbox bwrap] [--tasks l1/softmax,l1/matmul] [--rounds 1]

For every task that ships both solution.py and solution_helion.py: each graded in turn, Triton then
Helion, with the same secret and the same options (`kgym grade`'s defaults: every timing round),
`--rounds` times; prints the status, the grade's wall seconds (the median over rounds) and the
candidate's interpreted median per call for both, and their ratios. Run it on a quiet machine.
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

SECRET = 20261205


def _candidate_ms(result: GradeResult) -> float | None:
    timings = result.timings
    return timings.candidate.median_s * 1e3 if timings is not None and timings.candidate is not None else None


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sandbox", default="bwrap")
    parser.add_argument("--tasks", default=None, help="comma-separated task ids (default: every task with a Helion solution)")
    parser.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args()
    tasks = [task for task in discover().tasks if task.solution_for("helion").is_file()]
    if args.tasks:
        wanted = {name.strip() for name in args.tasks.split(",")}
        tasks = [task for task in tasks if task.id in wanted]
    rows = []
    failed = 0
    for task in sorted(tasks, key=lambda task: task.id):
        seconds: dict[str, list[float]] = {"triton": [], "helion": []}
        results: dict[str, GradeResult] = {}
        for _ in range(args.rounds):
            for dsl in ("triton", "helion"):
                started = time.monotonic()
                results[dsl] = grade(task, task.solution_for(dsl), GradeOptions(sandbox=args.sandbox), secret=SECRET)
                seconds[dsl].append(time.monotonic() - started)
        triton_s, helion_s = statistics.median(seconds["triton"]), statistics.median(seconds["helion"])
        triton_ms, helion_ms = _candidate_ms(results["triton"]), _candidate_ms(results["helion"])
        failed += sum(result.status.value != "passed" for result in results.values())
        rows.append(
            (
                task.id,
                results["triton"].status.value,
                results["helion"].status.value,
                f"{triton_s:.1f}",
                f"{helion_s:.1f}",
                f"{helion_s / triton_s:.2f}x",
                f"{triton_ms:.3g}" if triton_ms else "-",
                f"{helion_ms:.3g}" if helion_ms else "-",
                f"{helion_ms / triton_ms:.2f}x" if triton_ms and helion_ms else "-",
            )
        )
    header = ("task", "triton", "helion", "triton grade s", "helion grade s", "ratio", "triton call ms", "helion call ms", "ratio")
    widths = [max(len(str(row[index])) for row in [header, *rows]) for index in range(len(header))]
    for row in [header, *rows]:
        print("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)))
    total_t = sum(float(row[3]) for row in rows)
    total_h = sum(float(row[4]) for row in rows)
    print(
        f"{len(rows)} tasks ({args.sandbox}, {args.rounds} round(s)): Triton {total_t:.0f} s, Helion {total_h:.0f} s in all ({total_h / max(total_t, 1e-9):.2f}x)"
    )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
