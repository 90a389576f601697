"""GPU check: grade every shipped solution with timings on its benchmark shape,
compare the gym's timer with triton.testing.do_bench on the same kernel, repeat
each measurement for run-to-run spread, and write a JSON + text report.

    python scripts/gpu_check.py [--out gpu-check] [--reps 10] [--repeats 2] [--sandbox auto]

Installs nothing. Meant to finish in under 5 minutes on one H200. `--sandbox
auto` uses bwrap when it works here, else the process backend (noted in the
report: a GPU box lent for a check may lack bubblewrap).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch

from gym.grading.grader import grade
from gym.grading.timing_policy import TimingPolicy
from gym.sandbox import available_sandboxes
from gym.tasks.inputs import generate_inputs, public_seed
from gym.tasks.loader import discover
from gym.tasks.model import Task
from gym.tasks.references import call_args


def do_bench_ms(task: Task) -> float | None:
    """triton.testing.do_bench (median, L2 flushed by Triton) of the shipped kernel on the bench shape."""
    import triton.testing

    if not task.spec.shapes.bench:
        return None
    spec = importlib.util.spec_from_file_location(f"solution_{task.id.replace('/', '_')}", task.solution_path)
    module = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(module)  # type: ignore[union-attr]
    dtype_name = task.spec.dtypes[0]
    shape = task.spec.shapes.bench[0]
    inputs = generate_inputs(task, shape, getattr(torch, dtype_name), public_seed(task.id, dtype_name, "bench", 0), torch.device("cuda"))
    args = call_args(inputs, task.spec.params)
    return float(triton.testing.do_bench(lambda: module.kernel(*args), return_mode="median"))


def pick_sandbox(choice: str) -> tuple[str, str | None]:
    if choice != "auto":
        return choice, None
    problem = available_sandboxes()["bwrap"].check()
    return ("bwrap", None) if problem is None else ("process", f"bwrap unavailable here ({problem}); used the process backend")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path("gpu-check"))
    parser.add_argument("--reps", type=int, default=10)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--sandbox", default="auto")
    parser.add_argument("--budget", type=float, default=3.0, help="seconds of further timing rounds per grade (the 5-minute cap)")
    args = parser.parse_args()
    if not torch.cuda.is_available():
        print("no CUDA device: this check needs a GPU", file=sys.stderr)
        sys.exit(2)
    sandbox, note = pick_sandbox(args.sandbox)
    started = time.monotonic()
    rows: list[dict[str, Any]] = []
    for task in discover().tasks:
        medians, statuses, sol = [], [], None
        speedups, rses, stops = [], [], []
        policy = TimingPolicy(min_reps=args.reps, max_reps=max(args.reps, 100), budget_s=args.budget, warmup_s=0.025)
        for _ in range(args.repeats):
            result = grade(task, task.solution_path, sandbox=sandbox, timing=policy, bench=True)
            statuses.append(result.status.value)
            if result.timings and result.timings.candidate:
                medians.append(result.timings.candidate.median_s * 1e3)
                rses.append(result.timings.candidate.rse)
                stops.append(f"{result.timings.stop_reason}/{result.timings.candidate.reps} reps/{result.timings.rounds} rounds")
            if result.speedup_vs_eager:
                speedups.append(result.speedup_vs_eager)
            sol = result.sol_fraction if result.sol_fraction is not None else sol
        try:
            bench_ms = do_bench_ms(task)
        except Exception as error:  # noqa: BLE001 - reported, not fatal
            bench_ms = None
            statuses.append(f"do_bench failed: {type(error).__name__}: {error}")
        gym_ms = statistics.median(medians) if medians else None
        rows.append(
            {
                "task": task.id,
                "statuses": statuses,
                "gym_median_ms": gym_ms,
                "gym_medians_ms": medians,
                "gym_rse": rses,
                "stop": stops,
                "run_to_run_spread": (max(medians) - min(medians)) / gym_ms if medians and gym_ms else None,
                "do_bench_median_ms": bench_ms,
                "gym_vs_do_bench": gym_ms / bench_ms if gym_ms and bench_ms else None,
                "speedup_vs_eager": statistics.median(speedups) if speedups else None,
                "sol_fraction": sol,
            }
        )
        print(f"{task.id:30} {statuses} gym {gym_ms} ms do_bench {bench_ms} ms", flush=True)
    report = {
        "device": torch.cuda.get_device_name(),
        "torch": torch.__version__,
        "sandbox": sandbox,
        "note": note,
        "reps": args.reps,
        "repeats": args.repeats,
        "wall_s": time.monotonic() - started,
        "tasks": rows,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "gpu_check.json").write_text(json.dumps(report, indent=2))
    lines = [f"{report['device']}  torch {report['torch']}  sandbox {sandbox}  {report['wall_s']:.0f} s" + (f"  ({note})" if note else "")]
    lines.append(f"{'task':30} {'gym ms':>10} {'do_bench ms':>12} {'ratio':>7} {'spread':>7} {'speedup':>8} {'SOL':>6}")

    def cell(value: float | None, pattern: str) -> str:
        return pattern.format(value) if value is not None else "-"

    for row in rows:
        lines.append(
            f"{row['task']:30} {cell(row['gym_median_ms'], '{:.4f}'):>10} {cell(row['do_bench_median_ms'], '{:.4f}'):>12} "
            f"{cell(row['gym_vs_do_bench'], '{:.2f}'):>7} {cell(row['run_to_run_spread'], '{:.1%}'):>7} "
            f"{cell(row['speedup_vs_eager'], '{:.2f}x'):>8} {cell(row['sol_fraction'], '{:.0%}'):>6}"
        )
    (args.out / "gpu_check.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
