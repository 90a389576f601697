"""The kernels file: a submission's `@triton.jit` functions and constants, and nothing else.

The witness (gym.worker.witness) replays a call's launches with only this file
loaded, so no other code of the submission exists in its process. Built here, on
the trusted side, from the submission's syntax tree (nothing of it runs here):

- imports of `triton` and `math` (and names from them), as written;
- every `@triton.jit` function at module level or in a class body used as a
  namespace (the class keeps only its jit functions), with its other decorators
  (`autotune`, `heuristics`: the tape holds the config a launch used) removed;
- module-level constants whose value is a constant expression: literals, names of
  earlier constants, `tl.constexpr(...)`, attributes of the Triton language and
  `math`, arithmetic, and calls of a short list of pure helpers.

Each kept statement stays on its own line number, so Triton's errors point at the
submission's lines. A jit function must be Triton, not Python that happens to run
under the CPU interpreter (the witness compiles it for a GPU target as well); the
rules checked here keep the interpreter from running anything else in the witness:
no names or attributes that start with an underscore or reach Python's machinery
(`getattr`, `eval`, `open`, ...), and module names only as `tl.<name>` chains that
stay inside the Triton language or `math`.
"""

from __future__ import annotations

import ast
import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from gym.errors import KernelSourceError

# Modules whose imports the kernels file keeps (by root name).
KEPT_IMPORT_ROOTS = frozenset({"triton", "math"})
# Keyword arguments of triton.jit(...) that are kept (literal values only).
JIT_OPTIONS = frozenset({"do_not_specialize", "do_not_specialize_on_alignment", "debug", "noinline"})
# Builtins a constant expression or a jit function may call.
PURE_BUILTINS = frozenset({"int", "float", "bool", "min", "max", "abs", "round", "len", "range", "print", "isinstance", "tuple", "list"})
# Names no jit function may use: Python's reflection, code loading and I/O.
FORBIDDEN_NAMES = frozenset(
    {
        "getattr",
        "setattr",
        "delattr",
        "hasattr",
        "vars",
        "globals",
        "locals",
        "eval",
        "exec",
        "compile",
        "open",
        "type",
        "object",
        "super",
        "dir",
        "id",
        "memoryview",
        "bytearray",
        "bytes",
        "breakpoint",
        "input",
        "help",
        "exit",
        "quit",
        "classmethod",
        "staticmethod",
        "property",
        "callable",
        "issubclass",
        "iter",
        "next",
    }
)
# Attributes no jit function reads (the interpreter's host handles behind a Triton tensor).
FORBIDDEN_ATTRIBUTES = frozenset({"handle"})
# Module prefixes a `tl.<...>` chain may pass through or end in.
LANGUAGE_MODULES = ("triton.language", "math")
# Helpers of the `triton` package a constant or a jit function may call (pure functions of their arguments).
TRITON_HELPERS = frozenset({"cdiv", "next_power_of_2", "constexpr"})


@dataclass
class KernelsFile:
    # The file's text (jit functions, their namespaces, imports and constants at their own line numbers).
    text: str
    # The jit functions it holds, by qualified name.
    kernels: list[str]


