"""Calibrate the precision-fair contract of imported KernelBench tasks (README, KernelBench).

For every imported task (a task root from `kgym import kernelbench`), at each public and hidden
shape, prints how far each variant's error against the float64 oracle is from the float32
reference's own error, as the ratio the `oracle` check compares with its factor
(error / (reference error + relative floor x largest output magnitude)):

- honest: the reference with the reduction order changed (one torch thread instead of many, and
  the float32 inputs' batch rows reversed where the output is per row) -- honest reorderings;
- float16: inputs and weights cast to float16, computed there, cast back;
- tf32: inputs and weights rounded to TF32's 10-bit mantissa (what TF32 tensor cores read);
- dropped: the last 1/16 of the first input's last dimension zeroed (a kernel that skips a tail).

    python scripts/calibrate_kernelbench.py --tasks ROOT [--suite kb] [--factor 8] [--floor 7.6e-6] [--json OUT.jsonl]

The oracle factor must sit above every honest ratio and below every float16/tf32/dropped ratio
of the problems whose output depends on those terms; the summary prints the quantiles.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from gym.tasks.inputs import generate_inputs, public_seed
from gym.tasks.loader import discover
from gym.tasks.model import Task
from gym.tasks.paths import add_task_root
from gym.tasks.references import as_output_list, call_args, clone_args, oracle_outputs, reference_fn


def _error(got: list[torch.Tensor], truth: list[torch.Tensor]) -> float:
    worst = 0.0
    for a, b in zip(got, truth):
        if not b.dtype.is_floating_point:
            continue
        x, y = a.to(torch.float64), b.to(torch.float64)
        finite = torch.isfinite(x) & torch.isfinite(y)
        if bool((torch.isfinite(x) != torch.isfinite(y)).any()):
            return math.inf
        if finite.any():
            worst = max(worst, float((x[finite] - y[finite]).abs().max()))
    return worst


def _scale(truth: list[torch.Tensor]) -> float:
    return max((float(t.to(torch.float64).abs().max()) for t in truth if t.dtype.is_floating_point and t.numel()), default=0.0)


def _run(task: Task, shape: dict[str, int], args: dict[str, Any]) -> list[torch.Tensor]:
    outputs, _ = as_output_list(reference_fn(task, shape)(*call_args(clone_args(args), task.spec.params)))
    return [output.detach() for output in outputs]


def _cast(args: dict[str, Any], convert: Any) -> dict[str, Any]:
    return {name: convert(value) if isinstance(value, torch.Tensor) and value.dtype == torch.float32 else value for name, value in args.items()}


def _tf32(value: torch.Tensor) -> torch.Tensor:
    bits = value.contiguous().view(torch.int32)
    rounded = (bits + 0x1000) & ~0x1FFF
    return rounded.view(torch.float32)


def _dropped(task: Task, args: dict[str, Any]) -> dict[str, Any]:
    first = task.spec.params[0]
    value = args[first]
    if not isinstance(value, torch.Tensor) or not value.dtype.is_floating_point or value.shape[-1] < 2:
        return args
    changed = value.clone()
    tail = max(1, value.shape[-1] // 16)
    changed[..., -tail:] = 0
    return {**args, first: changed}


def variants(task: Task, shape: dict[str, int], args: dict[str, Any]) -> dict[str, list[torch.Tensor]]:
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        honest = _run(task, shape, args)
    finally:
        torch.set_num_threads(threads)
    found = {"honest": honest}
    try:
        found["float16"] = [o.to(torch.float32) if o.dtype == torch.float16 else o for o in _run(task, shape, _cast(args, lambda v: v.to(torch.float16)))]
    except Exception:  # noqa: BLE001 - an op without half support on CPU
        pass
    found["tf32"] = _run(task, shape, _cast(args, _tf32))
    found["dropped"] = _run(task, shape, _dropped(task, args))
    return found


def calibrate(task: Task, floor: float, factor: float) -> list[dict[str, Any]]:
    rows = []
    shapes = [("public", i, s) for i, s in enumerate(task.spec.shapes.public)] + [("hidden", i, s) for i, s in enumerate(task.spec.shapes.hidden)]
    for kind, index, shape in shapes:
        args = generate_inputs(task, shape, torch.float32, public_seed(task.id, "float32", kind, index), torch.device("cpu"))
        reference = _run(task, shape, args)
        if not any(t.dtype.is_floating_point for t in reference):
            continue
        truth = oracle_outputs(task, args, shape)
        reference_error = _error(reference, truth)
        allowance = reference_error + floor * _scale(truth)
        # What the oracle check allows: factor x the reference's error + the relative floor.
        allowed = factor * reference_error + floor * _scale(truth)
        row: dict[str, Any] = {"task": task.id, "trial": f"{kind} #{index + 1}", "reference_error": reference_error}
        for name, outputs in variants(task, shape, args).items():
            error = _error(outputs, truth)
            row[name] = error / allowance if allowance > 0 else (0.0 if error == 0 else math.inf)
            row[f"{name}_passes"] = error <= allowed
        rows.append(row)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", type=Path, required=True, help="the task root holding the imported tasks")
    parser.add_argument("--suite", default="kb")
    parser.add_argument("--floor", type=float, default=2.0**-17, help="relative floor (x the output's largest magnitude)")
    parser.add_argument("--factor", type=float, default=8.0, help="the oracle check's factor (x the reference's own error)")
    parser.add_argument("--json", type=Path, default=None, help="write every row here (JSON lines, as they are measured)")
    args = parser.parse_args()
    add_task_root(args.tasks)
    torch.set_num_threads(max(1, torch.get_num_threads()))
    rows: list[dict[str, Any]] = []
    tasks = discover(args.tasks, suite=args.suite, include_degenerate=True).tasks
    if args.json:
        args.json.write_text("")
    for number, task in enumerate(tasks, 1):
        try:
            found = calibrate(task, args.floor, args.factor)
        except Exception as error:  # noqa: BLE001 - one broken problem must not stop the survey
            print(f"{task.id}: {type(error).__name__}: {str(error)[:200]}", file=sys.stderr)
            found = []
        rows += found
        if args.json:
            # One JSON line per trial, written as it comes (a long survey keeps what it measured).
            with args.json.open("a") as handle:
                handle.writelines(json.dumps(row) + "\n" for row in found)
        print(f"[{number}/{len(tasks)}] {task.id}", file=sys.stderr, flush=True)
    print(f"ratio = error / (reference error + floor x max|output|); passes = error <= {args.factor:g} x reference error + floor x max|output|")
    print(f"{'variant':>8} {'n':>5} {'min':>10} {'p10':>10} {'median':>10} {'p90':>10} {'max':>10} {'passes':>8}")
    for name in ("honest", "float16", "tf32", "dropped"):
        values = sorted(row[name] for row in rows if name in row and not math.isnan(row[name]))
        if not values:
            continue

        def q(p: float, values: list[float] = values) -> float:
            return values[min(len(values) - 1, int(p * len(values)))]

        passing = sum(1 for row in rows if row.get(f"{name}_passes"))
        print(f"{name:>8} {len(values):>5} {values[0]:>10.3g} {q(0.1):>10.3g} {q(0.5):>10.3g} {q(0.9):>10.3g} {values[-1]:>10.3g} {passing:>8}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
