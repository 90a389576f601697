"""How diverse a task distribution is, beside how large: the headline figures of an import.

`diversity_report(root)` (or `diversity_of(tasks)`) counts the tasks by source, split, op kind
and degenerate reason, and, more tellingly, the **distinct aten ops** (families of one op:
`aten.add` however many sources and shapes carry it) and **distinct fusion patterns** (families
of several ops, gym.tasks.splits.family_key) by source and split, and names every **leaked
family**: one whose tasks are in more than one split (zero is the target; a test asserts it over
a fixture, `scripts/bench_task_import.py` over the full import), and every family the shipped
suite records in another split than a task of the root (a root recorded before the shipped
suite's families were keyed by dispatch can hold some: its tasks never move for another root). Families and kinds are read from
what each reference dispatches (gym.tasks.metadata): as recorded at import, measured otherwise
(`measure=False` falls back to names and stored kinds instead of running references).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, Field

from gym.tasks.metadata import OP_KINDS, task_dispatch, task_family, task_kind
from gym.tasks.model import Task
from gym.tasks.splits import SPLITS, SplitFile, canonical_op, is_pattern, leaked_families, read_splits, source_of

# Distinct ops and patterns over the whole distribution the issue-38 distribution aims for.
DIVERSITY_TARGET = 450
_REASON = re.compile(r"(?:^|; )([a-z][a-z0-9_]*):")


def _table(counts: Counter[tuple[str, str]]) -> dict[str, dict[str, int]]:
    rows: dict[str, dict[str, int]] = {}
    for (row, split), count in sorted(counts.items()):
        rows.setdefault(row, dict.fromkeys(SPLITS, 0))[split] = count
    return rows


class DiversityReport(BaseModel):
    """A task distribution's size and diversity (see the module docstring)."""

    tasks: int = Field(description="Tasks that pass check-tasks (the ones served), over every source and split.")
    degenerate: int = Field(description="Tasks check-tasks marked degenerate (never served).")
    by_source: dict[str, dict[str, int]] = Field(description="Valid tasks: source -> split -> count.")
    by_kind: dict[str, dict[str, int]] = Field(description="Valid tasks: op kind (gym.tasks.metadata.OP_KINDS) -> split -> count.")
    by_reason: dict[str, int] = Field(description="Degenerate tasks: check-tasks reason -> count (a task with several reasons counts under each).")
    ops: dict[str, dict[str, int]] = Field(
        description="Distinct aten ops (one-op families) of the valid tasks: source -> split -> count; source 'all' over every source."
    )
    patterns: dict[str, dict[str, int]] = Field(
        description="Distinct fusion patterns (several-op families) of the valid tasks: source -> split -> count; source 'all' over every source."
    )
    distinct_ops: int = Field(description="Distinct one-op families over the valid tasks.")
    distinct_patterns: int = Field(description="Distinct fusion patterns over the valid tasks.")
    aten_ops_touched: int = Field(description="Distinct aten ops any valid task's reference dispatches, inside patterns too.")
    leaked: dict[str, dict[str, list[str]]] = Field(
        description="Families whose tasks (degenerate ones included) are in more than one split: family -> split -> task ids. Empty is the target."
    )
    kinds_missing: dict[str, list[str]] = Field(description="Split -> op kinds some valid task has but none of that split's valid tasks.")
    leaked_with_shipped: dict[str, dict[str, list[str]]] = Field(
        default_factory=dict,
        description="Families the shipped suite records in another split than some of these tasks: family -> split -> task ids (shipped ones named 'shipped: <split>').",
    )

    @property
    def distinct(self) -> int:
        return self.distinct_ops + self.distinct_patterns

    def lines(self) -> list[str]:
        """The report as plain text lines (for a CLI summary or a benchmark's output)."""
        width = max([len(name) for name in [*self.by_source, *self.by_kind, *self.by_reason, "source"]])

        def table(title: str, rows: dict[str, dict[str, int]]) -> list[str]:
            out = [f"{title:{width}}  " + "  ".join(f"{split:>6}" for split in SPLITS) + "   total"]
            for name, row in rows.items():
                out.append(f"{name:{width}}  " + "  ".join(f"{row.get(split, 0):6d}" for split in SPLITS) + f"   {sum(row.values()):5d}")
            return out

        out = [
            f"{self.tasks} valid tasks ({self.degenerate} degenerate); {self.distinct} distinct ops and patterns "
            f"({self.distinct_ops} ops, {self.distinct_patterns} fusion patterns; target {DIVERSITY_TARGET}); "
            f"{self.aten_ops_touched} aten ops touched; {len(self.leaked)} leaked families",
            "",
            *table("source", self.by_source),
            "",
            *table("op kind", self.by_kind),
            "",
            *table("ops", self.ops),
            "",
            *table("patterns", self.patterns),
        ]
        if self.by_reason:
            out += ["", "degenerate, by reason: " + ", ".join(f"{reason} {count}" for reason, count in self.by_reason.items())]
        for split, kinds in self.kinds_missing.items():
            out.append(f"{split} has no {', '.join(kinds)} task")
        for family, splits in {**self.leaked, **self.leaked_with_shipped}.items():
            listed = [f"{split} {', '.join(ids[:4])}{' ...' if len(ids) > 4 else ''}".strip() for split, ids in splits.items()]
            out.append(f"leaked {family}: " + "; ".join(listed))
        return out


