"""Static audit of a submission's source: the first layer of defence, with precise reasons.

Principle: **it refuses only what has no honest use in a kernel file**, each
refusal naming its rule and line:

- `dynamic_code`: string exec/eval/compile and `__import__` (and a bare
  reference to them, an indirect call), unless the name is the file's own;
- `import`: threads and processes, signals, network, file I/O, raw memory
  (ctypes/cffi/mmap), frame and gc introspection, code loaders, GPU compute
  libraries whose work no op trace can see, the grader itself, relative imports;
- `processes` / `file_io` / `sys`: the same reached as `os.*` or `sys.*`
  functions, or `open(...)`;
- `introspection`: frame, code, globals and class-hierarchy internals
  (`__globals__`, `__subclasses__`, `f_back`, ...), computed `getattr` on
  `sys`, `os` or `builtins` (write the attribute out instead);
- `patch`: assigning to (or `setattr` on) another module's attributes, which
  covers patching timers and the grader's hooks;
- `seeding`: torch's seeding and generators;
- `torch`: the torch parts whose work escapes the runtime evidence
  (TorchScript, torch.compile, custom op libraries, dispatch-mode utilities,
  `torch._C`, the profiler, CUDA graphs, jiterator/nccl/comm) and side streams
  (a launch on a stream of its own escapes the timer's events; on a GPU the
  launch hook flags one however it was made).

Everything else (torch compute calls, host reads of tensor data, caches,
`torch.nn` and `torch.autograd.Function` wrappers, `functools`/`itertools`/
`operator`, `getattr(torch, device.type)`, `importlib` version gates) is
judged at run time by the worker's evidence: the op trace, launch evidence,
the tripwires, the audit hooks (`gym.worker.audit_hooks`, which refuse the
imports, file opens, sockets, subprocesses and ctypes loads the submission
itself causes, however it spelled them) and the value checks. The audit is a
layer, not the barrier.
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass
from types import ModuleType

from gym.worker.torch_policy import FORBIDDEN_CUDA_MODULES

# Root modules an honest kernel file never imports, with the reason.
FORBIDDEN_MODULES: dict[str, str] = {
    **dict.fromkeys(("threading", "_thread", "multiprocessing", "concurrent", "asyncio"), "threads and processes"),
    **dict.fromkeys(("subprocess", "pty", "signal", "resource"), "processes and signals"),
    **dict.fromkeys(("socket", "ssl", "http", "urllib", "requests", "ftplib", "smtplib", "socketserver"), "network access"),
    **dict.fromkeys(("ctypes", "cffi", "mmap"), "raw memory access"),
    **dict.fromkeys(("gc", "inspect", "traceback"), "introspection of the grader's objects and frames"),
    **dict.fromkeys(("builtins", "imp", "runpy", "code", "codeop", "timeit"), "code loaders (string exec in disguise)"),
    **dict.fromkeys(("pickle", "marshal", "shelve", "dill", "shutil", "tempfile", "glob", "io", "pathlib", "fileinput"), "file access"),
    **dict.fromkeys(("cupy", "jax", "jaxlib", "numba", "tensorflow", "cuda", "pycuda"), "a GPU compute library doing the work where no op trace sees it"),
    "gym": "the grader's own code",
}

# torch submodules and attributes whose work escapes the runtime evidence, or seeding.
FORBIDDEN_TORCH = {
    "jit": ("torch", "torch.jit (TorchScript runs outside the worker's Python-level evidence)"),
    "compile": ("torch", "torch.compile (it writes the kernel for you)"),
    "library": ("torch", "torch.library (register no custom op: call your Triton kernel directly)"),
    "ops": ("torch", "torch.ops (library ops behind a decoy)"),
    "utils": ("torch", "torch.utils (dispatch-mode utilities, C++ extensions)"),
    "_C": ("torch", "torch._C internals"),
    "profiler": ("torch", "the profiler"),
    "multiprocessing": ("torch", "processes"),
    "futures": ("torch", "asynchronous work"),
    "manual_seed": ("seeding", "seeding (regenerating inputs from a guessed seed)"),
    "seed": ("seeding", "seeding"),
    "random": ("seeding", "torch.random (seeding)"),
    "Generator": ("seeding", "a random generator (regenerating inputs)"),
}

FORBIDDEN_CUDA = {
    # A kernel launched on a stream of its own escapes the timer's events (and on CPU there is no
    # stream to catch it on at run time): a graded kernel file has no use for one.
    "Stream": "a side stream (the timer's events are on the current stream)",
    "stream": "a side stream (the timer's events are on the current stream)",
    "set_stream": "a side stream (the timer's events are on the current stream)",
    "ExternalStream": "a side stream (the timer's events are on the current stream)",
    "graphs": "CUDA graphs (a replay launches no kernel the worker can see)",
    "CUDAGraph": "CUDA graphs (a replay launches no kernel the worker can see)",
    "graph": "CUDA graphs (a replay launches no kernel the worker can see)",
    **FORBIDDEN_CUDA_MODULES,
}

# os functions: processes and signals, or file access.
OS_PROCESSES = {
    "system", "popen", "fork", "forkpty", "kill", "killpg", "_exit", "execv", "execve", "execvp", "execvpe", "execl",
    "execle", "execlp", "spawnv", "spawnve", "spawnl", "spawnle", "posix_spawn", "posix_spawnp", "setsid", "abort",
}  # fmt: skip
OS_FILES = {
    "open", "write", "read", "remove", "unlink", "rename", "replace", "listdir", "scandir", "walk", "chdir", "mkdir",
    "makedirs", "rmdir", "removedirs", "symlink", "link", "dup", "dup2", "pipe", "truncate", "chmod", "chown", "fdopen",
}  # fmt: skip
FORBIDDEN_SYS = {
    "modules": "interpreter internals (every loaded module, the grader's included)",
    "_getframe": "frame introspection",
    "_current_frames": "frame introspection",
    "settrace": "tracing hooks",
    "setprofile": "profiling hooks",
    "meta_path": "import hooks",
    "path_hooks": "import hooks",
    "addaudithook": "audit hooks",
    "exit": "ending the worker",
    "stdout": "the worker's output channels",
    "stderr": "the worker's output channels",
    "__stdout__": "the worker's output channels",
    "__stderr__": "the worker's output channels",
}

# Builtins that run code from strings, or import by name.
DYNAMIC_CODE = {"exec": "string exec", "eval": "string eval", "compile": "compiling code from a string", "__import__": "__import__"}

FORBIDDEN_DUNDERS = {
    "__subclasses__",
    "__bases__",
    "__base__",
    "__globals__",
    "__code__",
    "__closure__",
    "__builtins__",
    "__loader__",
    "__spec__",
    "__getattribute__",
    "__torch_dispatch__",
    "__torch_function__",
    "__reduce__",
    "__reduce_ex__",
    "f_back",
    "f_globals",
    "f_locals",
    "f_code",
    "gi_frame",
    "cr_frame",
    "ag_frame",
    "tb_frame",
    "tb_next",
}

# Module roots whose attributes a submission must not assign (patching).
PATCHABLE_ROOTS = {"torch", "triton", "time", "os", "sys", "builtins", "math", "numpy", "functools", "operator", "itertools", "importlib"}


@dataclass(frozen=True)
class AuditFinding:
    # Rule family, e.g. "import", "dynamic_code", "patch".
    rule: str
    # 1-based source line.
    line: int
    message: str


# Packages whose attribute paths are walked for re-exported modules (Helion's modules re-export sys, os,
# gc, inspect, subprocess, ctypes and torch itself, e.g. `helion._compiler.host_function.sys`).
REEXPORTING_ROOTS = ("torch", "triton", "helion")


def _reexported_module(path: str) -> str | None:
    """The foreign path a torch/triton/helion attribute path reaches, e.g. "torch.os.system" -> "os.system".

    torch re-exports sys, os, threading, builtins, ctypes, importlib, inspect
    ... as attributes; reaching them that way is the same as importing them.
    The path is walked over the real (trusted-side) modules only.
    """
    parts = path.split(".")
    if parts[0] not in REEXPORTING_ROOTS:
        return None
    try:
        current: object = importlib.import_module(parts[0])
    except ImportError:
        return None
    for index, part in enumerate(parts[1:], start=1):
        current = getattr(current, part, None)
        if not isinstance(current, ModuleType):
            return None
        if not current.__name__.startswith(parts[0]):
            return ".".join([current.__name__, *parts[index + 1 :]])
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


def _bound_names(tree: ast.AST) -> set[str]:
    """Every name the file binds itself: parameters, assignments, loop and with targets,
    function and class names, imports. A builtin's name bound here is the file's own."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((alias.asname or alias.name).split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ExceptHandler) and node.name:
            bound.add(node.name)
    return bound


