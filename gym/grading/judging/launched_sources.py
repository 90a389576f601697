"""Launched modules' sources, vetted on the trusted side before the witness may load them.

The submission's process sends back the text of every module a launch of its came from
when that module is not the submission's file (Helion's generated Triton:
gym.worker.launched_modules). Once that process is gone, `stage` reads each such file
from the job's output folder and puts it through the kernels-file rules
(gym.grading.intake.kernel_source), exactly as a submission's own Triton is: what the
rules keep is written into the replay folder for the witness; a file they refuse is
staged not at all, and its refusal is the grade's `compile_error` (the witness could not
have replayed its launches). A file the worker did not write, with those bytes (its report
hashes every file it writes), is a forgery: never staged, and the grade is rejected.
Nothing of these files runs on the trusted side.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from gym.errors import KernelSourceError
from gym.grading.intake.kernel_source import extract_kernels
from gym.worker.launched_modules import FILE_NAME, LAUNCHED_DIR, MAX_BYTES, MAX_MODULES


@dataclass
class StagedSources:
    """What `stage` did with the launched modules' sources of one job."""

    # Keys of the modules staged for the witness.
    staged: list[str] = field(default_factory=list)
    # Why each refused module was refused ("<key>: <rule>").
    refused: list[str] = field(default_factory=list)
    # Files of `launched/` the worker did not write as they are (not in its report's hashes, or other bytes).
    forged: list[str] = field(default_factory=list)


def stage(out_dir: Path, replay_folder: Path, written: dict[str, str] | None = None) -> StagedSources:
    """Vet each `launched/<key>.py` of `out_dir` and write what the rules keep into `replay_folder/launched/`.
    `written`: the sha256 of every file the worker wrote, by name (its report's `files`); a file not
    there with those bytes is `forged`, never staged."""
    result = StagedSources()
    source_dir = out_dir / LAUNCHED_DIR
    if not source_dir.is_dir() or source_dir.is_symlink():
        return result
    entries = sorted(source_dir.iterdir())[:MAX_MODULES]
    for path in entries:
        if not FILE_NAME.match(path.name) or path.is_symlink() or not path.is_file() or path.stat().st_size > MAX_BYTES:
            continue
        key = path.name[:-3]
        data = path.read_bytes()
        if written is not None and written.get(path.name) != hashlib.sha256(data).hexdigest():
            result.forged.append(key)
            continue
        try:
            kernels = extract_kernels(data.decode("utf-8", errors="replace"))
        except KernelSourceError as error:
            result.refused.append(f"{key}: {error}")
            continue
        except SyntaxError as error:
            result.refused.append(f"{key}: not Python ({error.msg}, line {error.lineno})")
            continue
        target = replay_folder / LAUNCHED_DIR
        target.mkdir(exist_ok=True)
        (target / path.name).write_text(kernels.text)
        result.staged.append(key)
    return result
