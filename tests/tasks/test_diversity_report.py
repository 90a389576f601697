"""The diversity report (gym.tasks.diversity): counts by source, split, kind and reason, distinct
aten ops and fusion patterns by source and split, leaked families, kinds missing from a split."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from gym.tasks.diversity import degenerate_reasons, diversity_of
from gym.tasks.model import Task, TaskSpec
from gym.tasks.paths import references_dir
from gym.tasks.splits import Split, SplitFile


def _task(task_id: str, split: Split, ops: list[str], kind: str, degenerate: str | None = None) -> Task:
    document: dict[str, Any] = {
        "id": task_id,
        "version": 1,
        "title": task_id,
        "description": task_id,
        "params": ["x"],
        "dtypes": ["float32"],
        "min_bytes": "0",
        "min_flops": "0",
        "shapes": {"public": [{"n": 4}], "hidden": [{"n": 7}]},
        "contract": [{"kind": "bitwise"}],
        "kernelbench": {
            "level": 2 if len(ops) > 1 else 1,
            "problem_file": "problem.py",
            "source_path": "fixture",
            "checkout": "fixture",
            "sha256": "0" * 64,
            "importer_version": 1,
            "forward_inputs": ["x"],
            "dispatched": ops,
            "op_kind": kind,
        },
    }
    if degenerate is not None:
        document["degenerate"] = degenerate
    return Task(spec=TaskSpec.model_validate(document), folder=Path("/nonexistent") / task_id, references_dir=references_dir(), split=split)


TASKS = [
    _task("opinfo/add", "train", ["aten.add.Tensor"], "elementwise"),
    _task("models/m/add_1", "train", ["aten.add.Tensor"], "elementwise"),
    _task("opinfo/dunder_radd", "test", ["aten.add.Tensor"], "elementwise"),
    _task("opinfo/mm", "val", ["aten.mm.default"], "matmul"),
    _task("models/m/mm_2", "val", ["aten.mm.default"], "matmul"),
    _task("opinfo/sum", "test", ["aten.sum.dim_IntList"], "reduction"),
    _task("models/m/linear_gelu", "train", ["aten.mm.default", "aten.add.Tensor", "aten.gelu.default"], "matmul"),
    _task("models/m/residual_norm", "test", ["aten.add.Tensor", "aten.native_layer_norm.default"], "normalisation"),
    _task("opinfo/all", "val", ["aten.all.default"], "integer", degenerate="constant_output: the same for every seed; flat_output: no spread"),
]


def test_the_report_counts_tasks_ops_patterns_and_leaks() -> None:
    report = diversity_of(TASKS, measure=False)
    assert (report.tasks, report.degenerate) == (8, 1)
    assert report.by_source == {"models": {"train": 2, "val": 1, "test": 1}, "opinfo": {"train": 1, "val": 1, "test": 2}}
    assert report.by_kind["matmul"] == {"train": 1, "val": 2, "test": 0}
    assert list(report.by_kind) == ["matmul", "normalisation", "reduction", "elementwise"]
    assert report.by_reason == {"constant_output": 1, "flat_output": 1}
    # Distinct ops: add, mm, sum (the degenerate all does not count); patterns: two fusions.
    assert (report.distinct_ops, report.distinct_patterns, report.distinct) == (3, 2, 5)
    assert report.ops["all"] == {"train": 1, "val": 1, "test": 2} and report.ops["models"] == {"train": 1, "val": 1, "test": 0}
    assert report.patterns["models"] == {"train": 1, "val": 0, "test": 1}
    assert report.aten_ops_touched == 5
    # add is in train and in test: leaked, with the tasks on each side.
    assert report.leaked == {"aten.add": {"test": ["opinfo/dunder_radd"], "train": ["models/m/add_1", "opinfo/add"]}}
    assert report.kinds_missing == {"train": ["normalisation", "reduction"], "val": ["normalisation", "reduction", "elementwise"], "test": ["matmul"]}
    text = "\n".join(report.lines())
    assert "8 valid tasks (1 degenerate); 5 distinct ops and patterns (3 ops, 2 fusion patterns" in text
    assert "leaked aten.add: train models/m/add_1, opinfo/add; test opinfo/dunder_radd" in text


def test_reasons_are_read_from_the_verdict() -> None:
    assert degenerate_reasons(TASKS[-1]) == ["constant_output", "flat_output"]
    assert degenerate_reasons(TASKS[0]) == []


def test_families_the_shipped_suite_holds_elsewhere_are_named() -> None:
    report = diversity_of(TASKS, measure=False, shipped=SplitFile(families={"aten.mm": "train", "aten.sum": "test"}))
    assert report.leaked_with_shipped == {"aten.mm": {"shipped: train": [], "val": ["models/m/mm_2", "opinfo/mm"]}}
    assert "leaked aten.mm: shipped: train; val models/m/mm_2, opinfo/mm" in "\n".join(report.lines())
