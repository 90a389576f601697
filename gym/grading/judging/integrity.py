"""Integrity rules applied to what the worker reports: each broken rule is a
`Violation` (a flag for the grade and a sentence for the agent) that makes the
grade `rejected`, whatever the values."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from gym.worker.protocol import CallRecord, WorkerReport
from gym.worker.torch_policy import TRIPWIRES, forbidden


@dataclass(frozen=True)
class Violation:
    # Short machine-readable flag, e.g. "torch_compute:aten.mm".
    flag: str
    # What happened, for the agent.
    message: str


def op_violations(record: CallRecord, allowed_extra: Iterable[str] = ()) -> list[Violation]:
    """Forbidden torch compute and tripwires in a call's trace: what ran counts even when the call
    then raised (a tripwire stops the call at once, and the evidence is what rejects it)."""
    found: list[Violation] = []
    for op in forbidden(record.torch_ops, allowed_extra):
        if op in TRIPWIRES:
            found.append(Violation(f"tripwire:{op.removeprefix('kgym.')}", f"during the call {TRIPWIRES[op]}"))
            continue
        found.append(
            Violation(
                f"torch_compute:{op}",
                f"torch ran {op} during the call: the result must come from your Triton kernels (torch is for allocation, views and dtype plumbing only)",
            )
        )
    return found


def call_violations(record: CallRecord, allowed_extra: Iterable[str] = ()) -> list[Violation]:
    """Rules every successful call must keep."""
    found = op_violations(record, allowed_extra)
    if not record.launches:
        found.append(Violation("no_triton_launch", "no Triton kernel was launched during the call"))
    for name in record.inputs_mutated:
        found.append(Violation(f"input_mutated:{name}", f"the kernel modified its input {name!r}; inputs are read-only"))
    non_tensors = sorted({o.python_type for o in record.outputs if not o.exact_tensor})
    if non_tensors or (record.container not in {"tensor", "tuple", "list"}):
        what = ", ".join(non_tensors) or str(record.container)
        found.append(Violation("non_tensor_output", f"returned {what} where a plain torch.Tensor is required"))
    if record.new_threads:
        found.append(Violation("background_thread", f"threads still running after the call returned: {', '.join(record.new_threads)}"))
    return found


def report_violations(report: WorkerReport, allowed_extra: Iterable[str] = ()) -> list[Violation]:
    """Rules about the submission as a whole: import-time work, late writes, forged records."""
    found: list[Violation] = []
    for refusal in report.refused:
        rule = refusal.split(":", 1)[0].strip() or "unknown"
        found.append(Violation(f"audit_hook:{rule}", f"refused at run time: {refusal}"))
    for op in forbidden(report.import_ops, allowed_extra):
        found.append(Violation(f"torch_compute_at_import:{op}", f"torch ran {op} while the submission was imported"))
    if report.import_launches:
        found.append(Violation("launch_at_import", "Triton kernels were launched while the submission was imported"))
    if report.changed_after_return:
        found.append(
            Violation(
                "output_changed_after_return",
                f"{len(report.changed_after_return)} call(s) returned tensors that changed after the call returned "
                "(work left running on another stream or thread?)",
            )
        )
    if report.forged:
        found.append(Violation("result_channel_forgery", f"the record {report.forged} existed before the worker wrote it"))
    if report.import_threads:
        found.append(Violation("background_thread", f"threads started at import and left running: {', '.join(report.import_threads)}"))
    for op in forbidden(report.stray_ops, allowed_extra):
        found.append(Violation(f"torch_compute_outside_call:{op}", f"a submission thread ran {op} while no call was in progress"))
    if report.warmup is not None:
        rules = call_violations if report.warmup.ok else op_violations
        for violation in rules(report.warmup, allowed_extra):
            found.append(Violation(violation.flag, f"warm-up: {violation.message}"))
    if report.tampered:
        shown = ", ".join(report.tampered[:5]) + (" ..." if len(report.tampered) > 5 else "")
        found.append(Violation("grader_tampering", f"the worker's own code was patched: {shown}"))
    return found


def forged_files(out_dir: Path, report: WorkerReport, names: Iterable[str]) -> list[Violation]:
    """Records and outputs whose bytes are not what the worker wrote (per the hashes in its report)."""
    altered = []
    for name in sorted(set(names)):
        path = out_dir / name
        if not path.is_file() or path.is_symlink():
            continue
        if hashlib.sha256(path.read_bytes()).hexdigest() != report.files.get(name):
            altered.append(name)
    if not altered:
        return []
    return [Violation("result_channel_forgery", f"files not written as the worker wrote them: {', '.join(altered[:5])}")]


def unexpected_files(out_dir: Path, expected: Iterable[str]) -> list[Violation]:
    """Files in the output folder that the worker did not announce."""
    extra = sorted({entry.name for entry in out_dir.iterdir()} - set(expected))
    if not extra:
        return []
    shown = ", ".join(extra[:5]) + (" ..." if len(extra) > 5 else "")
    return [Violation("result_channel_forgery", f"unexpected files in the output folder: {shown}")]