class _Auditor(ast.NodeVisitor):
    def __init__(self, bound: set[str]) -> None:
        self.bound = bound
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
        elif module.startswith(tuple(f"{root}." for root in REEXPORTING_ROOTS)):
            self._check_torch_path(module, node)

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
            self._check_os_sys(full, node)
            self.aliases[alias.asname or alias.name] = full
        self.generic_visit(node)

    def _resolve(self, node: ast.AST) -> str | None:
        dotted = _dotted(node)
        if dotted is None:
            return None
        head, _, rest = dotted.partition(".")
        base = self.aliases.get(head, head if head not in self.bound else "")
        if not base:
            return None
        return f"{base}.{rest}" if rest else base

    def _check_os_sys(self, path: str, node: ast.AST) -> None:
        parts = path.split(".")
        if len(parts) < 2:
            return
        if parts[0] == "os" and parts[1] in OS_PROCESSES:
            self.flag("processes", node, f"uses {path}: processes and signals")
        elif parts[0] == "os" and parts[1] in OS_FILES:
            self.flag("file_io", node, f"uses {path}: file access")
        elif parts[0] == "sys" and parts[1] in FORBIDDEN_SYS:
            self.flag("sys", node, f"uses {path}: {FORBIDDEN_SYS[parts[1]]}")

    def _check_torch_path(self, path: str, node: ast.AST) -> None:
        foreign = _reexported_module(path)
        if foreign is not None:
            root = foreign.split(".")[0]
            if root in FORBIDDEN_MODULES:
                self.flag("import", node, f"reaches {foreign} through {path}: {FORBIDDEN_MODULES[root]}")
            elif root in REEXPORTING_ROOTS and root != path.split(".")[0]:
                # torch reached through Helion (`helion.x.torch.utils`): judged as torch.
                self._check_torch_path(foreign, node)
            else:
                self._check_os_sys(foreign, node)
            return
        parts = path.split(".")
        if parts[0] == "triton" and path.startswith("triton.runtime.interpreter"):
            self.flag("import", node, f"uses {path}: the grader runs kernels itself")
        if parts[0] != "torch":
            return
        if len(parts) >= 2 and parts[1] in FORBIDDEN_TORCH:
            rule, reason = FORBIDDEN_TORCH[parts[1]]
            self.flag(rule, node, f"uses {path}: {reason}")
        if len(parts) >= 3 and parts[1] == "cuda" and parts[2] in FORBIDDEN_CUDA:
            self.flag("torch", node, f"uses {path}: {FORBIDDEN_CUDA[parts[2]]}")

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in DYNAMIC_CODE and node.id not in self.bound and id(node) not in self.called:
            self.flag("dynamic_code", node, f"refers to {node.id} without calling it (an indirect {DYNAMIC_CODE[node.id]})")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in FORBIDDEN_DUNDERS:
            self.flag("introspection", node, f"uses .{node.attr}: frame, code, globals or class-hierarchy internals")
        path = self._resolve(node)
        if path:
            if path.startswith(tuple(f"{root}." for root in REEXPORTING_ROOTS)):
                self._check_torch_path(path, node)
            else:
                self._check_os_sys(path, node)
                if path.endswith(".__dict__") and path.split(".")[0] in PATCHABLE_ROOTS:
                    self.flag("patch", node, f"uses {path}: a module's namespace (patching it)")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        self.called.add(id(node.func))
        if isinstance(node.func, ast.Name) and node.func.id not in self.bound:
            name = node.func.id
            if name in DYNAMIC_CODE:
                self.flag("dynamic_code", node, f"calls {name}: {DYNAMIC_CODE[name]}")
            elif name == "open":
                self.flag("file_io", node, "calls open: file access")
            elif name in {"getattr", "hasattr", "setattr", "delattr"} and node.args:
                self._check_attribute_call(name, node)
        self.generic_visit(node)

    def _check_attribute_call(self, name: str, node: ast.Call) -> None:
        target = self._resolve(node.args[0])
        root = target.split(".")[0] if target else None
        attribute = node.args[1] if len(node.args) >= 2 else None
        constant = attribute.value if isinstance(attribute, ast.Constant) and isinstance(attribute.value, str) else None
        if name in {"setattr", "delattr"}:
            if root in PATCHABLE_ROOTS or (target is not None and target in self.aliases.values()):
                self.flag("patch", node, f"calls {name} on {target}: monkeypatching a module")
            return
        if constant is not None:
            # getattr(obj, "name") is obj.name: audit it as that attribute.
            self.visit_Attribute(ast.copy_location(ast.Attribute(value=node.args[0], attr=constant, ctx=ast.Load()), node))
        elif root in {"sys", "os", "builtins"} or (isinstance(node.args[0], ast.Name) and node.args[0].id == "__builtins__"):
            self.flag(
                "introspection",
                node,
                f"calls {name} on {target or '__builtins__'} with a computed name: write the attribute out (e.g. {root or 'sys'}.version)",
            )

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._check_store(target, node)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._check_store(node.target, node)
        self.generic_visit(node)

    def _check_store(self, target: ast.AST, node: ast.AST) -> None:
        if isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._check_store(element, node)
            return
        if isinstance(target, ast.Subscript):
            target = target.value
            if not (isinstance(target, ast.Attribute) and target.attr == "__dict__"):
                return
        if isinstance(target, ast.Attribute):
            path = self._resolve(target)
            root = path.split(".")[0] if path else None
            if root in PATCHABLE_ROOTS or (path and path.rsplit(".", 1)[0] in self.aliases.values() and path.rsplit(".", 1)[0] != path):
                self.flag("patch", node, f"assigns to {path}: monkeypatching a module")


def audit_source(source: str, allowed_torch: list[str] | tuple[str, ...] = ()) -> list[AuditFinding]:
    """Findings for `source`; empty when clean. Unparseable source is left to the worker (compile_error).

    `allowed_torch` (the task's extra torch calls) no longer changes the audit: torch calls are judged at run time."""
    del allowed_torch
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return []
    auditor = _Auditor(_bound_names(tree))
    auditor.visit(tree)
    # One finding per rule and line: the outermost (first visited) says it best.
    unique: dict[tuple[str, int], AuditFinding] = {}
    for finding in auditor.findings:
        unique.setdefault((finding.rule, finding.line), finding)
    return sorted(unique.values(), key=lambda finding: (finding.line, finding.rule))
