"""Launched modules: jit functions a call launched that live outside the submission's file.

A Helion kernel (gym.worker.helion_dsl) is lowered, in the submission's process, to a
Triton module Helion writes into its compile cache and imports; its `@triton.jit`
function is what launches. The witness replays only vetted source, so such a module
travels as a program, never as evidence:

1. In a Helion submission's process: when Helion's lowering (`BoundKernel.compile_config`)
   returns, the module it just wrote and loaded is registered (`register`) and its text
   read then, before any more of the submission's code runs (a rewrite after that
   changes nothing). A launch of one of its jit functions is taped (`launch_name`, from
   the launch hook) under the name `kgym_launched_<key>.<qualname>`, `<key>` the first 16
   hex digits of the sha256 of the module file's real path. Only Helion's own modules are
   registered: a jit function made at run time any other way (a module the submission
   wrote and loaded itself) is named as always and cannot be replayed, as in a Triton
   submission. After the last call (`write_sources`) each text is written as
   `launched/<key>.py` in the output folder with the worker's exclusive writer (a file
   planted there first is a forgery) and hashed into its report, at most MAX_MODULES
   files of MAX_BYTES each.
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

# key -> the text of a module Helion generated, read the moment its lowering returned (b"" when it could
# not be read or was too large: its launches then cannot be replayed).
_SOURCES: dict[str, bytes] = {}
# A registered module's file name (as its code objects carry it) -> the launch name prefix of its functions.
_PREFIXES: dict[str, str] = {}


def module_key(filename: str) -> str:
    """The key of the module file `filename` (16 hex digits of the sha256 of its real path)."""
    return hashlib.sha256(os.path.realpath(filename).encode()).hexdigest()[:16]


def register(filename: str) -> str | None:
    """Record a module Helion's lowering just wrote and loaded (gym.worker.helion_dsl calls this as
    `compile_config` returns, before any more of the submission's code runs): its text is read now;
    launches of its jit functions are then taped by its key. The key; None past MAX_MODULES."""
    key = module_key(filename)
    if key not in _SOURCES:
        if len(_SOURCES) >= MAX_MODULES:
            return None
        _SOURCES[key] = _snapshot(filename)
    _PREFIXES[filename] = f"{MODULE_PREFIX}{key}."
    return key


def launch_name(function: Any, qualname: str) -> str:
    """The name a launch of jit function `function` (its Python function's `qualname`) is taped under:
    prefixed by its module's key when the module is one Helion generated (`register`)."""
    code = getattr(getattr(function, "fn", None), "__code__", None)
    if code is None or not _PREFIXES:
        return qualname
    return _PREFIXES.get(code.co_filename, "") + qualname


def _snapshot(filename: str) -> bytes:
    """The file's text now (b"" when unreadable or over MAX_BYTES)."""
    try:
        with open(filename, "rb") as handle:
            data = handle.read(MAX_BYTES + 1)
    except OSError:
        return b""
    return data if len(data) <= MAX_BYTES else b""


def write_sources(out_dir: Path, write: Any) -> list[str]:
    """Each registered module's text, as read when Helion loaded it, as `launched/<key>.py` in `out_dir`,
    through `write(path, bytes)`, the worker's exclusive writer: one file per key whatever the text
    (empty when it could not be read), so a file planted under that name is a forgery; the keys."""
    written: list[str] = []
    for key, data in sorted(_SOURCES.items()):
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
