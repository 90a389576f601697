"""Print the wall time to grade every shipped solution and the fixed overhead of one grade, cold vs warm.

    .venv/bin/python scripts/bench_grading.py [--parallel 2] [--suite l1] [--late-calls] [--fixed-only]
    .venv/bin/python scripts/bench_grading.py --executor local ray [--ray-address auto] [--ray-workers 2]

Fixed overhead = a fresh worker process importing torch and Triton (and, beside
it, the same plus torch._dynamo: what the op trace's first dispatch imported in
every worker until `OpTrace` opted out of torch's dynamo-disable wrapper), plus the
grade of a trivial submission that launches nothing (process start, imports,
job files, reading records back), with every worker started cold
(`warm=False`) and taken from a warm pool that had time to get ready
(`gym.sandbox.warm_pool`). Then every shipped solution, one at a time and
`--parallel` at a time, cold vs warm, side by side. `--late-calls` also grades
each one without the late calls (`grade(..., late_calls=False)`) to show what
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

import torch

from gym.execution.batch import grade_many
from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.sandbox import DEFAULT_SANDBOX
from gym.sandbox.warm_pool import ensure_pool, shutdown_pools
from gym.tasks.loader import discover, find_task

TRIVIAL = "def kernel(x, y):\n    return x + y\n"


def median_seconds(action, reps: int) -> float:
    samples = []
    for _ in range(reps):
        start = time.perf_counter()
        action()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def executor_comparison(executors: list[str], suite: str, ray_address: str | None, ray_workers: int, reps: int) -> list[str]:
    """Grades per minute for `suite`'s shipped solutions through each executor named (local: 1 and 2
    lanes; ray: `ray_workers` lanes, on a local Ray of that many CPUs unless `ray_address` names a
    cluster), side by side, and the per-grade overhead Ray adds: the median wall time of a grade
    the static audit refuses (no sandbox: pure dispatch) through Ray minus the same grade through a
    one-lane local executor.
    Every configuration re-measures its baselines (`fresh_baselines`), so none rides on another's cache.
    Returns a line for each grade that did not pass."""
    from gym.execution.executor import Executor, GradeOptions
    from gym.execution.local import LocalExecutor

    tasks = discover(suite=suite).tasks
    jobs = [(t, t.solution_path) for t in tasks]
    lanes: list[tuple[str, int, Executor]] = []
    if "local" in executors:
        lanes += [("local", 1, LocalExecutor(concurrency=1)), ("local", 2, LocalExecutor(concurrency=2))]
    ray_executor = None
    if "ray" in executors:
        from gym.execution.ray_executor import RayExecutor

        init = {} if ray_address else {"num_cpus": ray_workers, "object_store_memory": 200 * 1024 * 1024}
        ray_executor = RayExecutor(ray_address, concurrency=ray_workers, init_options=init)
        lanes.append(("ray", ray_workers, ray_executor))
    rows, failed = [], []
    for name, count, executor in lanes:
        start = time.perf_counter()
        results = grade_many(jobs, executor=executor, fresh_baselines=True)
        wall = time.perf_counter() - start
        failed += [f"{name} x{count}: {r.task_id} {r.status.value}: {(r.error or '').splitlines()[0][:200]}" for r in results if r.status.value != "passed"]
        median_grade = statistics.median(r.duration_s for r in results)
        rows.append(
            f"{name:6} {count:5} {wall:9.1f} {len(jobs) * 60 / wall:12.1f} {median_grade:15.2f} {sum(r.status.value == 'passed' for r in results):>4}/{len(jobs)}"
        )
        if executor is not ray_executor:
            executor.close()
    print(f"{suite} suite, {len(jobs)} shipped solutions per configuration")
    print(f"{'exec':6} {'lanes':>5} {'wall s':>9} {'grades/min':>12} {'median grade s':>15} {'passed':>6}")
    print("\n".join(rows))
    if ray_executor is not None:
        task = find_task("l1/vector_add")
        options = GradeOptions(timing_reps=0, warm=False)
        local = LocalExecutor(concurrency=1, warm=False)
        with tempfile.TemporaryDirectory() as tmp:
            refused = Path(tmp) / "refused.py"
            refused.write_text("import os\n\ndef kernel(x, y):\n    return os.system('true')\n")
            ray_executor.grade(task, refused, options)  # every Ray worker imports the gym once
            through_ray = median_seconds(lambda: ray_executor.grade(task, refused, options), max(reps, 5))
            through_local = median_seconds(lambda: local.grade(task, refused, options), max(reps, 5))
        print(
            f"per-grade overhead of ray (a grade the audit refuses, median): {through_ray * 1e3:.0f} ms vs {through_local * 1e3:.0f} ms local = +{(through_ray - through_local) * 1e3:.0f} ms"
        )
        local.close()
        ray_executor.close()
    return failed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--parallel", type=int, default=2)
    parser.add_argument("--suite", default=None)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--late-calls", action="store_true", help="Also grade each solution without the late calls.")
    parser.add_argument("--fixed-only", action="store_true", help="Only the fixed overhead of one grade, not the suite.")
    parser.add_argument("--executor", nargs="+", choices=["local", "ray"], help="Only compare executors: grades per minute of the suite (default l1).")
    parser.add_argument("--ray-address", default=None, help='Ray cluster for --executor ray ("auto", HOST:PORT; default: start a local one).')
    parser.add_argument("--ray-workers", type=int, default=2, help="Grades at once through Ray (and the local Ray's CPUs).")
    args = parser.parse_args()
    if args.executor:
        failed = executor_comparison(args.executor, args.suite or "l1", args.ray_address, args.ray_workers, args.reps)
        if failed:
            print("NOT PASSED:\n  " + "\n  ".join(failed))
            sys.exit(1)
        return

    imports = median_seconds(lambda: subprocess.run([sys.executable, "-c", "import torch, triton"], check=True), args.reps)
    with_dynamo = median_seconds(lambda: subprocess.run([sys.executable, "-c", "import torch, triton, torch._dynamo"], check=True), args.reps)
    task = find_task("l1/vector_add")
    with tempfile.TemporaryDirectory() as tmp:
        trivial = Path(tmp) / "trivial.py"
        trivial.write_text(TRIVIAL)
        trivial_cold = median_seconds(lambda: grade(task, trivial, GradeOptions(timing_reps=0, warm=False)), args.reps)
        pool = ensure_pool(DEFAULT_SANDBOX, torch.device("cpu"), 1)

        def warm_grade() -> None:
            # The pool had time to start its worker (as between an RL trainer's grades).
            if pool is not None:
                pool.wait_ready()
            started = time.perf_counter()
            grade(task, trivial, GradeOptions(timing_reps=0))
            samples.append(time.perf_counter() - started)

        samples: list[float] = []
        for _ in range(args.reps):
            warm_grade()
        trivial_warm = statistics.median(samples)
        shutdown_pools()
    print(f"fixed overhead: python -c 'import torch, triton' median {imports:.2f} s; with torch._dynamo as well {with_dynamo:.2f} s")
    print(f"fixed overhead: full grade of a trivial submission (no kernel launch) median {trivial_cold:.2f} s cold, {trivial_warm:.2f} s warm")
    if args.fixed_only:
        return

    tasks = discover(suite=args.suite).tasks
    jobs = [(t, t.solution_path) for t in tasks]
    runs: dict[str, tuple[float, list]] = {}
    for name, parallel, warm in (("one cold", 1, False), ("one warm", 1, True), ("many cold", args.parallel, False), ("many warm", args.parallel, True)):
        start = time.perf_counter()
        results = grade_many(jobs, parallel=parallel, warm=warm)
        runs[name] = (time.perf_counter() - start, results)
    without_late: list = []
    if args.late_calls:
        start = time.perf_counter()
        without_late = grade_many(jobs, parallel=1, late_calls=False, warm=False)
        runs["no late calls"] = (time.perf_counter() - start, without_late)

    header = f"{'task':32} {'status':10} {'cold s':>8} {'warm s':>8}" + (f" {'no late calls s':>16}" if without_late else "")
    print(header)
    for index, (cold, warm) in enumerate(zip(runs["one cold"][1], runs["one warm"][1])):
        line = f"{cold.task_id:32} {cold.status.value:10} {cold.duration_s:8.2f} {warm.duration_s:8.2f}"
        print(line + (f" {without_late[index].duration_s:16.2f}" if without_late else ""))
    failed = [r.task_id for _, results in runs.values() for r in results if r.status.value != "passed"]
    print(f"all {len(jobs)} shipped solutions, one at a time: {runs['one cold'][0]:.1f} s cold, {runs['one warm'][0]:.1f} s warm")
    print(f"all {len(jobs)} shipped solutions, {args.parallel} at a time: {runs['many cold'][0]:.1f} s cold, {runs['many warm'][0]:.1f} s warm")
    if without_late:
        print(f"all {len(jobs)} shipped solutions, one at a time, cold, without the late calls: {runs['no late calls'][0]:.1f} s")
    if failed:
        print(f"NOT PASSED: {sorted(set(failed))}")
        sys.exit(1)


if __name__ == "__main__":
    main()
