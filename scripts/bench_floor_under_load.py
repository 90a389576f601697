"""The replay's time floor on a loaded machine: shipped solutions graded several at once, each timed
trial's candidate median beside its kernels' replayed time.

    .venv/bin/python scripts/bench_floor_under_load.py [--at-once 4] [--rounds 3] [--tasks l1/vector_add,l1/softmax]

Every round starts `--at-once` grades in threads (the tasks taken in turn), in the default sandbox,
with the grader's defaults, so the replays run while other grades hold the cores (as in a verl
reward manager or a served gym). For each timed trial it prints the candidate's median, the
witness's replayed time (the fastest of its runs, which stop at the first under the candidate's
median over the floor), their ratio and the runs it took: the floor (`gym.grading.judging.replay.ReplaySettings.time_floor`,
0.2 on CPU) rejects a ratio below it as `timing_not_reproduced`. It observes the figures by wrapping
`ReplayPhase.judge` in this process (the grade's verdict is unchanged) and ends with every grade's
status: an honest solution must pass at any load.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from gym.grading.grader import grade
from gym.grading.judging import replay
from gym.grading.judging.verdict import Verdict
from gym.grading.options import GradeOptions
from gym.tasks.loader import find_task

DEFAULT_TASKS = "l1/vector_add,l1/index_add_rows,l1/softmax,l1/matmul,l1/histogram,l1/cumsum"

_figures: list[tuple[str, str, float, float, int]] = []
_lock = threading.Lock()
_judge = replay.ReplayPhase.judge


def _observing_judge(phase: replay.ReplayPhase, verdict: Verdict, out_dir: Path, timed_out: bool, allowed: list[str], candidate: dict[int, float]) -> None:
    report = phase.report(out_dir)
    if report is not None:
        records = {record.id: record for record in report.records}
        for slot in phase.slots:
            record = records.get(slot.item)
            if not slot.timed or record is None or not record.seconds:
                continue
            ids = next(ids for trial, ids in phase.layout if trial.label == slot.trial.label)
            own = replay.timed_seconds(slot.trial, ids, candidate)
            if own:
                with _lock:
                    _figures.append((phase.task.id, slot.trial.label, statistics.median(own), record.seconds, record.timed_runs))
    _judge(phase, verdict, out_dir, timed_out, allowed, candidate)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--at-once", type=int, default=4, help="grades running at the same time (default 4)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of --at-once grades (default 3)")
    parser.add_argument("--tasks", default=DEFAULT_TASKS, help="comma-separated task ids, taken in turn")
    args = parser.parse_args()
    tasks = [find_task(task_id) for task_id in args.tasks.split(",")]
    replay.ReplayPhase.judge = _observing_judge  # type: ignore[method-assign,assignment]
    statuses: list[tuple[str, str, str]] = []

    def one(index: int) -> None:
        task = tasks[index % len(tasks)]
        result = grade(task, task.solution_path, GradeOptions())
        with _lock:
            statuses.append((task.id, result.status.value, ", ".join(result.integrity_flags) or (result.error or "")[:120]))

    for round_ in range(args.rounds):
        threads = [threading.Thread(target=one, args=(round_ * args.at_once + i,)) for i in range(args.at_once)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    floor = replay.CPU_REPLAY.time_floor
    print(f"{'task':28} {'trial':22} {'candidate ms':>12} {'replay ms':>10} {'ratio':>6} {'runs':>5}  (floor {floor:g})")
    for task_id, label, candidate, kernels, runs in sorted(_figures, key=lambda row: row[2] / row[3]):
        print(f"{task_id:28} {label:22} {candidate * 1e3:12.2f} {kernels * 1e3:10.2f} {candidate / kernels:6.2f} {runs:5d}")
    repeated = sum(row[4] > 1 for row in _figures)
    print(f"\n{repeated}/{len(_figures)} timed replays needed more than one run (runs stop at the first under candidate / floor)")
    passed = sum(status == "passed" for _, status, _ in statuses)
    print(f"\n{passed}/{len(statuses)} grades passed ({args.at_once} at once, {args.rounds} rounds)")
    for task_id, status, why in statuses:
        if status != "passed":
            print(f"  {task_id}: {status}: {why}")


if __name__ == "__main__":
    main()
