"""Stable train / val / test splits, shared by near-duplicates, written down per task root.

A task's split comes from a salted sha256 of its **family**: what its reference runs, whatever its
source, shape, variant or name (`family_key`): the aten ops it dispatches, canonical packets in
order of first dispatch joined by "+" (`aten.add` for OpInfo's `add` and `__radd__`, a model's
residual add and KernelBench's elementwise add alike; `aten._softmax` for `softmax`,
`_safe_softmax` and every model softmax; `aten.mm+aten.add+aten.gelu` for a fusion). The
dispatched ops are recorded per task when it is imported (`[kernelbench] dispatched`, see
gym.tasks.metadata.record_dispatch) and measured for a task that has none. A task whose dispatch
is unknown falls back to its name (`family_of`: `kb/l1/19_relu`, `l1/relu` and
`opinfo/nn_functional_relu` are all `relu`). So the same op at other shapes, aliases and OpInfo
variants of one op and the same op in two sources always share a split, and a test task never
has a sibling in train. The hash gives every stratum (source x level) the same expected mix,
`SHARES`, independently of what else is installed or in which order it was imported.

Assignments are written down in `splits.json` in each task root (`record_splits`, which every
`kgym import` runs): a task recorded there keeps its split forever, even if the salt or the
shares change later, and a new task of a family already recorded joins that family's split
(the shipped suite's families count too: an imported op the shipped suite has joins its split).
Two exceptions, both written down in `moved` with their reason:

- **Duplicates move.** When a family's recorded tasks straddle splits (recorded under an older
  family rule, or a task whose re-import dispatches other ops), the family joins the most
  exposed split among them, train before val before test: a task that was trained on makes its
  duplicates in test unfit for evaluation, never the other way round.
- **Every op kind in val and test.** A family recorded for the first time by this call may be
  drawn into val or test instead of its hashed split when that split has no family of its op
  kind yet and the kind has at least `MIN_KIND_FAMILIES` families, from a split that keeps one
  (train first); the families with most tasks go first. Families recorded earlier never move
  for this.

A task not yet recorded gets the hashed split (`hashed_split`), the one recording would give it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tomllib
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

Split = Literal["train", "val", "test"]
SPLITS: tuple[Split, ...] = ("train", "val", "test")
# Expected share of each split, in order; the hash's position in [0, 1) picks one.
SHARES: dict[Split, float] = {"train": 0.8, "val": 0.1, "test": 0.1}
SALT = "kgym-splits-v1"
SPLITS_FILE = "splits.json"
# A kind needs this many families before record_splits draws one into val or test for it (train keeps one).
MIN_KIND_FAMILIES = 3
# The split a family that straddles splits joins: the first of these its tasks are in.
EXPOSURE: tuple[Split, ...] = ("train", "val", "test")

# Prefixes of OpInfo names that do not change the op ("nn.functional.relu" is relu).
_NAMESPACES = ("nn_functional_", "special_", "linalg_", "fft_", "_refs_", "masked_", "sparse_")
# Words a KernelBench problem name adds to its op ("relu_activation", "matrix_multiplication_for_...").
_NOISE = re.compile(r"_(activation|function|operation|op|layer|kernel)$")
# aten packets that compute what another packet does (an alias, a "safe" variant, the swapped
# operands of a subtraction): their tasks are one family.
OP_ALIASES: dict[str, str] = {
    "_safe_softmax": "_softmax",
    "softmax": "_softmax",
    "log_softmax": "_log_softmax",
    "rsub": "sub",
    "subtract": "sub",
    "true_divide": "div",
    "divide": "div",
    "multiply": "mul",
    "absolute": "abs",
    "_unsafe_index": "index",
    "_index_put_impl": "index_put",
    "_unsafe_index_put": "index_put",
    "_unsafe_masked_index": "index",
    "linalg_matrix_exp": "matrix_exp",
    "linalg_cross": "cross",
    "_native_batch_norm_legit": "native_batch_norm",
    "_native_batch_norm_legit_no_training": "native_batch_norm",
    "_native_batch_norm_legit_functional": "native_batch_norm",
    "_batch_norm_with_update": "native_batch_norm",
    "_batch_norm_no_update": "native_batch_norm",
    "_linalg_det": "linalg_det",
    "_linalg_slogdet": "linalg_slogdet",
    "_linalg_solve_ex": "linalg_solve",
    "linalg_solve_ex": "linalg_solve",
    "linalg_inv_ex": "linalg_inv",
    "linalg_cholesky_ex": "cholesky",
    "linalg_cholesky": "cholesky",
    "_linalg_eigh": "linalg_eigh",
    "_linalg_svd": "linalg_svd",
    "_cdist_forward": "cdist",
    "_convolution": "convolution",
    "mkldnn_convolution": "convolution",
    "_slow_conv2d_forward": "convolution",
    "_embedding_bag_forward_only": "_embedding_bag",
    "_scaled_dot_product_flash_attention_for_cpu": "scaled_dot_product_attention",
    "_scaled_dot_product_flash_attention": "scaled_dot_product_attention",
    "_scaled_dot_product_efficient_attention": "scaled_dot_product_attention",
    "_scaled_dot_product_cudnn_attention": "scaled_dot_product_attention",
    "_scaled_dot_product_attention_math": "scaled_dot_product_attention",
}


class SplitFile(BaseModel):
    """A task root's recorded splits (`splits.json`)."""

    salt: str = Field(default=SALT, description="The salt the hashed splits were drawn with when first recorded (for the record).")
    tasks: dict[str, Split] = Field(default_factory=dict, description="Task id -> its split, for every task recorded; changes only as `moved` says.")
    families: dict[str, Split] = Field(default_factory=dict, description="Family -> its split: a new task of a recorded family joins it.")
    task_families: dict[str, str] = Field(
        default_factory=dict,
        description="Task id -> the family it was last recorded under (family_key of its dispatched aten ops; its name's family when they are unknown).",
    )
    task_kinds: dict[str, str] = Field(
        default_factory=dict,
        description="Task id -> its op kind as last recorded (gym.tasks.metadata.op_kind_from_dispatch): what drawing every kind into val and test counts.",
    )
    moved: dict[str, str] = Field(
        default_factory=dict,
        description="Task id -> why its recorded split changed, and from what (a duplicate joining its family's split, see the module docstring).",
    )


