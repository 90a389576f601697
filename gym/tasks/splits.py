"""Stable train / val / test splits, shared by near-duplicates, written down per task root.

A task's split comes from a salted sha256 of its **family**: the op it computes,
whatever its source, shape or variant (`family_of`: `kb/l1/19_relu`, `l1/relu` and
`opinfo/nn_functional_relu` are all `relu`; OpInfo variants `max__binary` and
`max__reduction_with_dim` are `max`; a model task is its aten op). So the same op at
other shapes, OpInfo variants of one op and the same KernelBench op in two problems
always share a split, and a test task never has a sibling in train. The hash gives
every stratum (source x level) the same expected mix, `SHARES`, independently of
what else is installed or in which order it was imported: two users who import the
same tasks get the same splits.

Assignments are written down in `splits.json` in each task root (`record_splits`,
which every `kgym import` runs): a task recorded there keeps its split forever, even
if the salt, the family rules or the shares change later, and a new task of a family
already recorded joins that family's split. A task not yet recorded gets the hashed
split (`hashed_split`), the one recording would give it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

Split = Literal["train", "val", "test"]
SPLITS: tuple[Split, ...] = ("train", "val", "test")
# Expected share of each split, in order; the hash's position in [0, 1) picks one.
SHARES: dict[Split, float] = {"train": 0.8, "val": 0.1, "test": 0.1}
SALT = "kgym-splits-v1"
SPLITS_FILE = "splits.json"

# Prefixes of OpInfo names that do not change the op ("nn.functional.relu" is relu).
_NAMESPACES = ("nn_functional_", "special_", "linalg_", "fft_", "_refs_", "masked_", "sparse_")
# Words a KernelBench problem name adds to its op ("relu_activation", "matrix_multiplication_for_...").
_NOISE = re.compile(r"_(activation|function|operation|op|layer|kernel)$")


class SplitFile(BaseModel):
    """A task root's recorded splits (`splits.json`)."""

    salt: str = Field(default=SALT, description="The salt the hashed splits were drawn with when first recorded (for the record).")
    tasks: dict[str, Split] = Field(default_factory=dict, description="Task id -> its split, for every task recorded; never changes once written.")
    families: dict[str, Split] = Field(default_factory=dict, description="Family -> its split: a new task of a recorded family joins it.")


def source_of(task_id: str) -> str:
    """Where a task comes from: kernelbench, opinfo, models, or shipped (the gym's own)."""
    first = task_id.split("/", 1)[0]
    return {"kb": "kernelbench", "opinfo": "opinfo", "models": "models"}.get(first, "shipped")


def family_of(task_id: str) -> str:
    """The op a task computes, as a family key shared by its near-duplicates (see the module docstring)."""
    parts = task_id.split("/")
    source = source_of(task_id)
    name = parts[-1]
    if source == "opinfo":
        name = name.split("__", 1)[0]
        for prefix in _NAMESPACES:
            if name.startswith(prefix):
                name = name[len(prefix) :]
                break
    elif source == "kernelbench":
        name = re.sub(r"^\d+_", "", name)
        name = _NOISE.sub("", name)
    elif source == "models":
        # models/<model>/<op>-<n> (ids keep letters, digits and underscores: <op>_<n>)
        name = re.sub(r"_\d+$", "", name)
    return name.strip("_") or task_id


def stratum_of(task_id: str) -> str:
    """Source and level ("kernelbench/l2", "shipped/l1", "opinfo/l1"): what each split's mix is balanced over."""
    parts = task_id.split("/")
    source = source_of(task_id)
    level = next((part for part in parts[:-1] if re.fullmatch(r"l\d", part)), "l1" if source in ("opinfo", "models") else parts[0])
    return f"{source}/{level}"


def hashed_split(family: str, salt: str = SALT) -> Split:
    """The split a family's salted hash falls in (uniform, order-independent)."""
    digest = hashlib.sha256(f"{salt}\0{family}".encode()).digest()
    position = int.from_bytes(digest[:8], "big") / 2**64
    total = 0.0
    for split in SPLITS:
        total += SHARES[split]
        if position < total:
            return split
    return SPLITS[-1]


def read_splits(root: Path) -> SplitFile:
    """The root's recorded splits (empty when it has none; a broken file is refused, never overwritten)."""
    path = root / SPLITS_FILE
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return SplitFile()
    return SplitFile.model_validate_json(text)


def split_of(task_id: str, recorded: SplitFile) -> Split:
    """A task's split: recorded, else its recorded family's, else hashed."""
    known = recorded.tasks.get(task_id)
    if known is not None:
        return known
    family = family_of(task_id)
    return recorded.families.get(family) or hashed_split(family)


def record_splits(root: Path, task_ids: Iterable[str]) -> SplitFile:
    """Write down the split of every task in `task_ids` not yet recorded in `root` (existing entries never change)."""
    recorded = read_splits(root)
    changed = False
    for task_id in sorted(task_ids):
        if task_id in recorded.tasks:
            continue
        split = split_of(task_id, recorded)
        recorded.tasks[task_id] = split
        recorded.families.setdefault(family_of(task_id), split)
        changed = True
    if changed:
        root.mkdir(parents=True, exist_ok=True)
        temporary = root / f".{SPLITS_FILE}.{os.getpid()}.tmp"
        temporary.write_text(json.dumps(recorded.model_dump(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(temporary, root / SPLITS_FILE)
    return recorded


def split_counts(task_ids: Iterable[str], recorded: dict[str, Split]) -> dict[str, dict[str, int]]:
    """Tasks per stratum and split ({"opinfo/l1": {"train": 340, "val": 41, "test": 45}, ...})."""
    counts: dict[str, dict[str, int]] = {}
    for task_id in task_ids:
        row = counts.setdefault(stratum_of(task_id), dict.fromkeys(SPLITS, 0))
        row[recorded[task_id]] += 1
    return counts
