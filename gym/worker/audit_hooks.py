"""Run-time witnesses for what the static audit no longer refuses by spelling.

The worker installs a Python audit hook (PEP 578, `sys.addaudithook`: once
installed it cannot be removed) before the submission is imported. For the
audited operations an honest kernel file never needs — imports of thread,
process, network, raw-memory and code-loading modules; opening files;
subprocesses, exec-family calls, fork and kill; sockets; ctypes and mmap;
thread starts; string exec/compile; frame and gc introspection; trace and
audit hooks — it finds who asked, and refuses (raises PermissionError, and
records the refusal for the report, so catching the error changes nothing)
when the submission did, however it spelled the call (`importlib`,
`getattr(torch, name)`, an eval'd annotation).

Who asked: walking out from the operation, frames of the standard library,
installed packages other than torch and Triton (numpy, packaging, ...),
frozen import machinery, generated code (`<string>`, ...) and the worker's own
package are transparent; the first other frame decides: torch or Triton
(Triton running ptxas, torch lazily importing ctypes) is allowed, the
submission (or any other file) is refused. Files read by the import
machinery are judged by the import itself, and source read for display
(linecache, for warnings and tracebacks) is not refused.
For string exec/compile and `sys._getframe`, only the immediate caller counts
(the standard library's dataclasses, namedtuple, typing and warnings use them
on the submission's behalf). The same attribution guards the torch entry
points whose work escapes the op trace (`torch.compile`, TorchScript, custom
op libraries, CUDA graph replays), wrapped by `install_api_tripwires`.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

# Modules whose import the submission may not cause (root name, or a full dotted name), with the rule.
REFUSED_IMPORTS: dict[str, str] = {
    **dict.fromkeys(("multiprocessing", "concurrent", "asyncio", "subprocess", "pty", "signal", "resource"), "processes"),
    **dict.fromkeys(("socket", "ssl", "http", "urllib", "requests", "ftplib", "smtplib", "socketserver"), "network"),
    **dict.fromkeys(("ctypes", "cffi", "mmap"), "raw_memory"),
    **dict.fromkeys(("gc", "inspect"), "introspection"),
    **dict.fromkeys(("runpy", "code", "codeop", "timeit", "imp"), "dynamic_code"),
    **dict.fromkeys(("pickle", "marshal", "shelve", "dill", "shutil", "tempfile", "glob", "fileinput"), "file_io"),
    **dict.fromkeys(("cupy", "jax", "jaxlib", "numba", "tensorflow", "pycuda", "torch.utils.cpp_extension"), "foreign_compute"),
    "gym": "grader_import",
}

# Audited events judged by the first deciding frame, by rule.
_EVENTS: dict[str, str] = {
    "open": "file_io",
    "subprocess.Popen": "processes",
    "os.system": "processes",
    "os.exec": "processes",
    "os.posix_spawn": "processes",
    "os.spawn": "processes",
    "os.fork": "processes",
    "os.forkpty": "processes",
    "os.kill": "processes",
    "os.killpg": "processes",
    "pty.spawn": "processes",
    "mmap.__new__": "raw_memory",
    "_thread.start_new_thread": "threads",
    "gc.get_objects": "introspection",
    "gc.get_referrers": "introspection",
    "gc.get_referents": "introspection",
    "sys._current_frames": "introspection",
    "sys.settrace": "introspection",
    "sys.setprofile": "introspection",
    "sys.addaudithook": "introspection",
}
_PREFIXES: dict[str, str] = {"socket.": "network", "ctypes.": "raw_memory"}
# Judged by the immediate caller only.
_CALLER_EVENTS: dict[str, str] = {"exec": "dynamic_code", "compile": "dynamic_code", "sys._getframe": "introspection"}
# Rules whose events are judged by the whole stack (`_culprit_anywhere`): a trusted frame does not
# clear the submission further out (torch or Triton called with a callable the submission chose,
# `triton.testing.do_bench(functools.partial(os.system, ...))`, would otherwise act for it), except
# across a Triton launch, inside which Triton compiles, caches and runs ptxas on its own.
STRICT_RULES = frozenset({"processes", "threads", "network", "raw_memory", "code_objects"})
# Making or swapping code objects: how a frame's file name could be forged (attribution by file
# name holds only while every code object comes from a real file or from compiling one).
_CODE_EVENTS: dict[str, str] = {"code.__new__": "code_objects", "function.__new__": "code_objects"}

_STATE = threading.local()
_LOCK = threading.Lock()
# "rule: what (file:line)" for each refusal, in order; the worker copies them into its report.
REFUSED: list[str] = []
MAX_REFUSED = 64


class _Setup:
    submission: str | None = None
    transparent: tuple[str, ...] = ()
    trusted: tuple[str, ...] = ()
    # The code object of the worker's launch wrapper (gym.worker.op_trace._in_launch): a frame
    # running it marks the start of a Triton launch on the stack.
    launch_boundary: object = None
    # Where the interpreter's own libraries live (the import path, the submission's folder left
    # out): files there may be read by anyone (`_library_read`).
    library: tuple[str, ...] = ()
    library_files: tuple[str, ...] = ()


def set_launch_boundary(code: object) -> None:
    """Name the code object whose frames mark a Triton launch (see STRICT_RULES)."""
    _Setup.launch_boundary = code


def _folder(path: str) -> str:
    return os.path.join(os.path.realpath(path), "")


# Compilers whose frames act for themselves: torch, Triton and Helion (which lowers a Helion kernel
# to Triton, importing and caching as a compiler does; the kernel's own body it traces is the submission's).
TRUSTED_PACKAGES = ("torch", "triton", "helion")


def _roots() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(transparent folders: the standard library, every installed package and this package;
    trusted: TRUSTED_PACKAGES only). numpy and the rest are transparent, not trusted: a
    `numpy.memmap` the submission opens is the submission's."""
    transparent = {_folder(sysconfig.get_paths()[key]) for key in ("stdlib", "platstdlib", "purelib", "platlib")}
    transparent.update(_folder(path) for path in sys.path if _holds_installed_packages(path))
    transparent.add(_folder(os.path.dirname(__file__)))
    trusted = set()
    for name in TRUSTED_PACKAGES:
        location = _package_file(name)
        if isinstance(location, str):
            trusted.add(_folder(os.path.dirname(location)))
    return tuple(sorted(transparent)), tuple(sorted(trusted))


