"""Splits without leakage (gym.tasks.splits): families keyed by the dispatched aten ops, duplicates
recorded under the older name rule moved to their family's most exposed split (and said so), every
op kind in val and test, and no family in two splits, over fixtures and over the shipped suite."""

from __future__ import annotations

import json
from pathlib import Path

import tomli_w

from gym.tasks.paths import tasks_dir
from gym.tasks.splits import SPLITS_FILE, SplitFile, hashed_split, leaked_families, read_splits, record_splits


def _task(root: Path, task_id: str, ops: list[str], kind: str) -> str:
    """A task folder whose task file records what its reference dispatches (all record_splits reads)."""
    folder = root / task_id
    folder.mkdir(parents=True)
    (folder / "task.toml").write_text(tomli_w.dumps({"id": task_id, "kernelbench": {"dispatched": ops, "op_kind": kind}}))
    return task_id


def _leaks(recorded: SplitFile) -> dict[str, dict[str, list[str]]]:
    return leaked_families({task_id: (recorded.task_families[task_id], split) for task_id, split in recorded.tasks.items()})


def test_duplicates_recorded_under_names_join_their_familys_most_exposed_split(tmp_path: Path) -> None:
    ids = [
        _task(tmp_path, "opinfo/add", ["aten.add.Tensor"], "elementwise"),
        _task(tmp_path, "opinfo/dunder_radd", ["aten.add.Tensor"], "elementwise"),
        _task(tmp_path, "opinfo/true_divide", ["aten.div.Tensor"], "elementwise"),
        _task(tmp_path, "opinfo/div__no_rounding_mode", ["aten.div.Tensor"], "elementwise"),
        _task(tmp_path, "opinfo/softmax", ["aten._softmax.default"], "normalisation"),
        _task(tmp_path, "opinfo/safe_softmax", ["aten._safe_softmax.default"], "normalisation"),
        _task(tmp_path, "opinfo/exp", ["aten.exp.default"], "elementwise"),
    ]
    # As an older import recorded them, by name: duplicates straddle splits.
    old = {"opinfo/add": "train", "opinfo/dunder_radd": "test", "opinfo/true_divide": "val", "opinfo/div__no_rounding_mode": "test"}
    old |= {"opinfo/softmax": "train", "opinfo/safe_softmax": "test", "opinfo/exp": "test"}
    (tmp_path / SPLITS_FILE).write_text(json.dumps({"tasks": old, "families": {}}))
    recorded = record_splits(tmp_path, ids, shared=SplitFile())
    assert recorded.tasks == old | {"opinfo/dunder_radd": "train", "opinfo/div__no_rounding_mode": "val", "opinfo/safe_softmax": "train"}
    assert set(recorded.moved) == {"opinfo/dunder_radd", "opinfo/div__no_rounding_mode", "opinfo/safe_softmax"}
    assert recorded.moved["opinfo/dunder_radd"] == "test -> train: its family aten.add is in train too (opinfo/add)"
    assert recorded.task_families["opinfo/safe_softmax"] == recorded.task_families["opinfo/softmax"] == "aten._softmax"
    assert not _leaks(recorded)
    # Written down: a second recording changes nothing.
    assert record_splits(tmp_path, ids, shared=SplitFile()) == read_splits(tmp_path) == recorded


def test_a_fresh_import_has_every_kind_in_val_and_test_and_no_leak(tmp_path: Path) -> None:
    kinds = {"matmul": ["mm", "bmm", "addmm", "baddbmm", "mv"], "convolution": ["convolution", "conv_tbc", "slow_conv3d_forward"]}
    kinds |= {"elementwise": [f"op{number}" for number in range(40)], "reduction": ["sum", "mean", "amax", "amin", "prod", "std"]}
    ids = []
    for kind, packets in kinds.items():
        for packet in packets:
            # Two tasks per family: the same op at two shapes, from two sources.
            ids.append(_task(tmp_path, f"opinfo/{packet}", [f"aten.{packet}.default"], kind))
            ids.append(_task(tmp_path, f"models/m/{packet}_1", [f"aten.{packet}.default"], kind))
    recorded = record_splits(tmp_path, ids, shared=SplitFile())
    for split in ("val", "test", "train"):
        present = {recorded.task_kinds[task_id] for task_id, where in recorded.tasks.items() if where == split}
        assert present == set(kinds), (split, present)
    assert not _leaks(recorded)
    # Only new families were drawn, and the most populous first; hashed splits elsewhere.
    drawn = [family for family, split in recorded.families.items() if split != hashed_split(family)]
    assert drawn and all(family.split(".")[1] in {packet for packets in kinds.values() for packet in packets} for family in drawn)


def test_recorded_families_and_the_shipped_suites_are_joined(tmp_path: Path) -> None:
    first = record_splits(tmp_path, [_task(tmp_path, "opinfo/mm", ["aten.mm.default"], "matmul")], shared=SplitFile())
    shipped = SplitFile(tasks={"l1/relu": "test"}, families={"aten.relu": "test"}, task_families={"l1/relu": "aten.relu"})
    again = record_splits(
        tmp_path,
        [_task(tmp_path, "models/m/mm_3", ["aten.mm.default"], "matmul"), _task(tmp_path, "kb/l1/19_relu", ["aten.relu.default"], "elementwise")],
        shared=shipped,
    )
    assert again.tasks["models/m/mm_3"] == first.tasks["opinfo/mm"]
    assert again.tasks["kb/l1/19_relu"] == "test"
    # A task whose file records no dispatch keeps its name's family (as before).
    named = record_splits(tmp_path, ["opinfo/nn_functional_gelu"], shared=SplitFile(), measure=None)
    assert named.task_families["opinfo/nn_functional_gelu"] == "gelu"


def test_the_shipped_suite_has_no_leaked_family() -> None:
    recorded = read_splits(tasks_dir())
    assert set(recorded.task_families) >= set(recorded.tasks)
    assert not _leaks(recorded), _leaks(recorded)