def _dotted(node: ast.AST) -> list[str] | None:
    """`a.b.c` as ["a", "b", "c"] (None for anything but names and attributes)."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return parts[::-1]
    return None


class _Scope:
    """What the kept imports bind: alias -> module (or object) name, as written."""

    def __init__(self) -> None:
        self.modules: dict[str, str] = {}
        self.objects: dict[str, tuple[str, str]] = {}
        self.constants: set[str] = set()
        self.kernels: set[str] = set()

    def resolve(self, parts: list[str]) -> Any:
        """The object a dotted chain rooted at an import alias names (imported here, in the trusted
        process, from installed Triton: nothing of the submission's runs)."""
        root = parts[0]
        if root in self.modules:
            target: Any = importlib.import_module(self.modules[root])
        else:
            module, name = self.objects[root]
            target = getattr(importlib.import_module(module), name)
        for part in parts[1:]:
            target = getattr(target, part)
        return target


def _in_language(value: Any) -> bool:
    name = getattr(value, "__name__", "") if isinstance(value, ModuleType) else getattr(value, "__module__", "") or ""
    return isinstance(name, str) and (name == "triton" or name.startswith(LANGUAGE_MODULES))


def _check_chain(scope: _Scope, node: ast.AST, parts: list[str], where: str) -> None:
    """A chain rooted at an import alias must stay inside the Triton language (or math) and end in a non-module."""
    try:
        target: Any = scope.resolve(parts[:1])
        for index, part in enumerate(parts[1:], start=1):
            if isinstance(target, ModuleType) and not _in_language(target):
                raise KernelSourceError(getattr(node, "lineno", 0), f"{where}: `{'.'.join(parts[:index])}` is not part of the Triton language")
            if isinstance(target, ModuleType) and target.__name__ == "triton" and part not in ("language", *TRITON_HELPERS):
                raise KernelSourceError(getattr(node, "lineno", 0), f"{where}: `{'.'.join(parts[: index + 1])}` is not part of the Triton language")
            target = getattr(target, part)
    except (ImportError, AttributeError):
        raise KernelSourceError(getattr(node, "lineno", 0), f"{where}: `{'.'.join(parts)}` does not exist in the installed Triton") from None
    if isinstance(target, ModuleType):
        if len(parts) == 1:
            raise KernelSourceError(getattr(node, "lineno", 0), f"{where}: the module `{parts[0]}` may only be used as `{parts[0]}.<name>`")
        raise KernelSourceError(getattr(node, "lineno", 0), f"{where}: `{'.'.join(parts)}` is a module, not part of the Triton language")
    if not _in_language(target) and not isinstance(target, (int, float, str, bool)):
        owner = getattr(target, "__module__", type(target).__module__)
        raise KernelSourceError(getattr(node, "lineno", 0), f"{where}: `{'.'.join(parts)}` comes from {owner}, not from the Triton language")


def _check_jit_body(scope: _Scope, function: ast.FunctionDef, qualname: str) -> None:
    """The rules of the module docstring, on one jit function (signature and body)."""
    where = f"@triton.jit function {qualname}"
    # The signature and the body (the decorators are replaced, not run).
    nodes = [node for part in (function.args, *function.body) for node in ast.walk(part)]
    # Parameters and assigned names are the function's own (a local called `open` is no builtin).
    local = {arg.arg for arg in ast.walk(function.args) if isinstance(arg, ast.arg)}
    local |= {node.id for node in nodes if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store)}
    chains: set[int] = set()
    for node in nodes:
        if isinstance(node, (ast.Import, ast.ImportFrom, ast.Global, ast.Nonlocal, ast.ClassDef, ast.Lambda, ast.AsyncFunctionDef, ast.Await)):
            raise KernelSourceError(node.lineno, f"{where}: `{type(node).__name__}` is not part of the Triton language")
        if isinstance(node, ast.FunctionDef):
            raise KernelSourceError(node.lineno, f"{where}: a function defined inside a jit function is not part of the Triton language")
        if isinstance(node, ast.Attribute):
            if node.attr.startswith("_") or node.attr in FORBIDDEN_ATTRIBUTES:
                raise KernelSourceError(node.lineno, f"{where}: the attribute `{node.attr}` is not part of the Triton language")
            parts = _dotted(node)
            if parts is not None and id(node) not in chains and (parts[0] in scope.modules or parts[0] in scope.objects):
                _check_chain(scope, node, parts, where)
            # The inner attributes of this chain are checked with it.
            inner = node.value
            while isinstance(inner, ast.Attribute):
                chains.add(id(inner))
                inner = inner.value
            if isinstance(inner, ast.Name):
                chains.add(id(inner))
        if isinstance(node, ast.Name):
            if node.id.startswith("__") or (node.id in FORBIDDEN_NAMES and node.id not in local):
                raise KernelSourceError(node.lineno, f"{where}: `{node.id}` is not part of the Triton language")
            if id(node) not in chains and (node.id in scope.modules or node.id in scope.objects):
                _check_chain(scope, node, [node.id], where)
        if isinstance(node, ast.arg) and node.annotation is not None:
            _check_annotation(scope, node.annotation, where)