def degenerate_reasons(task: Task) -> list[str]:
    """The reasons named in a task's `degenerate` verdict ("constant_output: ...; nan_output: ..." -> both)."""
    text = task.spec.degenerate
    if text is None:
        return []
    found = list(dict.fromkeys(_REASON.findall(text)))
    return found or ["degenerate"]


def diversity_of(tasks: Iterable[Task], measure: bool = True, shipped: SplitFile | None = None) -> DiversityReport:
    """The report over `tasks` (degenerate ones included: they count as such; see the module
    docstring); `shipped`: the shipped suite's recorded splits, whose families these tasks should join."""
    tasks = list(tasks)
    valid = [task for task in tasks if task.spec.degenerate is None]
    family = {task.id: task_family(task, measure) for task in tasks}
    kind = {task.id: task_kind(task, measure) for task in valid}
    by_source: Counter[tuple[str, str]] = Counter((source_of(task.id), str(task.split)) for task in valid)
    by_kind: Counter[tuple[str, str]] = Counter((kind[task.id], str(task.split)) for task in valid)
    reasons: Counter[str] = Counter(reason for task in tasks for reason in degenerate_reasons(task))
    distinct: dict[tuple[bool, str, str], set[str]] = {}
    touched: set[str] = set()
    for task in valid:
        name = family[task.id]
        fused = is_pattern(name)
        for source in (source_of(task.id), "all"):
            distinct.setdefault((fused, source, str(task.split)), set()).add(name)
            distinct.setdefault((fused, source, "all"), set()).add(name)
        touched.update(canonical_op(op) for op in task_dispatch(task, measure))
    ops: Counter[tuple[str, str]] = Counter()
    patterns: Counter[tuple[str, str]] = Counter()
    for (fused, source, split), names in distinct.items():
        if split != "all":
            (patterns if fused else ops)[(source, split)] = len(names)
    present = {kind[task.id] for task in valid}
    missing = {
        split: [name for name in [*OP_KINDS, "unknown"] if name in present and not any(kind[task.id] == name for task in valid if task.split == split)]
        for split in SPLITS
    }
    return DiversityReport(
        tasks=len(valid),
        degenerate=len(tasks) - len(valid),
        by_source=_table(by_source),
        by_kind={name: row for name, row in sorted(_table(by_kind).items(), key=lambda item: [*OP_KINDS, "unknown", item[0]].index(item[0]))},
        by_reason=dict(reasons.most_common()),
        ops=_table(ops),
        patterns=_table(patterns),
        distinct_ops=len(distinct.get((False, "all", "all"), set())),
        distinct_patterns=len(distinct.get((True, "all", "all"), set())),
        aten_ops_touched=len(touched),
        leaked=leaked_families({task.id: (family[task.id], str(task.split)) for task in tasks}),
        kinds_missing={split: kinds for split, kinds in missing.items() if kinds},
        leaked_with_shipped=_against_shipped(tasks, family, shipped or SplitFile()),
    )


def _against_shipped(tasks: list[Task], family: dict[str, str], shipped: SplitFile) -> dict[str, dict[str, list[str]]]:
    found: dict[str, dict[str, list[str]]] = {}
    for task in tasks:
        if source_of(task.id) == "shipped":
            continue
        where = shipped.families.get(family[task.id])
        if where is not None and where != task.split:
            found.setdefault(family[task.id], {f"shipped: {where}": []}).setdefault(str(task.split), []).append(task.id)
    return {name: {split: sorted(ids) for split, ids in splits.items()} for name, splits in sorted(found.items())}


def diversity_report(root: Path, measure: bool = True) -> DiversityReport:
    """The report over every task of the task root `root` (degenerate ones included), with the splits its splits.json records."""
    from gym.tasks.loader import discover
    from gym.tasks.paths import tasks_dir

    shipped = read_splits(tasks_dir()) if tasks_dir().resolve() != root.resolve() else SplitFile()
    return diversity_of(discover(root, include_degenerate=True).tasks, measure, shipped)
