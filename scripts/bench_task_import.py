"""The task distribution, built from scratch: OpInfo and models imported and checked, then counted.

    .venv/bin/python scripts/bench_task_import.py [--out DIR] [--kernelbench CHECKOUT]

Into a fresh task root (default: a temporary folder): `import_opinfo` (timed), the same import
again (timed: everything unchanged), `import_models` (timed), check-tasks over both (timed,
marking degenerate tasks as `kgym check-tasks` does), and a KernelBench checkout's import when
one is given. Prints the times side by side, the valid tasks by source and split, the ops left
out by reason, the degenerate tasks by reason, and the root's diversity (gym.tasks.diversity:
tasks by source, split, kind and reason, distinct aten ops and fusion patterns by source and split,
leaked families); exits 1 when a family is in two splits (the full import's leakage check).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import warnings
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gym.grading.validation.task_validation import mark_imported, validate_tasks
from gym.tasks.diversity import diversity_report
from gym.tasks.loader import discover
from gym.tasks.metadata import measure_family
from gym.tasks.models.importer import import_models
from gym.tasks.opinfo.importer import import_opinfo
from gym.tasks.splits import SPLITS, record_splits, source_of


def timed(label: str, times: dict[str, float], run):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    result = run()
    times[label] = time.perf_counter() - started
    print(f"{label}: {times[label]:.1f} s", flush=True)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="task root to import into (default: a temporary folder)")
    parser.add_argument("--kernelbench", type=Path, default=None, help="a KernelBench checkout to import too")
    args = parser.parse_args()
    warnings.filterwarnings("ignore")
    root = args.out or Path(tempfile.mkdtemp(prefix="kgym-distribution-"))
    times: dict[str, float] = {}
    opinfo = timed("import opinfo", times, lambda: import_opinfo(root))
    again = timed("re-import opinfo (unchanged)", times, lambda: import_opinfo(root))
    models = timed("import models", times, lambda: import_models(root))
    if args.kernelbench is not None:
        from gym.tasks.kernelbench.importer import import_checkout

        timed("import kernelbench", times, lambda: import_checkout(args.kernelbench, root))
    tasks = discover(root, include_degenerate=True).tasks
    checks = timed("check-tasks (opinfo + models + kb)", times, lambda: validate_tasks(tasks))
    by_id = {task.id: task for task in tasks}
    for check in checks:
        mark_imported(by_id[check.task_id], check)
    record_splits(root, [task.id for task in tasks], measure=measure_family)
    valid = discover(root).tasks
    print(f"\ntask root: {root}")
    print("times: " + ", ".join(f"{label} {seconds:.0f} s" for label, seconds in times.items()))
    print(
        f"opinfo: {len(opinfo.ops)} entries, {opinfo.count('new')} imported, {opinfo.count('excluded')} left out, {opinfo.count('failed')} failed; re-import: {again.count('unchanged')} unchanged"
    )
    print(f"models: {len(models.models)} traced ({', '.join(models.models)}), {models.count('new')} imported, coverage {models.models}")
    counts: Counter[tuple[str, str]] = Counter((source_of(task.id), str(task.split)) for task in valid)
    print(f"\nvalid tasks: {len(valid)} of {len(tasks)}")
    print(f"{'source':14} " + " ".join(f"{split:>6}" for split in SPLITS) + "   total")
    for source in sorted({source for source, _ in counts}):
        row = [counts[(source, split)] for split in SPLITS]
        print(f"{source:14} " + " ".join(f"{value:6d}" for value in row) + f"   {sum(row):5d}")
    print("\nleft out (opinfo), by reason:")
    for reason, names in sorted(opinfo.reasons().items(), key=lambda item: -len(item[1])):
        print(f"  {reason} ({len(names)}): {', '.join(names)}")
    degenerate = Counter(problem.reason for check in checks for problem in check.problems)
    print("\ndegenerate, by reason: " + ", ".join(f"{reason} {count}" for reason, count in degenerate.most_common()))
    print("degenerate tasks: " + ", ".join(check.task_id for check in checks if not check.ok))
    diversity = timed("diversity report", times, lambda: diversity_report(root))
    print("", *diversity.lines(), sep="\n")
    if diversity.leaked:
        sys.exit(f"{len(diversity.leaked)} families are in more than one split")


if __name__ == "__main__":
    main()