def canonical_op(name: str) -> str:
    """The aten packet an op name stands for, as a family member: `aten.add.Tensor`, `aten.add_`,
    `torch.ops.aten.add.Scalar` and `add` are all `aten.add`; aliases (`OP_ALIASES`) as their op."""
    text = name.strip()
    if text.startswith("torch.ops."):
        text = text[len("torch.ops.") :]
    parts = text.split(".")
    packet = parts[1] if parts[0] == "aten" and len(parts) > 1 else parts[0]
    if packet.endswith("_") and not packet.endswith("__"):
        packet = packet[:-1]  # in place: the op its out-of-place twin computes
    packet = OP_ALIASES.get(packet, packet)
    return f"aten.{packet}"


def op_sequence(ops: Iterable[str]) -> list[str]:
    """The canonical packets of `ops` (compute ops, in order of first dispatch), each once."""
    sequence: list[str] = []
    for op in ops:
        canonical = canonical_op(op)
        if canonical not in sequence:
            sequence.append(canonical)
    return sequence


def family_key(ops: Iterable[str]) -> str:
    """The family of a reference that dispatches `ops`: its canonical packets in order of first
    dispatch, each once, joined by "+" (`aten.add`; a fusion `aten.mm+aten.add+aten.gelu`); "" for none."""
    return "+".join(op_sequence(ops))


def is_pattern(family: str) -> bool:
    """Whether a family is a fusion pattern (several aten ops) rather than one op."""
    return "+" in family


def source_of(task_id: str) -> str:
    """Where a task comes from: kernelbench, opinfo, models, or shipped (the gym's own)."""
    first = task_id.split("/", 1)[0]
    return {"kb": "kernelbench", "opinfo": "opinfo", "models": "models"}.get(first, "shipped")


def family_of(task_id: str) -> str:
    """The op a task's *name* says it computes: the family when its dispatched ops are unknown (see the module docstring)."""
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
    """Source and level ("kernelbench/l2", "shipped/l1", "opinfo/l1", "models/l2"; a model's backward
    tasks are "models/backward"): what each split's mix is balanced over."""
    parts = task_id.split("/")
    source = source_of(task_id)
    if source == "models" and len(parts) > 2 and parts[1] == "backward":
        return "models/backward"
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


def split_of(task_id: str, recorded: SplitFile, family: str | None = None) -> Split:
    """A task's split: recorded, else its recorded family's, else hashed. `family` is the task's
    (family_key of its dispatched ops) when known; its name's family otherwise."""
    known = recorded.tasks.get(task_id)
    if known is not None:
        return known
    family = family or family_of(task_id)
    return recorded.families.get(family) or hashed_split(family)


