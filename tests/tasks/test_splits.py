"""Splits (gym.tasks.splits): stable, shared by near-duplicates, balanced per stratum, written down
once and never changed; and every surface that draws tasks takes one."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from typer.testing import CliRunner

from gym.cli import app
from gym.errors import EnvError, TaskLoadError
from gym.harness.env import Env
from gym.tasks import splits
from gym.tasks.loader import discover, load_task
from gym.tasks.paths import tasks_dir
from gym.tasks.splits import SHARES, SPLITS_FILE, family_of, hashed_split, read_splits, record_splits, split_of, stratum_of


def test_near_duplicates_share_a_family() -> None:
    assert family_of("kb/l1/19_relu") == family_of("l1/relu") == family_of("opinfo/nn_functional_relu") == "relu"
    assert family_of("opinfo/max__binary") == family_of("opinfo/max__reduction_with_dim") == family_of("opinfo/max") == "max"
    assert family_of("kb/l1/23_softmax") == family_of("kb/l2/23_softmax") == "softmax"
    assert family_of("models/llama_7b/mm_3") == family_of("models/resnet50/mm_12") == "mm"
    assert stratum_of("kb/l2/1_conv2d_relu") == "kernelbench/l2"
    assert stratum_of("opinfo/add") == "opinfo/l1"
    assert stratum_of("l3/moe_layer") == "shipped/l3"
    assert stratum_of("models/llama/aten_mm_1") == "models/l1"
    assert stratum_of("models/l2/llama/mm_add_gelu_1") == "models/l2"
    assert stratum_of("models/backward/llama/rms_norm_backward_1") == "models/backward"


@given(st.text(alphabet="abcdefghijklmnopqrstuvwxyz", min_size=1, max_size=20), st.integers(0, 300), st.integers(1, 3))
def test_every_member_of_a_family_gets_its_split(name: str, number: int, level: int) -> None:
    ids = [f"kb/l{level}/{number}_{name}", f"opinfo/{name}__variant", f"opinfo/nn_functional_{name}", f"l{level}/{name}", f"models/m/{name}_{number}"]
    assert {family_of(task_id) for task_id in ids} == {name}
    assert {split_of(task_id, splits.SplitFile()) for task_id in ids} == {hashed_split(name)}


def test_each_stratum_gets_the_same_mix() -> None:
    # 4,000 families in each of three strata: every split's share within 2.5 points of its target.
    for stratum in ("opinfo/{}", "kb/l1/{}_x", "kb/l2/{}_y"):
        ids = [stratum.format(f"op{number}") for number in range(4000)]
        counts = Counter(split_of(task_id, splits.SplitFile()) for task_id in ids)
        for split, share in SHARES.items():
            assert abs(counts[split] / len(ids) - share) < 0.025, (stratum, counts)


def test_a_recorded_split_never_changes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ids = [f"opinfo/op{number}" for number in range(60)]
    first = record_splits(tmp_path, ids).tasks
    # Whatever the hash would say now (another salt), recorded tasks keep theirs...
    monkeypatch.setattr(splits, "SALT", "another salt")
    monkeypatch.setattr(splits, "hashed_split", lambda family, salt="": "test")
    again = record_splits(tmp_path, [*ids, "opinfo/op0__variant", "opinfo/brand_new"])
    assert {task_id: again.tasks[task_id] for task_id in ids} == first
    # ... a new task of a recorded family joins it, and a new family gets the (new) hash.
    assert again.tasks["opinfo/op0__variant"] == first["opinfo/op0"]
    assert again.tasks["opinfo/brand_new"] == "test"
    assert read_splits(tmp_path).tasks == again.tasks


def test_every_shipped_task_is_recorded() -> None:
    recorded = read_splits(tasks_dir()).tasks
    shipped = {task.id for task in discover(tasks_dir(), include_degenerate=True).tasks}
    assert shipped <= set(recorded), sorted(shipped - set(recorded))
    for task in discover(tasks_dir()).tasks:
        assert task.split == recorded[task.id]


def copy_of_tasks(tmp_path: Path, ids: list[str]) -> Path:
    root = tmp_path / "tasks"
    for task_id in ids:
        shutil.copytree(tasks_dir() / task_id, root / task_id)
    return root


def test_a_split_file_decides_and_a_broken_one_is_named(tmp_path: Path) -> None:
    root = copy_of_tasks(tmp_path, ["l1/vector_add", "l1/silu"])
    (root / SPLITS_FILE).write_text(json.dumps({"tasks": {"l1/vector_add": "val", "l1/silu": "test"}}))
    assert {task.id: task.split for task in discover(root).tasks} == {"l1/silu": "test", "l1/vector_add": "val"}
    assert [task.id for task in discover(root, split="val").tasks] == ["l1/vector_add"]
    # Loaded without its root, a task has its family's hashed split.
    assert load_task(root / "l1" / "silu").split == hashed_split("silu")
    with pytest.raises(TaskLoadError, match="split: 'dev' is not one of train, val, test"):
        discover(root, split="dev")
    (root / SPLITS_FILE).write_text('{"tasks": {"l1/silu": "holdout"}}')
    report = discover(root)
    assert not report.tasks and all("not a splits file" in error for error in report.errors)


def test_env_and_cli_take_a_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = copy_of_tasks(tmp_path, ["l1/vector_add", "l1/silu", "l1/softmax"])
    (root / SPLITS_FILE).write_text(json.dumps({"tasks": {"l1/vector_add": "test", "l1/silu": "train", "l1/softmax": "test"}}))
    monkeypatch.setattr("gym.tasks.loader.task_roots", lambda: [root])
    env = Env(split="test", grader=lambda task, path: None)  # type: ignore[arg-type,return-value]
    drawn = {env.reset(seed=seed).task_id for seed in range(12)}
    assert drawn == {"l1/vector_add", "l1/softmax"}
    with pytest.raises(EnvError, match="l1/silu is in the train split, not test"):
        env.reset(task_id="l1/silu")
    with pytest.raises(EnvError, match="serves the test split only"):
        env.reset(split="train")
    with pytest.raises(EnvError, match="split must be one of"):
        Env(split="holdout")
    runner = CliRunner()
    listed = runner.invoke(app, ["list", "--split", "test", "--json"])
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.stdout)
    assert {row["id"] for row in rows} == {"l1/vector_add", "l1/softmax"}
    assert all(row["split"] == row["metadata"]["split"] == "test" for row in rows)
    assert rows[0]["metadata"]["source"] == "shipped" and rows[0]["metadata"]["aten_ops"] >= 1
    bad = runner.invoke(app, ["list", "--split", "holdout"])
    assert bad.exit_code == 2 and "the splits are train, val, test" in bad.output
