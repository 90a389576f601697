"""Sweep secrets: how often does an honest kernel fail its task's contract? (issue 37, target 3)

For each entry (a shipped `solution.py`, an honest corpus file under tests/honest/, or any file
given with --file TASK=PATH), and each secret in a range, this plans the grade's trials exactly as
the grader does (gym.grading.planning.plan.plan_trials: public, hidden and hardened trials, the secret mixed
into every seed, timed calls on fresh inputs with --timed), runs the submission's real kernels
in-process under Triton's interpreter (TRITON_INTERPRET=1, the worker's interpreter fixes
installed: programs in a shuffled order, same-address atomic lanes in a secret order, TF32 `tl.dot`
by default), and judges every call with the real contract checks (gym.grading.judging.judge). The sandbox,
audit and replay are left out: this measures the contract only, on the trusted side.

A grade fails when any checked call fails. Printed per entry: grades, failures, failures per 1,000,
and the worst failure's message. `--before` judges with the allowance as it was before the honest
spread (gym.contracts.spread.disabled): one draw of the reference's own error; `--compare` judges
every call both ways (the kernels run once).

    .venv/bin/python scripts/sweep_secrets.py --solutions --secrets 50
    .venv/bin/python scripts/sweep_secrets.py --task l2/sliding_window_attention --solutions --secrets 100 --before
    .venv/bin/python scripts/sweep_secrets.py --honest --secrets 50 --repeat 2
    .venv/bin/python scripts/sweep_secrets.py --file l1/cross_entropy=tests/honest/v37_item_count_cross_entropy.py --late

`--late` adds the grader's late calls (gym.grading.planning.plan.add_late_calls: 201 to 233 more calls on
the cheapest trial's inputs, each judged like the main call): a kernel with float atomics draws its
order again on each, against the same allowance.
"""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import argparse
import contextlib
import fnmatch
import importlib.util
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import torch

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gym.contracts import Diagnostics, OracleCheck, elementwise, spread  # noqa: E402
from gym.grading.judging.judge import PER_CALL_ROLES, judge_timed, judge_trial  # noqa: E402
from gym.grading.planning.plan import TimingRequest, Trial, add_late_calls, plan_trials  # noqa: E402
from gym.tasks.loader import discover  # noqa: E402
from gym.tasks.model import Task  # noqa: E402
from gym.tasks.references import call_args, clone_args  # noqa: E402
from gym.worker.dtypes import dtype_name  # noqa: E402
from gym.worker.interpreter import shim  # noqa: E402


@dataclass
class Entry:
    task: Task
    path: Path
    label: str


@dataclass
class Tally:
    grades: int = 0
    failures: int = 0
    failed_secrets: list[int] = field(default_factory=list)
    worst: tuple[float, str] = (0.0, "")
    seconds: float = 0.0
    # Per check kind, the largest figure / threshold over every judged call, passing or not (the margin).
    peak: dict[str, tuple[float, str]] = field(default_factory=dict)


def _counts_only(output: int, got: torch.Tensor, expected: torch.Tensor, error: torch.Tensor, mismatch: torch.Tensor) -> Diagnostics:
    """Element diagnostics without the worst elements and patterns: a verdict never depends on them,
    and for the `nontrivial` check's failing trivial answers they were half of a sweep's time."""
    return Diagnostics(output=output, elements=got.numel(), mismatched=int(mismatch.sum()))