def _check_annotation(scope: _Scope, annotation: ast.expr, where: str) -> None:
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        return
    parts = _dotted(annotation)
    if parts is None or not (parts[0] in scope.modules or parts[0] in scope.objects):
        raise KernelSourceError(annotation.lineno, f"{where}: a parameter annotation must be a Triton type such as tl.constexpr")
    _check_chain(scope, annotation, parts, where)


def _constant(scope: _Scope, node: ast.expr) -> bool:
    """Whether `node` is a constant expression (see the module docstring)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, (int, float, str, bool, type(None)))
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_constant(scope, item) for item in node.elts)
    if isinstance(node, ast.UnaryOp):
        return _constant(scope, node.operand)
    if isinstance(node, ast.BinOp):
        return _constant(scope, node.left) and _constant(scope, node.right)
    if isinstance(node, ast.BoolOp):
        return all(_constant(scope, value) for value in node.values)
    if isinstance(node, ast.Compare):
        return _constant(scope, node.left) and all(_constant(scope, item) for item in node.comparators)
    if isinstance(node, ast.IfExp):
        return _constant(scope, node.test) and _constant(scope, node.body) and _constant(scope, node.orelse)
    if isinstance(node, ast.Name):
        return node.id in scope.constants
    parts = _dotted(node)
    if parts is not None and (parts[0] in scope.modules or parts[0] in scope.objects):
        try:
            _check_chain(scope, node, parts, "a module constant")
        except KernelSourceError:
            return False
        return not any(part.startswith("_") for part in parts)
    if isinstance(node, ast.Call) and not node.keywords:
        if isinstance(node.func, ast.Name) and node.func.id in PURE_BUILTINS:
            return all(_constant(scope, arg) for arg in node.args)
        callee = _dotted(node.func)
        if callee is not None and (callee[0] in scope.modules or callee[0] in scope.objects) and _constant(scope, node.func):
            try:
                target = scope.resolve(callee)
            except (ImportError, AttributeError):
                return False
            pure = getattr(target, "__module__", "") == "math" or getattr(target, "__name__", "") in TRITON_HELPERS
            return pure and all(_constant(scope, arg) for arg in node.args)
    return False


def _jit_decorator(scope: _Scope, decorator: ast.expr) -> ast.expr | None:
    """`decorator` as kept when it is triton.jit (bare or called with literal options), else None."""
    call = decorator if isinstance(decorator, ast.Call) else None
    target = call.func if call is not None else decorator
    parts = _dotted(target)
    if parts is None:
        return None
    try:
        resolved = scope.resolve(parts) if parts[0] in scope.modules or parts[0] in scope.objects else None
    except (ImportError, AttributeError):
        return None
    import triton

    if resolved is not triton.jit:
        return None
    if call is None:
        return decorator
    keywords = [keyword for keyword in call.keywords if keyword.arg in JIT_OPTIONS and _literal(keyword.value)]
    return ast.Call(func=call.func, args=[], keywords=keywords)


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except ValueError:
        return False
    return True


def _kept_function(scope: _Scope, node: ast.FunctionDef, qualname: str, lines: list[str], out: list[str]) -> bool:
    """Copy a jit function into `out` at its own lines (its other decorators blanked, the jit
    decorator's options reduced to literal ones); False when it is not a jit function."""
    decorators = [(decorator, _jit_decorator(scope, decorator)) for decorator in node.decorator_list]
    jit = [(decorator, kept) for decorator, kept in decorators if kept is not None]
    if not jit:
        return False
    for default in [*node.args.defaults, *node.args.kw_defaults]:
        if default is not None and not _constant(scope, default):
            raise KernelSourceError(default.lineno, f"@triton.jit function {qualname}: a default value must be a constant")
    _check_jit_body(scope, node, qualname)
    end = node.end_lineno or node.lineno
    for number in range(node.lineno, end + 1):
        out[number - 1] = lines[number - 1]
    for decorator, _ in decorators:
        for number in range(decorator.lineno, (decorator.end_lineno or decorator.lineno) + 1):
            out[number - 1] = ""
    first, kept = jit[0]
    out[first.lineno - 1] = " " * node.col_offset + "@" + ast.unparse(kept)
    return True


def _kept_class(scope: _Scope, node: ast.ClassDef, prefix: str, lines: list[str], out: list[str]) -> bool:
    """A class used as a namespace: its line (no bases, no decorators) and its jit functions."""
    kept = False
    for item in node.body:
        if isinstance(item, ast.FunctionDef) and _kept_function(scope, item, f"{prefix}{node.name}.{item.name}", lines, out):
            scope.kernels.add(f"{prefix}{node.name}.{item.name}")
            kept = True
        elif isinstance(item, ast.ClassDef) and _kept_class(scope, item, f"{prefix}{node.name}.", lines, out):
            kept = True
    if kept:
        out[node.lineno - 1] = " " * node.col_offset + f"class {node.name}:"
    return kept


def _kept_import(scope: _Scope, node: ast.Import | ast.ImportFrom) -> ast.stmt | None:
    if isinstance(node, ast.Import):
        names = [alias for alias in node.names if alias.name.split(".")[0] in KEPT_IMPORT_ROOTS]
        for alias in names:
            if alias.asname:
                scope.modules[alias.asname] = alias.name
            else:
                root = alias.name.split(".")[0]
                scope.modules[root] = root
        return ast.Import(names=names) if names else None
    if node.level or not node.module or node.module.split(".")[0] not in KEPT_IMPORT_ROOTS:
        return None
    kept = []
    for alias in node.names:
        if alias.name == "*":
            continue
        bound = alias.asname or alias.name
        try:
            value = getattr(importlib.import_module(node.module), alias.name)
        except (ImportError, AttributeError):
            try:
                importlib.import_module(f"{node.module}.{alias.name}")
            except ImportError:
                continue
            scope.modules[bound] = f"{node.module}.{alias.name}"
            kept.append(alias)
            continue
        if isinstance(value, ModuleType):
            scope.modules[bound] = value.__name__
        else:
            scope.objects[bound] = (node.module, alias.name)
        kept.append(alias)
    return ast.ImportFrom(module=node.module, names=kept, level=0) if kept else None


def _kept_constant(scope: _Scope, node: ast.Assign | ast.AnnAssign) -> ast.stmt | None:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    if len(targets) != 1 or not isinstance(targets[0], ast.Name) or node.value is None:
        return None
    name = targets[0].id
    if name.startswith("__") or not _constant(scope, node.value):
        scope.constants.discard(name)
        return None
    scope.constants.add(name)
    return ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=node.value)