def _package_file(name: str) -> str | None:
    """The `__init__.py` of an installed package, found without importing it (Helion is imported
    only by a submission that uses it)."""
    module = sys.modules.get(name)
    if module is not None:
        location = getattr(module, "__file__", None)
        return location if isinstance(location, str) else None
    try:
        import importlib.util

        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    return spec.origin if spec is not None and isinstance(spec.origin, str) else None


def _holds_installed_packages(path: str) -> bool:
    """A sys.path folder of installed packages: a site-packages folder, or any folder holding
    a distribution's metadata (a `pip install --target` folder on PYTHONPATH, as the GPU check
    uses). Never the folder that holds the submission."""
    if not path or not os.path.isdir(path):
        return False
    if _Setup.submission is not None and _Setup.submission.startswith(_folder(path)):
        return False
    if "site-packages" in path or "dist-packages" in path:
        return True
    try:
        return any(name.endswith((".dist-info", ".egg-info")) for name in os.listdir(path))
    except OSError:
        return False


_KINDS: dict[str, str] = {}


def _kind(filename: str) -> str:
    """ "transparent", "trusted" or "culprit" for a frame's file (cached by file name)."""
    known = _KINDS.get(filename)
    if known is None:
        known = _KINDS[filename] = _classify(filename)
    return known


def cache_consistent() -> int:
    """1 when every cached verdict on a file is what the rules give it now (an edited cache, the
    submission's file marked trusted, is tampering), else 0."""
    return int(all(_classify(filename) == kind for filename, kind in list(_KINDS.items())))


def _classify(filename: str) -> str:
    if filename.startswith("<"):
        return "transparent"
    path = os.path.realpath(filename)
    if _Setup.submission is not None and path == _Setup.submission:
        return "culprit"
    # torch and Triton first: they live inside site-packages, itself inside the standard library's folder.
    if path.startswith(_Setup.trusted):
        return "trusted"
    if path.startswith(_Setup.transparent):
        return "transparent"
    return "culprit"


# Readers of Python source for display (warnings, tracebacks): what they open is not the submission's doing.
_SOURCE_READERS = ("linecache.py", "tokenize.py")


def _culprit(frame: FrameType | None, import_machinery_exempt: bool) -> FrameType | None:
    """The submission's frame that asked for the operation, or None when trusted code did."""
    while frame is not None:
        filename = frame.f_code.co_filename
        if import_machinery_exempt and (filename.startswith("<frozen importlib") or filename.endswith(_SOURCE_READERS)):
            return None
        kind = _kind(filename)
        if kind == "trusted":
            return None
        if kind == "culprit":
            return frame
        frame = frame.f_back
    return None


def _ensure_roots() -> None:
    """The folders that classify frames, found now when the hook was never installed."""
    if not _Setup.transparent:
        _Setup.transparent, _Setup.trusted = _roots()


