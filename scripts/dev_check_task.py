"""Developer check for one task, in-process (no worker): load it, run its
solution under the Triton interpreter on every trial, judge the contract,
and do the same for the off-by-one-masked mutation (which must fail).

    .venv/bin/python scripts/dev_check_task.py l1/softmax [SECRETS]

SECRETS (default 1) runs the solution under that many secret seeds.
"""

from __future__ import annotations

import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TRITON_INTERPRET", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import torch

from gym.grading.judging.judge import judge_trial
from gym.grading.planning.plan import plan_trials
from gym.tasks.loader import find_task
from gym.tasks.references import as_output_list, call_args, clone_args
from tests.support.mutations import off_by_one_masks


def load(path: Path):
    spec = importlib.util.spec_from_file_location(f"sub_{abs(hash(path))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.kernel


def run(task, kernel, secret: int) -> bool:
    ok = True
    for trial in plan_trials(task, torch.device("cpu"), secret=secret):
        start = time.perf_counter()
        outputs = [as_output_list(kernel(*call_args(clone_args(plan.args), task.spec.params)))[0] for plan in trial.calls]
        elapsed = time.perf_counter() - start
        for outcome in judge_trial(trial, outputs):
            ok &= outcome.passed
            print(f"  {trial.label:22} {trial.shape} {outcome.kind:15} {'ok ' if outcome.passed else 'FAIL'} {outcome.message} [{elapsed:.2f}s]")
    return ok


def main() -> None:
    task = find_task(sys.argv[1])
    seeds = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    good = True
    for secret in range(12345, 12345 + seeds):
        print(f"{task.id}: solution (secret {secret})")
        good &= run(task, load(task.solution_path), secret)
    source = task.solution_path.read_text()
    mutated = off_by_one_masks(source)
    assert mutated != source, "the off-by-one mutation changed nothing: write masks as `x < bound` on lines mentioning mask"
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "mutant.py"
        path.write_text(mutated)
        print(f"{task.id}: off-by-one mutant")
        try:
            mutant_ok = run(task, load(path), 12345)
        except Exception as error:  # noqa: BLE001 - a crash counts as failing
            print(f"  mutant crashed: {type(error).__name__}: {error}")
            mutant_ok = False
    print(f"solution passes: {good}; mutant fails: {not mutant_ok}")
    sys.exit(0 if good and not mutant_ok else 1)


if __name__ == "__main__":
    main()