def extract_kernels(source: str) -> KernelsFile:
    """The kernels file of a submission (KernelSourceError when its jit code breaks a rule;
    SyntaxError when it does not parse)."""
    tree = ast.parse(source)
    lines = source.splitlines()
    out = [""] * len(lines)
    scope = _Scope()
    for node in tree.body:
        statement: ast.stmt | None = None
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            statement = _kept_import(scope, node)
        elif isinstance(node, ast.FunctionDef):
            if _kept_function(scope, node, node.name, lines, out):
                scope.kernels.add(node.name)
        elif isinstance(node, ast.ClassDef):
            _kept_class(scope, node, "", lines, out)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            statement = _kept_constant(scope, node)
        elif isinstance(node, (ast.If, ast.Try)):
            # Imports under a version gate or an ImportError fallback: kept, each on its own line (the
            # branch is not evaluated; every import of Triton or math in it is kept, the last one binding).
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Import, ast.ImportFrom)):
                    kept_import = _kept_import(scope, inner)
                    if kept_import is not None:
                        out[inner.lineno - 1] = ast.unparse(ast.fix_missing_locations(kept_import))
        if statement is not None:
            # One line where the statement began; the rest of its lines stay blank.
            out[node.lineno - 1] = ast.unparse(ast.fix_missing_locations(statement))
    return KernelsFile(text="\n".join(out) + "\n", kernels=sorted(scope.kernels))
