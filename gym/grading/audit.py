"""Static audit of a submission's source: the first layer of defence, with precise reasons.

It refuses what an honest Triton kernel never needs: threads and processes,
streams, ctypes/cffi, exec/eval/compile and import tricks, frame walking and
gc, patching of modules, timers or builtins, network/file/subprocess modules,
other compute libraries, torch compute and functional ops, seed fiddling,
environment sniffing, and try/except fallbacks around a kernel launch. It is a
layer, not the barrier: the runtime checks in the worker and the grader must
catch whatever gets past it.
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass
from types import ModuleType

from gym.worker.torch_policy import FORBIDDEN_CUDA_MODULES, HOST_BRIDGES, audit_allowed_calls

# Root modules an honest submission never imports, with the reason.
FORBIDDEN_MODULES: dict[str, str] = {
    **dict.fromkeys(("threading", "_thread", "multiprocessing", "concurrent", "asyncio"), "threads and processes"),
    **dict.fromkeys(("subprocess", "pty", "signal", "resource"), "processes and signals"),
    **dict.fromkeys(("socket", "ssl", "http", "urllib", "requests", "ftplib", "smtplib"), "network access"),
    **dict.fromkeys(("ctypes", "cffi", "mmap"), "raw memory access"),
    **dict.fromkeys(("gc", "inspect", "traceback", "weakref"), "introspection of the grader's objects"),
    **dict.fromkeys(("importlib", "builtins", "imp", "runpy", "pkgutil", "code", "codeop"), "import and code-loading tricks"),
    **dict.fromkeys(("pickle", "marshal", "shelve", "dill", "shutil", "tempfile", "glob", "io", "pathlib", "fileinput"), "file access"),
    **dict.fromkeys(
        ("numpy", "scipy", "cupy", "jax", "jaxlib", "numba", "tensorflow", "pandas", "sklearn", "cuda", "pycuda"), "another compute library doing the work"
    ),
    **dict.fromkeys(("time", "timeit"), "timers"),
    **dict.fromkeys(("platform", "getpass", "socketserver"), "environment sniffing"),
    **dict.fromkeys(("operator", "functools", "itertools", "codecs", "base64", "zlib", "binascii"), "obfuscation helpers"),
    "gym": "the grader's own code",
}

# torch submodules and attributes that have no place in a submission.
FORBIDDEN_TORCH = {
    "nn": "torch.nn (functional ops do the work in torch, not in Triton)",
    "jit": "torch.jit (runs work elsewhere)",
    "compile": "torch.compile",
    "library": "torch.library (custom ops)",
    "ops": "torch.ops (library ops)",
    "utils": "torch.utils (dispatch modes, data loaders)",
    "_C": "torch._C internals",
    "profiler": "the profiler",
    "autograd": "autograd",
    "manual_seed": "seeding (regenerating inputs from a guessed seed)",
    "seed": "seeding",
    "random": "torch.random (seeding)",
    "Generator": "a random generator (regenerating inputs)",
    "backends": "torch.backends settings",
    "multiprocessing": "processes",
    "futures": "asynchronous work",
}

FORBIDDEN_CUDA = {
    "Stream": "a side stream",
    "stream": "a side stream",
    "set_stream": "a side stream",
    "current_stream": "stream juggling",
    "default_stream": "stream juggling",
    "ExternalStream": "a side stream",
    "Event": "CUDA events (timers)",
    "graphs": "CUDA graphs",
    "CUDAGraph": "CUDA graphs",
    "graph": "CUDA graphs",
    **FORBIDDEN_CUDA_MODULES,
}

FORBIDDEN_OS = {
    "environ",
    "getenv",
    "putenv",
    "system",
    "popen",
    "fork",
    "forkpty",
    "kill",
    "killpg",
    "_exit",
    "open",
    "write",
    "read",
    "remove",
    "unlink",
    "rename",
    "replace",
    "listdir",
    "scandir",
    "walk",
    "getpid",
    "getppid",
    "execv",
    "execve",
    "execvp",
    "execl",
    "spawnv",
    "spawnl",
    "posix_spawn",
    "chdir",
    "mkdir",
    "makedirs",
    "setsid",
    "dup2",
    "pipe",
    "symlink",
}
FORBIDDEN_SYS = {
    "modules",
    "_getframe",
    "settrace",
    "setprofile",
    "argv",
    "exit",
    "meta_path",
    "path_hooks",
    "path",
    "stdout",
    "stderr",
    "addaudithook",
    "__stdout__",
}

FORBIDDEN_CALLS = {
    "exec": "exec",
    "eval": "eval",
    "compile": "compile",
    "__import__": "__import__",
    "globals": "globals()",
    "locals": "locals()",
    "vars": "vars()",
    "setattr": "setattr()",
    "delattr": "delattr()",
    "open": "file access",
    "breakpoint": "breakpoint()",
    "input": "input()",
    "memoryview": "raw memory views",
}

# Builtins that are only ever referenced (not called) to obfuscate a call.
INDIRECT_BUILTINS = {"getattr", "hasattr", *FORBIDDEN_CALLS}

# Tensor attributes that hand the data to the host or to another library (compute outside Triton).
FORBIDDEN_DATA_BRIDGES = frozenset(HOST_BRIDGES)

FORBIDDEN_DUNDERS = {
    "__class__",
    "__bases__",
    "__subclasses__",
    "__globals__",
    "__code__",
    "__closure__",
    "__dict__",
    "__builtins__",
    "__loader__",
    "__spec__",
    "__mro__",
    "__getattribute__",
    "__torch_dispatch__",
    "__torch_function__",
    "f_back",
    "f_globals",
    "f_locals",
    "gi_frame",
    "tb_frame",
    "__reduce__",
    "__reduce_ex__",
}


@dataclass(frozen=True)
class AuditFinding:
    # Rule family, e.g. "import", "torch_compute", "launch_fallback".
    rule: str
    # 1-based source line.
    line: int
    message: str


def _reexported_module(path: str) -> str | None:
    """The foreign module a torch/triton attribute path reaches, e.g. "torch.sys" -> "sys".

    torch re-exports sys, os, threading, builtins, ctypes, importlib, inspect
    ... as attributes; reaching them that way is the same as importing them.
    The path is walked over the real (trusted-side) modules only.
    """
    parts = path.split(".")
    if parts[0] not in {"torch", "triton"}:
        return None
    try:
        current: object = importlib.import_module(parts[0])
    except ImportError:
        return None
    for part in parts[1:]:
        current = getattr(current, part, None)
        if not isinstance(current, ModuleType):
            return None
        if not current.__name__.startswith(parts[0]):
            return current.__name__
    return None


def _dotted(node: ast.AST) -> str | None:
    """ "a.b.c" for a Name/Attribute chain, else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return ".".join(reversed(parts))
    return None


