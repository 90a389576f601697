"""Launched modules: jit functions a call launched that live outside the submission's file.

A Helion kernel (gym.worker.helion_dsl) is lowered, in the submission's process, to a
Triton module Helion writes into its compile cache and imports; its `@triton.jit`
function is what launches. The witness replays only vetted source, so such a module
travels as a program, never as evidence:

1. In the submission's process (`launch_name`, from the launch hook): a launch of a
   jit function whose code's file is not the submission is taped under the name
   `kgym_launched_<key>.<qualname>`, `<key>` the first 16 hex digits of the sha256 of
   that file's real path. After the last call (`write_sources`, outside any of the
   submission's frames) each such file's text is written as `launched/<key>.py` in the
   output folder, at most MAX_MODULES files of MAX_BYTES each.
2. On the trusted side, once that process is gone (gym.grading.judging.launched_sources):
   each file goes through the kernels-file rules (gym.grading.intake.kernel_source),
   exactly as a submission's own Triton does, and what they keep is staged in the
   replay folder as `launched/<key>.py`.
3. In the witness (`attach`): each staged module is loaded and bound on the kernels
   module as `kgym_launched_<key>`, so `tape_replay.kernel_named` finds a launch by the
   name the tape gave it and, as for any launch, by its code identity. A tape naming a
   module that was not staged, or a function whose code differs from the staged one
   (a generated source that is not the one that ran), cannot be replayed.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

# Folder (in the output folder, then in the replay folder) that holds the modules' sources.
LAUNCHED_DIR = "launched"
# Prefix of the attribute a staged module is bound to on the kernels module (and of the tape's launch names).
MODULE_PREFIX = "kgym_launched_"
# A staged module's file name.
FILE_NAME = re.compile(r"\A[0-9a-f]{16}\.py\Z")
# Installed modules of library jit helpers a launched module may import (Helion's and torch Inductor's,
# pinned with the gym; the kernels-file rules keep imports of them, gym.grading.intake.kernel_source).
LIBRARY_KERNEL_MODULES = ("helion.runtime.triton.helpers", "torch._inductor.runtime.triton_helpers")
# How many modules one job may send back, and how large each may be (bytes).
MAX_MODULES = 64
MAX_BYTES = 1 << 20

# The submission's real path (set by the worker before the submission is imported).
_SUBMISSION: list[str | None] = [None]
# key -> the file a launched function's code came from (submission's process only).
_FILES: dict[str, str] = {}
# A code object's file name (as compiled) -> its launch name prefix ("" for the submission's own file).
# By file name, not by code object: equal code objects from two files compare equal.
_PREFIXES: dict[str, str] = {}


def set_submission(path: Path | str) -> None:
    """Name the submission's file: functions from any other file are launched modules'."""
    _SUBMISSION[0] = os.path.realpath(path)


def module_key(filename: str) -> str:
    """The key of the module file `filename` (16 hex digits of the sha256 of its real path)."""
    return hashlib.sha256(os.path.realpath(filename).encode()).hexdigest()[:16]


def launch_name(function: Any, qualname: str) -> str:
    """The name a launch of jit function `function` (its Python function's `qualname`) is taped under."""
    code = getattr(getattr(function, "fn", None), "__code__", None)
    if code is None or _SUBMISSION[0] is None:
        return qualname
    filename = code.co_filename
    prefix = _PREFIXES.get(filename)
    if prefix is None:
        if filename.startswith("<") or os.path.realpath(filename) == _SUBMISSION[0]:
            prefix = ""
        else:
            key = module_key(filename)
            if key not in _FILES and len(_FILES) < MAX_MODULES:
                _FILES[key] = filename
            prefix = f"{MODULE_PREFIX}{key}."
        _PREFIXES[filename] = prefix
    return prefix + qualname


def write_sources(out_dir: Path, write: Any) -> list[str]:
    """Each launched module's text as `launched/<key>.py` in `out_dir` (through `write(path, bytes)`,
    the worker's exclusive writer); the keys written. A file that cannot be read is left out (its
    launches then cannot be replayed, and the grade says so)."""
    written: list[str] = []
    for key, filename in sorted(_FILES.items()):
        try:
            with open(filename, "rb") as handle:
                data = handle.read(MAX_BYTES + 1)
        except OSError:
            continue
        if len(data) > MAX_BYTES:
            continue
        folder = out_dir / LAUNCHED_DIR
        folder.mkdir(exist_ok=True)
        write(folder / f"{key}.py", data)
        written.append(key)
    return written


@contextlib.contextmanager
def _own_library_modules() -> Iterator[None]:
    """Imports of LIBRARY_KERNEL_MODULES made inside load them afresh (their jit functions then follow
    Triton's interpret setting as it stands, as the kernels file's do: the compile check loads the
    kernels compiled, the replay interpreted); sys.modules and the parent packages are restored after."""
    saved = {name: sys.modules.pop(name, None) for name in LIBRARY_KERNEL_MODULES}
    parents = {name: _parent_attribute(name) for name in LIBRARY_KERNEL_MODULES}
    try:
        yield
    finally:
        for name, module in saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
            package, _, leaf = name.rpartition(".")
            owner = sys.modules.get(package)
            if owner is not None and parents[name] is not None:
                setattr(owner, leaf, parents[name])


def _parent_attribute(name: str) -> Any:
    package, _, leaf = name.rpartition(".")
    return getattr(sys.modules.get(package), leaf, None)


def attach(kernels: ModuleType, folder: Path, module_name: str) -> list[str]:
    """Load each staged module of `folder` (the replay folder's `launched/`) and bind it on `kernels`
    as `kgym_launched_<key>`; the keys attached. Loaded with Triton's interpret setting as it stands."""
    attached: list[str] = []
    if not folder.is_dir():
        return attached
    for path in sorted(folder.iterdir()):
        if not FILE_NAME.match(path.name) or path.is_symlink() or not path.is_file():
            continue
        key = path.name[:-3]
        spec = importlib.util.spec_from_file_location(f"{module_name}_{MODULE_PREFIX}{key}", path)
        if spec is None or spec.loader is None:
            continue
        module = importlib.util.module_from_spec(spec)
        with _own_library_modules():
            spec.loader.exec_module(module)
        setattr(kernels, MODULE_PREFIX + key, module)
        attached.append(key)
    return attached