def is_submission_code(filename: str) -> bool:
    """Whether code compiled from `filename` is the submission's (or any file's that is neither a library
    nor this package's), whether or not the hook is installed."""
    _ensure_roots()
    return _kind(filename) == "culprit"


def submission_asked(frame: FrameType | None) -> bool:
    """Whether the submission asked for what `frame` does: walking out from it, the first frame that is
    neither transparent (standard library, this package, other installed packages) nor trusted (torch,
    Triton, Helion) is the submission's. Works whether or not the hook is installed."""
    _ensure_roots()
    return _culprit(frame, import_machinery_exempt=False) is not None


def _culprit_anywhere(frame: FrameType | None) -> FrameType | None:
    """The submission's frame furthest in on the stack that is not inside a Triton launch it made."""
    while frame is not None:
        if frame.f_code is _Setup.launch_boundary:
            return None
        if _kind(frame.f_code.co_filename) == "culprit":
            return frame
        frame = frame.f_back
    return None


def _library_read(args: tuple[Any, ...]) -> bool:
    """An `open` of a file inside the interpreter's own libraries (the standard library, installed
    packages), for reading only: harmless whoever asked (importlib.metadata reading a version)."""
    if len(args) < 3 or not isinstance(args[0], (str, bytes, os.PathLike)):
        return False
    mode, flags = args[1], args[2]
    if isinstance(mode, str) and any(letter in mode for letter in "wax+"):
        return False
    if isinstance(flags, int) and flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC):
        return False
    try:
        path = os.path.realpath(os.fsdecode(args[0]))
    except (TypeError, ValueError):
        return False
    return _in_library(path)


def _in_library(path: str) -> bool:
    if _Setup.submission is not None and path == _Setup.submission:
        return False
    return path.startswith(_Setup.trusted + _Setup.transparent + _Setup.library) or path in _Setup.library_files