def _contains_launch(nodes: list[ast.stmt]) -> bool:
    """A `kernel[grid](...)` call anywhere inside `nodes`."""
    return any(isinstance(node, ast.Call) and isinstance(node.func, ast.Subscript) for statement in nodes for node in ast.walk(statement))


class _Auditor(ast.NodeVisitor):
    def __init__(self, allowed_torch: frozenset[str]) -> None:
        self.allowed_torch = allowed_torch
        self.findings: list[AuditFinding] = []
        # Local name -> full module path, from the imports seen.
        self.aliases: dict[str, str] = {}
        # ids of nodes that are the function of a call.
        self.called: set[int] = set()

    def flag(self, rule: str, node: ast.AST, message: str) -> None:
        self.findings.append(AuditFinding(rule, getattr(node, "lineno", 0), message))

    def _check_module(self, module: str, node: ast.AST) -> None:
        root = module.split(".")[0]
        if root in FORBIDDEN_MODULES:
            self.flag("import", node, f"imports {module}: {FORBIDDEN_MODULES[root]}")
        elif module.startswith("torch."):
            self._check_torch_path(module, node)
        elif module.startswith("triton.runtime.interpreter"):
            self.flag("import", node, f"imports {module}: the grader runs kernels itself")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._check_module(alias.name, node)
            self.aliases[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
        self.generic_visit(node)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            self.flag("import", node, "relative imports are not allowed in a single-file submission")
        self._check_module(module, node)
        for alias in node.names:
            full = f"{module}.{alias.name}" if module else alias.name
            self._check_module(full, node)
            if module == "os" and alias.name in FORBIDDEN_OS:
                self.flag("environment", node, f"imports os.{alias.name}: environment, files or processes")
            if module == "sys" and alias.name in FORBIDDEN_SYS:
                self.flag("sys", node, f"imports sys.{alias.name}: interpreter internals")
            self.aliases[alias.asname or alias.name] = full
        self.generic_visit(node)

    def _resolve(self, node: ast.AST) -> str | None:
        dotted = _dotted(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        base = self.aliases.get(head, head)
        return f"{base}.{rest}" if rest else base

    def _check_torch_path(self, path: str, node: ast.AST) -> None:
        foreign = _reexported_module(path)
        if foreign is not None:
            root = foreign.split(".")[0]
            reason = FORBIDDEN_MODULES.get(root) or {"os": "environment, files or processes", "sys": "interpreter internals"}.get(
                root, "a module outside torch"
            )
            self.flag("import", node, f"reaches {foreign} through {path}: {reason}")
            return
        parts = path.split(".")
        if parts[0] != "torch":
            return
        if len(parts) >= 2 and parts[1] in FORBIDDEN_TORCH:
            self.flag("torch", node, f"uses {path}: {FORBIDDEN_TORCH[parts[1]]}")
        if len(parts) >= 3 and parts[1] == "cuda" and parts[2] in FORBIDDEN_CUDA:
            self.flag("stream", node, f"uses {path}: {FORBIDDEN_CUDA[parts[2]]}")
        if len(parts) >= 3 and parts[1] == "cuda" and parts[2] == "synchronize" and isinstance(node, ast.Assign):
            self.flag("patch", node, f"replaces {path}")

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in INDIRECT_BUILTINS and id(node) not in self.called and node.id not in self.aliases:
            self.flag("dynamic_code", node, f"refers to {node.id} without calling it (an indirect call)")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in FORBIDDEN_DATA_BRIDGES:
            self.flag("host_compute", node, f"uses .{node.attr}: hands tensor data to the host or another library")
        if node.attr in FORBIDDEN_DUNDERS:
            self.flag("introspection", node, f"uses .{node.attr}: frame, class or dispatch internals")
        path = self._resolve(node)
        if path:
            if path.startswith(("torch.", "triton.")):
                self._check_torch_path(path, node)
            elif path.startswith("os.") and path.split(".")[1] in FORBIDDEN_OS:
                self.flag("environment", node, f"uses {path}: environment, files or processes")
            elif path.startswith("sys.") and path.split(".")[1] in FORBIDDEN_SYS:
                self.flag("sys", node, f"uses {path}: interpreter internals")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self.called.add(id(node.func))
        if isinstance(node.func, ast.Name) and node.func.id in FORBIDDEN_CALLS and node.func.id not in self.aliases:
            self.flag("dynamic_code", node, f"calls {node.func.id}: {FORBIDDEN_CALLS[node.func.id]}")
        if isinstance(node.func, ast.Name) and node.func.id in {"getattr", "hasattr"} and len(node.args) >= 2:
            if not isinstance(node.args[1], ast.Constant) or not isinstance(node.args[1].value, str):
                self.flag("dynamic_code", node, f"calls {node.func.id} with a computed name (obfuscated attribute access)")
            else:
                # getattr(obj, "name") is obj.name: audit it as that attribute.
                self.visit_Attribute(ast.copy_location(ast.Attribute(value=node.args[0], attr=node.args[1].value, ctx=ast.Load()), node))
        path = self._resolve(node.func)
        if path and path.startswith("torch.") and path.count(".") == 1 and path.split(".")[1] not in self.allowed_torch:
            name = path.split(".")[1]
            if name not in FORBIDDEN_TORCH:
                self.flag("torch_compute", node, f"calls {path}: a torch compute op (only allocation is allowed)")
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._check_store(target, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_store(node.target, node)
        self.generic_visit(node)

    def _check_store(self, target: ast.AST, node: ast.AST) -> None:
        if isinstance(target, ast.Attribute):
            path = self._resolve(target)
            root = path.split(".")[0] if path else None
            if root in {"torch", "triton", "time", "os", "sys", "builtins", "math"} or (path and path in self.aliases.values()):
                self.flag("patch", node, f"assigns to {path}: monkeypatching a module")

    def visit_Try(self, node: ast.Try) -> None:
        if node.handlers and _contains_launch(node.body):
            self.flag("launch_fallback", node, "a kernel launch inside try/except (a fallback path when it fails)")
        self.generic_visit(node)

    visit_TryStar = visit_Try  # type: ignore[assignment]

    def visit_Global(self, node: ast.Global) -> None:
        self.flag("state", node, f"global {', '.join(node.names)}: state carried across calls (caching)")
        self.generic_visit(node)

    def visit_Nonlocal(self, node: ast.Nonlocal) -> None:
        self.flag("state", node, f"nonlocal {', '.join(node.names)}: state carried across calls (caching)")
        self.generic_visit(node)


def audit_source(source: str, allowed_torch: list[str] | tuple[str, ...] = ()) -> list[AuditFinding]:
    """Findings for `source`; empty when clean. Unparseable source is left to the worker (compile_error).

    `allowed_torch` is the task's own list of further torch calls (the torch policy's `allowed_torch`)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    auditor = _Auditor(audit_allowed_calls(allowed_torch))
    auditor.visit(tree)
    # One finding per rule and line: the outermost (first visited) says it best.
    unique: dict[tuple[str, int], AuditFinding] = {}
    for finding in auditor.findings:
        unique.setdefault((finding.rule, finding.line), finding)
    return sorted(unique.values(), key=lambda finding: (finding.line, finding.rule))