def load_module(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def entries(args: argparse.Namespace) -> list[Entry]:
    tasks = {task.id: task for task in discover().tasks}
    wanted = [task_id for task_id in tasks if not args.task or any(fnmatch.fnmatch(task_id, pattern) for pattern in args.task)]
    found: list[Entry] = []
    if args.solutions:
        found += [Entry(tasks[task_id], tasks[task_id].folder / "solution.py", f"{task_id} solution") for task_id in wanted]
    if args.honest:
        for path in sorted((ROOT / "tests" / "honest").glob("*.py")):
            if path.name.startswith("test_"):
                continue
            match = re.search(r"^Task:\s*(\S+)", path.read_text(), re.MULTILINE)
            if match and match.group(1) in wanted:
                found.append(Entry(tasks[match.group(1)], path, f"{match.group(1)} honest/{path.name}"))
    for item in args.file or []:
        task_id, _, file = item.partition("=")
        found.append(Entry(tasks[task_id], Path(file), f"{task_id} {file}"))
    if args.only_oracle:
        found = [entry for entry in found if any(check.kind == "oracle" for check in entry.task.spec.contract)]
    return found


def run_call(kernel: Any, task: Task, call_inputs: dict[str, Any]) -> list[torch.Tensor]:
    result = kernel(*call_args(clone_args(call_inputs), task.spec.params))
    outputs = list(result) if isinstance(result, (tuple, list)) else [result]
    return [output.detach() for output in outputs]


# Check kinds whose figure grows with the error and whose threshold is the bound: figure / threshold is
# the share of the allowance used (1 is the edge).
RATIO_KINDS = frozenset({"oracle", "normwise", "allclose", "ulp", "logprob"})


def _judged(outcomes: list[Any], label: str, peak: dict[str, tuple[float, str]]) -> list[tuple[float, str]]:
    """The failing outcomes as (figure / threshold, message); `peak` keeps each kind's largest ratio."""
    failed = []
    for outcome in outcomes:
        ratio = (outcome.figure / outcome.threshold) if outcome.figure is not None and outcome.threshold else None
        if outcome.kind in RATIO_KINDS and ratio is not None and ratio >= peak.get(outcome.kind, (-1.0, ""))[0]:
            peak[outcome.kind] = (ratio, label)
        if not outcome.passed:
            failed.append((ratio if ratio is not None else float("inf"), f"{label}: {outcome.kind}: {outcome.message}"))
    return failed


def judge_grade(
    kernel: Any, task: Task, trials: list[Trial], repeat: int, modes: list[bool], peaks: dict[bool, dict[str, tuple[float, str]]]
) -> dict[bool, list[tuple[float, str]]]:
    """Every failing check of one grade, as (figure / threshold, message), per mode (True: before);
    `peaks[mode]` keeps each check kind's largest figure / threshold. The kernel runs once per call;
    each mode judges the same outputs."""
    failed: dict[bool, list[tuple[float, str]]] = {mode: [] for mode in modes}

    def judge(trial: Trial, run: Any) -> None:
        # Only oracle checks are calibrated: a trial without one is judged once for every mode.
        calibrated = any(isinstance(check, OracleCheck) for check in trial.checks)
        outcomes = None
        for mode in modes:
            if outcomes is None or calibrated:
                with spread.disabled() if mode else contextlib.nullcontext():
                    outcomes = run()
            failed[mode].extend(_judged(outcomes, trial.label, peaks[mode]))

    for trial in trials:
        calls = [plan for plan in trial.calls if plan.role not in PER_CALL_ROLES]
        outputs = [run_call(kernel, task, plan.args) for plan in calls]
        judge(trial, lambda trial=trial, outputs=outputs: judge_trial(trial, outputs))
        # The late calls repeat the main call's inputs: a nondeterministic kernel (atomics) is drawn again.
        extra = [(calls[0], run_call(kernel, task, calls[0].args)) for _ in range(repeat)]
        extra += [(plan, run_call(kernel, task, plan.args)) for plan in trial.calls if plan.role in PER_CALL_ROLES]
        for plan, got in extra:
            judge(trial, lambda trial=trial, plan=plan, got=got: judge_timed(trial, plan, got))
    return failed


def sweep(entry: Entry, secrets: range, timed: int, repeat: int, modes: list[bool], dtypes: list[str] | None = None, late: bool = False) -> dict[bool, Tally]:
    module = load_module(entry.path, f"sweep_{abs(hash(entry.path))}")
    kernel = module.kernel
    tallies = {mode: Tally() for mode in modes}
    started = time.perf_counter()
    for secret in secrets:
        torch.manual_seed(secret)
        trials = plan_trials(entry.task, torch.device("cpu"), secret, include_hidden=True, timing=TimingRequest(reps=timed))
        if dtypes:
            trials = [trial for trial in trials if dtype_name(trial.dtype) in dtypes]
        if late:
            add_late_calls(trials, secret)
        peaks: dict[bool, dict[str, tuple[float, str]]] = {mode: {} for mode in modes}
        failed = judge_grade(kernel, entry.task, trials, repeat, modes, peaks)
        for mode, tally in tallies.items():
            for kind, (ratio, label) in peaks[mode].items():
                if ratio >= tally.peak.get(kind, (-1.0, ""))[0]:
                    tally.peak[kind] = (ratio, f"secret {secret} {label}")
            tally.grades += 1
            if failed[mode]:
                tally.failures += 1
                tally.failed_secrets.append(secret)
                worst = max(failed[mode])
                if worst[0] >= tally.worst[0]:
                    tally.worst = (worst[0], f"secret {secret}: {worst[1]}")
    for tally in tallies.values():
        tally.seconds = time.perf_counter() - started
    return tallies


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--task", action="append", help="task id or glob (repeatable); all when omitted")
    parser.add_argument("--solutions", action="store_true", help="the shipped solution.py of each task")
    parser.add_argument("--honest", action="store_true", help="the honest corpus (tests/honest/*.py)")
    parser.add_argument("--file", action="append", help="TASK=PATH: any other submission file")
    parser.add_argument("--only-oracle", action="store_true", help="only tasks whose contract has an oracle check")
    parser.add_argument("--secrets", type=int, default=50, help="how many secrets (grades) per entry")
    parser.add_argument("--start", type=int, default=0, help="the first secret")
    parser.add_argument("--timed", type=int, default=1, help="timed calls on fresh inputs per grade (the grader's first public trial)")
    parser.add_argument("--repeat", type=int, default=0, help="extra calls on each trial's own inputs (late calls: atomics drawn again)")
    parser.add_argument("--dtype", action="append", help="only the trials of this dtype variant (repeatable): a cheaper sweep")
    parser.add_argument("--late", action="store_true", help="the grader's late calls (201..233 more calls on the cheapest trial's inputs)")
    parser.add_argument("--before", action="store_true", help="judge with one draw of the reference's error (no honest spread)")
    parser.add_argument("--compare", action="store_true", help="judge each call both ways (before and after): the kernel runs once")
    args = parser.parse_args()
    shim.install()
    elementwise.element_diagnostics = _counts_only
    found = entries(args)
    if not found:
        parser.error("nothing to sweep (pass --solutions, --honest or --file)")
    secrets = range(args.start, args.start + args.secrets)
    modes = [True, False] if args.compare else [args.before]
    totals = {mode: Tally() for mode in modes}
    for entry in found:
        try:
            tallies = sweep(entry, secrets, args.timed, args.repeat, modes, args.dtype, args.late)
        except Exception as error:  # noqa: BLE001 - a broken entry is reported, the sweep goes on
            print(f"{entry.label:60s} ERROR {type(error).__name__}: {error}", flush=True)
            continue
        for mode, tally in tallies.items():
            total = totals[mode]
            total.grades += tally.grades
            total.failures += tally.failures
            per_mille = 1000.0 * tally.failures / max(tally.grades, 1)
            line = f"{entry.label:60s} {'before' if mode else 'after ':6s} {tally.failures:3d}/{tally.grades:<4d} {per_mille:6.1f}/1000 {tally.seconds:6.1f}s"
            peak = " ".join(f"{kind}={ratio:.3g}x({label})" for kind, (ratio, label) in sorted(tally.peak.items()))
            line += f"  peak {peak or '-'}"
            if tally.failures:
                line += f"  secrets {tally.failed_secrets[:8]}  worst {tally.worst[1][:300]}"
            print(line, flush=True)
            for kind, (ratio, label) in tally.peak.items():
                if ratio >= total.peak.get(kind, (-1.0, ""))[0]:
                    total.peak[kind] = (ratio, f"{entry.label} {label}")
    for mode, total in totals.items():
        per_mille = 1000.0 * total.failures / max(total.grades, 1)
        print(f"TOTAL {'before' if mode else 'after'}: {total.failures}/{total.grades} grades failed = {per_mille:.1f} per 1,000")
        for kind, (ratio, label) in sorted(total.peak.items()):
            print(f"  peak {kind}: {ratio:.3g}x the allowance ({label})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