def stored_dispatch(document: Mapping[str, object]) -> list[str]:
    """The dispatched aten ops a task file records (`[kernelbench] dispatched`; a models task's
    `source_path` names its one op); empty when it records none."""
    table = document.get("kernelbench")
    if not isinstance(table, dict):
        return []
    ops = table.get("dispatched")
    if isinstance(ops, list) and ops:
        return [str(op) for op in ops]
    source = str(table.get("source_path", ""))
    if source.startswith("models/aten."):
        return [source[len("models/") :]]
    return []


def _task_document(root: Path, task_id: str) -> dict[str, object] | None:
    try:
        return tomllib.loads((root / task_id / "task.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None


# Measures a task's (family, op kind), e.g. by running its reference once (gym.tasks.metadata.measure_family).
Measure = Callable[[Path, str], "tuple[str, str] | None"]


def task_family_and_kind(root: Path, task_id: str, measure: Measure | None = None) -> tuple[str, str | None]:
    """A task folder's family and op kind: from what its task file records (`[kernelbench]
    dispatched` and `op_kind`), else `measure`d, else its name's family and no kind."""
    document = _task_document(root, task_id)
    if document is not None:
        table = document.get("kernelbench")
        explicit = isinstance(table, dict) and bool(table.get("dispatched"))
        ops = stored_dispatch(document)
        if explicit and isinstance(table, dict):
            kind = table.get("op_kind")
            return family_key(ops), str(kind) if kind else None
        if measure is not None:
            try:
                measured = measure(root, task_id)
            except Exception:  # noqa: BLE001 - a reference that fails to run keeps its name's family; check-tasks names it
                measured = None
            if measured is not None:
                return measured
        if ops:
            return family_key(ops), None
    return family_of(task_id), None


def record_splits(
    root: Path,
    task_ids: Iterable[str],
    families: Mapping[str, str] | None = None,
    kinds: Mapping[str, str] | None = None,
    measure: Measure | None = None,
    shared: SplitFile | None = None,
) -> SplitFile:
    """Write down the split of every task in `task_ids` not yet recorded in `root` (see the module
    docstring for the two ways a recorded split moves).

    A task's family and op kind are `families` / `kinds` when given, else as `task_family_and_kind`
    finds them (`measure`, e.g. gym.tasks.metadata.measure_family, which runs the reference once, as
    `kgym import` passes it; None, the default, never runs anything: a task whose file records no
    dispatched ops keeps its name's family); a recorded task's are remembered in the file. `shared`: splits
    recorded elsewhere whose families this root's join (by default the shipped suite's, when
    `root` is not the shipped suite)."""
    recorded = read_splits(root)
    original = recorded.model_copy(deep=True)
    new_ids = sorted(set(task_ids))
    outside = _shipped_splits(root) if shared is None else shared
    for task_id in sorted(set(new_ids) | set(recorded.tasks)):
        fresh = task_id in new_ids
        family = (families or {}).get(task_id) if fresh else recorded.task_families.get(task_id)
        kind = (kinds or {}).get(task_id) if fresh else recorded.task_kinds.get(task_id)
        if family is None or (kind is None and (fresh or task_id not in recorded.task_kinds)):
            found_family, found_kind = task_family_and_kind(root, task_id, measure)
            family = family or found_family
            kind = kind or found_kind
        recorded.task_families[task_id] = family
        if kind:
            recorded.task_kinds[task_id] = kind
    # Duplicates move: a family whose recorded tasks straddle splits joins the most exposed of them.
    members: dict[str, list[str]] = {}
    for task_id in sorted(recorded.tasks):
        members.setdefault(recorded.task_families[task_id], []).append(task_id)
    for family, tasks in members.items():
        present = {recorded.tasks[task_id] for task_id in tasks}
        elsewhere = outside.families.get(family)
        if elsewhere is not None:
            present.add(elsewhere)
        target = next(split for split in EXPOSURE if split in present)
        anchor = next((task_id for task_id in tasks if recorded.tasks[task_id] == target), "the shipped suite")
        for task_id in tasks:
            if recorded.tasks[task_id] != target:
                recorded.moved[task_id] = f"{recorded.tasks[task_id]} -> {target}: its family {family} is in {target} too ({anchor})"
                recorded.tasks[task_id] = target
        recorded.families[family] = target
    # New tasks: their family's recorded split (here, then in `shared`), else the hashed one.
    fresh_families: dict[str, list[str]] = {}
    known_families = set(recorded.families) | set(outside.families)
    for task_id in new_ids:
        if task_id in recorded.tasks:
            continue
        family = recorded.task_families[task_id]
        if family not in known_families:
            fresh_families.setdefault(family, []).append(task_id)
        known = recorded.families.get(family) or outside.families.get(family) or hashed_split(family)
        recorded.tasks[task_id] = known
        recorded.families.setdefault(family, known)
    _cover_kinds(recorded, fresh_families)
    if recorded != original or not (root / SPLITS_FILE).is_file():
        write_splits(root, recorded)
    return recorded


def _cover_rank(family: str, size: int) -> tuple[int, bytes]:
    """Families with most tasks first (one degenerate task does not leave a kind out), then by salted hash."""
    return (-size, hashlib.sha256(f"{SALT}\0cover\0{family}".encode()).digest())


def _cover_kinds(recorded: SplitFile, fresh: Mapping[str, list[str]]) -> None:
    """Draw families recorded for the first time into val or test where that split has no family of their kind yet."""
    kinds_of: dict[str, Counter[str]] = {}
    for task_id in recorded.tasks:
        kind = recorded.task_kinds.get(task_id)
        if kind:
            kinds_of.setdefault(recorded.task_families[task_id], Counter())[kind] += 1
    family_kind = {family: counts.most_common(1)[0][0] for family, counts in sorted(kinds_of.items())}
    for kind in sorted(set(family_kind.values())):
        of_kind = [family for family, known in family_kind.items() if known == kind]
        if len(of_kind) < MIN_KIND_FAMILIES:
            continue
        for target in ("test", "val"):
            if any(recorded.families.get(family) == target for family in of_kind):
                continue
            # From a split that keeps one of the kind (train first), a family recorded by this call.
            donors = [split for split in SPLITS if split != target]
            candidates = []
            for donor in sorted(donors, key=lambda split: -sum(1 for family in of_kind if recorded.families.get(family) == split)):
                held = [family for family in of_kind if recorded.families.get(family) == donor]
                candidates = [family for family in held if family in fresh] if len(held) >= 2 else []
                if candidates:
                    break
            if not candidates:
                continue
            chosen = min(candidates, key=lambda family: _cover_rank(family, len(fresh[family])))
            recorded.families[chosen] = target
            for task_id in fresh[chosen]:
                recorded.tasks[task_id] = target


def write_splits(root: Path, recorded: SplitFile) -> None:
    """Write `recorded` as the root's splits.json (atomically)."""
    root.mkdir(parents=True, exist_ok=True)
    temporary = root / f".{SPLITS_FILE}.{os.getpid()}.tmp"
    temporary.write_text(json.dumps(recorded.model_dump(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(temporary, root / SPLITS_FILE)


def _shipped_splits(root: Path) -> SplitFile:
    """The shipped suite's recorded splits, when `root` is another root (empty otherwise, or when unreadable)."""
    from gym.tasks.paths import tasks_dir

    shipped = tasks_dir()
    try:
        if shipped.resolve() == root.resolve():
            return SplitFile()
        return read_splits(shipped)
    except (OSError, ValueError):
        return SplitFile()


def leaked_families(assignments: Mapping[str, tuple[str, str]]) -> dict[str, dict[str, list[str]]]:
    """Families whose tasks are in more than one split: family -> split -> task ids, from
    `assignments` (task id -> (family, split))."""
    by_family: dict[str, dict[str, list[str]]] = {}
    for task_id, (family, split) in sorted(assignments.items()):
        by_family.setdefault(family, {}).setdefault(split, []).append(task_id)
    order: dict[str, int] = {split: index for index, split in enumerate(SPLITS)}
    return {family: dict(sorted(splits.items(), key=lambda item: order.get(item[0], len(order)))) for family, splits in by_family.items() if len(splits) > 1}


def split_counts(task_ids: Iterable[str], recorded: dict[str, Split]) -> dict[str, dict[str, int]]:
    """Tasks per stratum and split ({"opinfo/l1": {"train": 340, "val": 41, "test": 45}, ...})."""
    counts: dict[str, dict[str, int]] = {}
    for task_id in task_ids:
        row = counts.setdefault(stratum_of(task_id), dict.fromkeys(SPLITS, 0))
        row[recorded[task_id]] += 1
    return counts