def _library_roots() -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(folders, files) of the import path (zip archives are files), without any entry that holds
    the submission (its own folder is the job's input folder)."""
    folders, files = [], []
    for entry in sys.path:
        if not entry:
            continue
        path = os.path.realpath(entry)
        if _Setup.submission is not None and _Setup.submission.startswith(os.path.join(path, "")):
            continue
        if os.path.isdir(path):
            folders.append(os.path.join(path, ""))
        else:
            files.append(path)
    return tuple(folders), tuple(files)


def _where(frame: FrameType) -> str:
    return f"{os.path.basename(frame.f_code.co_filename)}:{frame.f_lineno}"


def refuse(rule: str, what: str, frame: FrameType) -> None:
    """Record the refusal and raise PermissionError into the submission."""
    text = f"{rule}: {what} ({_where(frame)})"
    with _LOCK:
        if len(REFUSED) < MAX_REFUSED:
            REFUSED.append(text)
    raise PermissionError(f"kernel gym refused this: {text}")


def refused_import(name: str) -> str | None:
    """The rule a module name breaks (by its full name or its root), or None."""
    return REFUSED_IMPORTS.get(name) or REFUSED_IMPORTS.get(name.split(".")[0])


def _rule_for(event: str, args: tuple[Any, ...]) -> tuple[str, str] | None:
    if event == "import":
        name = str(args[0]) if args else ""
        rule = refused_import(name)
        return (rule, f"import {name}") if rule else None
    rule = _EVENTS.get(event)
    if rule is None:
        rule = next((value for prefix, value in _PREFIXES.items() if event.startswith(prefix)), None)
    if rule is None:
        return None
    detail = f" {args[0]!r}" if event == "open" and args else ""
    return rule, f"{event}{detail}"


def _spoofed_filename(event: str, args: tuple[Any, ...]) -> bool:
    """`compile(source, <a library file>, ...)`: code named after torch, Triton or the standard library."""
    if event != "compile" or len(args) < 2 or not isinstance(args[1], (str, bytes)):
        return False
    name = os.fsdecode(args[1])
    return not name.startswith("<") and _in_library(os.path.realpath(name))


def _hook(event: str, args: tuple[Any, ...]) -> None:
    if getattr(_STATE, "busy", False):
        return
    caller_rule = _CALLER_EVENTS.get(event)
    code_rule = _CODE_EVENTS.get(event) or ("code_objects" if event == "object.__setattr__" and len(args) > 1 and args[1] == "__code__" else None)
    judged = None if caller_rule is not None or code_rule is not None else _rule_for(event, args)
    if caller_rule is None and judged is None and code_rule is None:
        return
    if event == "open" and _library_read(args):
        return
    _STATE.busy = True
    try:
        frame = sys._getframe(1)
        culprit: FrameType | None = None
        if code_rule is not None:
            culprit, judged = _culprit_anywhere(frame), (code_rule, event if event != "object.__setattr__" else "assigning a function's __code__")
        elif caller_rule is not None:
            if _kind(frame.f_code.co_filename) == "culprit":
                culprit, judged = frame, (caller_rule, event)
            elif _spoofed_filename(event, args):
                culprit, judged = _culprit_anywhere(frame), ("code_objects", f"compiling code under the name of {os.path.basename(os.fsdecode(args[1]))}")
        elif judged is not None and judged[0] in STRICT_RULES and event != "import":
            # (An import is judged by who imports: torch or Helion importing ctypes or concurrent for
            # themselves give the submission no effect; using those modules is audited as above.)
            culprit = _culprit_anywhere(frame)
        else:
            culprit = _culprit(frame, import_machinery_exempt=event == "open")
    finally:
        _STATE.busy = False
    if culprit is not None and judged is not None:
        refuse(judged[0], judged[1], culprit)


_INSTALLED: list[bool] = []


def install(submission: str) -> None:
    """Install the hook for the submission at `submission` (once per process)."""
    _Setup.submission = os.path.realpath(submission)
    _Setup.transparent, _Setup.trusted = _roots()
    _Setup.library, _Setup.library_files = _library_roots()
    _KINDS.clear()
    if not _INSTALLED:
        sys.addaudithook(_hook)
        _INSTALLED.append(True)


def guarded(rule: str, what: str, original: Callable[..., Any]) -> Callable[..., Any]:
    """`original`, refused when the submission calls it (directly or through the standard library)."""

    def entry(*args: Any, **kwargs: Any) -> Any:
        culprit = _culprit(sys._getframe(1), import_machinery_exempt=False)
        if culprit is not None:
            refuse(rule, what, culprit)
        return original(*args, **kwargs)

    entry._kgym_guarded = True  # type: ignore[attr-defined]
    return entry


def _import_guard(original: Callable[..., Any]) -> Callable[..., Any]:
    """`builtins.__import__` / `importlib.import_module` refusing what the submission may not import.

    The audit event "import" fires only when a module is first loaded; these see every
    import, including one of a module already in sys.modules."""

    def guarded_import(name: str, *args: Any, **kwargs: Any) -> Any:
        fromlist = args[2] if len(args) >= 3 else kwargs.get("fromlist") or ()
        names = [name, *(f"{name}.{item}" for item in (fromlist or ()) if isinstance(item, str))]
        broken = next(((rule, module) for module in names if (rule := refused_import(module))), None)
        if broken is not None:
            culprit = _culprit(sys._getframe(1), import_machinery_exempt=False)
            if culprit is not None:
                refuse(broken[0], f"import {broken[1]}", culprit)
        return original(name, *args, **kwargs)

    guarded_import._kgym_guarded = True  # type: ignore[attr-defined]
    return guarded_import


def install_import_guard() -> dict[str, int]:
    """Guard `builtins.__import__` and `importlib.import_module`; their identities for the fingerprint."""
    import builtins
    import importlib

    for owner, name in ((builtins, "__import__"), (importlib, "import_module")):
        if not getattr(getattr(owner, name), "_kgym_guarded", False):
            setattr(owner, name, _import_guard(getattr(owner, name)))
    return import_guard_identities()


def import_guard_identities() -> dict[str, int]:
    import builtins
    import importlib

    return {"builtins.__import__": id(builtins.__import__), "importlib.import_module": id(importlib.import_module)}


# torch entry points whose work escapes the op trace and launch evidence.
GUARDED_TORCH: tuple[tuple[str, str, str], ...] = (
    ("torch", "compile", "torch.compile (it writes the kernel for you)"),
    ("torch.jit", "script", "TorchScript"),
    ("torch.jit", "trace", "TorchScript"),
    ("torch.library", "custom_op", "a custom op library"),
    ("torch.library", "Library", "a custom op library"),
    ("torch.cuda", "CUDAGraph", "CUDA graphs"),
    ("torch.cuda.graphs", "CUDAGraph", "CUDA graphs"),
)


def install_api_tripwires() -> dict[str, int]:
    """Wrap GUARDED_TORCH; returns the identities of the wrappers (for the worker's fingerprint)."""
    import importlib

    identities: dict[str, int] = {}
    for module_name, name, what in GUARDED_TORCH:
        try:
            module = importlib.import_module(module_name)
        except ImportError:
            continue
        original = getattr(module, name, None)
        if original is None or getattr(original, "_kgym_guarded", False):
            continue
        setattr(module, name, guarded("torch_api", what, original))
        identities[f"{module_name}.{name}"] = id(getattr(module, name))
    return identities


def take_refused() -> list[str]:
    """The refusals so far (they are never cleared: the report lists them all)."""
    with _LOCK:
        return list(REFUSED)
