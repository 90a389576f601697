"""The kernels file: a submission's `@triton.jit` functions and constants, and nothing else.

The witness (gym.worker.witness) replays a call's launches with only this file
loaded, so no other code of the submission exists in its process. Built here, on
the trusted side, from the submission's syntax tree (nothing of it runs here):

- imports of `triton` and `math` (and names from them, libdevice functions
  included), as written, and `from __future__ import annotations`;
- every `@triton.jit` function at module level or in a class body used as a
  namespace (the class keeps only its jit functions), with its other decorators
  (`autotune`, `heuristics`, `staticmethod`, `libentry`: the tape holds the config
  a launch used) removed;
- every jit function made by a call at module level (`name = triton.jit(fn)`,
  `name = triton.jit(**options)(fn)`, also wrapped as `autotune(...)(triton.jit(fn))`):
  `fn` is kept and the line becomes `name = fn = triton.jit(fn)`, so the jit function
  is found under the name its code carries (the tape names a launch by `fn.__qualname__`);
- module-level constants whose value is a constant expression: literals, names of
  earlier constants, `tl.constexpr(...)`, attributes of the Triton language and
  `math`, arithmetic, and calls of a short list of pure helpers; and aliases of the
  Triton language (`libdevice = tl.math`, `fn = tl.some_function`);
- module-level version gates, with their structure: an `if`/`elif`/`else` is decided
  here, on the trusted side, with the installed Triton (a test on `triton.__version__`,
  `packaging` versions, `importlib.metadata.version`, `hasattr(tl, ...)`,
  `torch.cuda.is_available()` and constants is evaluated; a call of the submission's
  own code cannot be, and is read as an NVIDIA GPU with this Triton would answer it:
  names of other platforms (hip, npu, xpu, ...) false, anything else true), and the
  branch taken is kept under `if True:` (`KernelsFile.gates` says how each was
  decided); a `try`/`except` is kept whole (its body and handlers with their kept
  content; an import of a module that is not installed becomes the
  `raise ModuleNotFoundError` it would be), so the witness takes the branch the
  submission took.

Each kept statement stays on its own line number, so Triton's errors point at the
submission's lines and a jit function's code is the submission's, byte for byte
(its identity, gym.worker.tape.code_identity, is what a launch is replayed by).
Annotations of a jit function are kept as written when they are Triton types,
builtin types or strings (Triton reads them: `tl.constexpr`, `tl.int32`); any other
annotation becomes the string of its source (what `from __future__ import
annotations` would make of it), so evaluating it runs nothing.

A jit function must be Triton, not Python that happens to run under the CPU
interpreter (the witness compiles it for a GPU target as well); the rules checked
here keep the interpreter from running anything else in the witness: no names or
attributes that start with an underscore (but `_experimental_*` names of the Triton
language) or reach Python's machinery (`getattr`, `eval`, `open`, ...), and module
names only as `tl.<name>` chains that stay inside the Triton language or `math`.
A chain that names something the installed Triton lacks is kept: it fails when
compiled, as it does in the submission's own process with the same Triton.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import operator
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from gym.errors import KernelGymError, KernelSourceError
from gym.worker.launched_modules import LIBRARY_KERNEL_MODULES

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
# Private names of the Triton language that real kernels use (in a chain rooted at an import of it).
LANGUAGE_PRIVATE = re.compile(r"_experimental_[a-z0-9_]+\Z")
# Module prefixes a `tl.<...>` chain may pass through or end in.
LANGUAGE_MODULES = ("triton.language", "math", *LIBRARY_KERNEL_MODULES)
# Modules a `from M import name` may name outside Triton, with the names they may give: each is kept
# when it is a module of the Triton language or of LIBRARY_KERNEL_MODULES, rewritten as an import of
# that module under its real name (Helion's generated imports; nothing else is imported here).
LIBRARY_IMPORTS: dict[str, frozenset[str]] = {
    "torch._inductor.runtime.triton_compat": frozenset({"libdevice", "math"}),
    "torch._inductor.runtime": frozenset({"triton_helpers"}),
    "torch._inductor.runtime.triton_helpers": frozenset({"math", "libdevice"}),
    "helion.runtime.triton": frozenset({"helpers"}),
}
# Helpers of the `triton` package a constant or a jit function may call (pure functions of their arguments).
TRITON_HELPERS = frozenset({"cdiv", "next_power_of_2", "constexpr"})
# Builtin types an annotation may name as written.
ANNOTATION_BUILTINS = frozenset({"int", "float", "bool", "str", "tuple", "list", "dict", "None"})
# Exceptions a kept `except` may name (anything else is kept as `Exception`).
HANDLED_EXCEPTIONS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError", "NameError", "Exception", "TypeError", "ValueError", "KeyError"})
# A gate that calls the submission's own code reads as false when it names another platform.
OTHER_PLATFORMS = re.compile(
    r"hip|rocm|amd|npu|xpu|musa|mlu|ascend|cambricon|kunlun|iluvatar|metax|mthreads|tsingmicro|enflame|hygon|mps|tle|cpu|interpret", re.IGNORECASE
)

# A binding of a kept name: the module it comes from and the attribute path inside it (empty: the module).
Binding = tuple[str, tuple[str, ...]]


@dataclass
class KernelsFile:
    # The file's text (jit functions, their namespaces, imports and constants at their own line numbers).
    text: str
    # The jit functions it holds, by qualified name.
    kernels: list[str]
    # The module-level `if` gates decided here: (line, the test as written, the branch taken, how it was decided).
    gates: list[tuple[int, str, bool, str]] = field(default_factory=list)


class _Missing:
    """A chain that the installed Triton does not have (it fails when compiled, as in the submission)."""


MISSING = _Missing()


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


def _in_language(value: Any) -> bool:
    name = getattr(value, "__name__", "") if isinstance(value, ModuleType) else getattr(value, "__module__", "") or ""
    return isinstance(name, str) and (name == "triton" or name.startswith(LANGUAGE_MODULES))


def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        return MISSING


class _Scope:
    """What the kept statements bind: name -> where it comes from (several where a `try` may bind it
    either way), constant names with their values where known, and what gates need."""

    def __init__(self) -> None:
        self.bindings: dict[str, list[Binding]] = {}
        self.constants: set[str] = set()
        self.kernels: set[str] = set()
        # Plain module-level functions, for `triton.jit(fn)`.
        self.plain: dict[str, ast.FunctionDef] = {}
        # Values a gate may read: constants, and names bound to host helpers (packaging, operator, torch).
        self.values: dict[str, Any] = {}
        # Inside a `try` a name may end up bound by the body or by a handler: bindings add up.
        self.union = 0
        self.future_annotations = False

    def bind(self, name: str, binding: Binding) -> None:
        known = self.bindings.get(name, []) if self.union else []
        self.bindings[name] = [*known, binding] if binding not in known else known

    def targets(self, parts: list[str]) -> Iterator[tuple[Any, int]]:
        """For each binding of parts[0], the objects along the chain: (object, index of the part it is)."""
        for module, path in self.bindings[parts[0]]:
            target = _import(module)
            yield target, -1
            for part in path:
                if target is MISSING:
                    break
                target = getattr(target, part, MISSING)
                yield target, -1
            for index, part in enumerate(parts[1:], start=1):
                if target is MISSING:
                    break
                yield target, index
                target = getattr(target, part, MISSING)
            yield target, len(parts)

    def resolve(self, parts: list[str]) -> Any:
        """The object a chain names, when every binding of its root gives the same one (else MISSING)."""
        found: list[Any] = []
        for module, path in self.bindings.get(parts[0], []):
            target = _import(module)
            for part in [*path, *parts[1:]]:
                target = MISSING if target is MISSING else getattr(target, part, MISSING)
            found.append(target)
        return found[0] if found and all(item is found[0] for item in found) else MISSING


def _check_chain(scope: _Scope, node: ast.AST, parts: list[str], where: str, module_ok: bool = False) -> None:
    """A chain rooted at an import alias must stay inside the Triton language (or math) and end in a
    non-module (a module when `module_ok`), under every binding of its root."""
    line = getattr(node, "lineno", 0)
    for private in parts[1:]:
        if private.startswith("_") and not LANGUAGE_PRIVATE.match(private):
            raise KernelSourceError(line, f"{where}: the attribute `{private}` is not part of the Triton language")
    for binding in scope.bindings[parts[0]]:
        module, path = binding
        target = _import(module)
        walked = [*path, *parts[1:]]
        for index, part in enumerate(walked):
            if target is MISSING:
                break
            shown = ".".join(parts[: max(1, index - len(path) + 1)])
            if isinstance(target, ModuleType) and not _in_language(target):
                raise KernelSourceError(line, f"{where}: `{shown}` is not part of the Triton language")
            if isinstance(target, ModuleType) and target.__name__ == "triton" and part not in ("language", *TRITON_HELPERS):
                raise KernelSourceError(line, f"{where}: `{'.'.join(parts[: index - len(path) + 2])}` is not part of the Triton language")
            target = getattr(target, part, MISSING)
        if target is MISSING:
            continue
        if isinstance(target, ModuleType):
            if module_ok and _in_language(target):
                continue
            if len(parts) == 1:
                raise KernelSourceError(line, f"{where}: the module `{parts[0]}` may only be used as `{parts[0]}.<name>`")
            raise KernelSourceError(line, f"{where}: `{'.'.join(parts)}` is a module, not part of the Triton language")
        if not _in_language(target) and not isinstance(target, (int, float, str, bool)):
            owner = getattr(target, "__module__", type(target).__module__)
            raise KernelSourceError(line, f"{where}: `{'.'.join(parts)}` comes from {owner}, not from the Triton language")


def _signature_nodes(function: ast.FunctionDef) -> list[ast.expr]:
    args = function.args
    return [*args.defaults, *[default for default in args.kw_defaults if default is not None]]


def _annotations(function: ast.FunctionDef) -> list[ast.expr]:
    args = function.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, *([args.vararg] if args.vararg else []), *([args.kwarg] if args.kwarg else [])]
    found = [arg.annotation for arg in every if arg.annotation is not None]
    return [*found, *([function.returns] if function.returns is not None else [])]


def _check_jit_body(scope: _Scope, function: ast.FunctionDef, qualname: str) -> None:
    """The rules of the module docstring, on one jit function (defaults and body; the decorators are
    replaced, not run, and the annotations are kept only as Triton or builtin types or strings)."""
    where = f"@triton.jit function {qualname}"
    nodes = [node for part in (*_signature_nodes(function), *function.body) for node in ast.walk(part)]
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
            parts = _dotted(node)
            rooted = parts is not None and parts[0] in scope.bindings
            if node.attr in FORBIDDEN_ATTRIBUTES or (node.attr.startswith("_") and not (rooted and LANGUAGE_PRIVATE.match(node.attr))):
                raise KernelSourceError(node.lineno, f"{where}: the attribute `{node.attr}` is not part of the Triton language")
            if rooted and parts is not None and id(node) not in chains:
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
            if id(node) not in chains and node.id in scope.bindings:
                _check_chain(scope, node, [node.id], where)


def _safe_annotation(scope: _Scope, annotation: ast.expr) -> bool:
    """Whether an annotation may be evaluated as written: strings, builtin types, Triton types."""
    if isinstance(annotation, ast.Constant):
        return annotation.value is None or isinstance(annotation.value, (str, int, float, bool))
    if isinstance(annotation, ast.Name) and annotation.id in ANNOTATION_BUILTINS and annotation.id not in scope.bindings:
        return True
    if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
        return _safe_annotation(scope, annotation.left) and _safe_annotation(scope, annotation.right)
    if isinstance(annotation, ast.Subscript):
        return _safe_annotation(scope, annotation.value) and _safe_annotation(scope, annotation.slice)
    if isinstance(annotation, ast.Tuple):
        return all(_safe_annotation(scope, item) for item in annotation.elts)
    parts = _dotted(annotation)
    if parts is None or parts[0] not in scope.bindings:
        return False
    try:
        _check_chain(scope, annotation, parts, "an annotation")
    except KernelSourceError:
        return False
    return scope.resolve(parts) is not MISSING


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
    if isinstance(node, ast.Subscript):
        return _constant(scope, node.value) and _constant(scope, node.slice)
    if isinstance(node, ast.Name):
        return node.id in scope.constants
    parts = _dotted(node)
    if parts is not None and parts[0] in scope.bindings:
        try:
            _check_chain(scope, node, parts, "a module constant")
        except KernelSourceError:
            return False
        return not any(part.startswith("_") for part in parts) and scope.resolve(parts) is not MISSING
    if isinstance(node, ast.Call) and not node.keywords:
        if isinstance(node.func, ast.Name) and node.func.id in PURE_BUILTINS and node.func.id not in scope.bindings:
            return all(_constant(scope, arg) for arg in node.args)
        callee = _dotted(node.func)
        if callee is not None and callee[0] in scope.bindings and _constant(scope, node.func):
            target = scope.resolve(callee)
            pure = getattr(target, "__module__", "") == "math" or getattr(target, "__name__", "") in TRITON_HELPERS
            return pure and all(_constant(scope, arg) for arg in node.args)
    return False


def _is_jit(scope: _Scope, node: ast.expr) -> bool:
    parts = _dotted(node)
    if parts is None or parts[0] not in scope.bindings:
        return False
    import triton

    return scope.resolve(parts) is triton.jit


def _jit_decorator(scope: _Scope, decorator: ast.expr) -> ast.expr | None:
    """`decorator` as kept when it is triton.jit (bare or called with literal options), else None."""
    call = decorator if isinstance(decorator, ast.Call) else None
    target = call.func if call is not None else decorator
    if not _is_jit(scope, target):
        return None
    if call is None:
        return decorator
    keywords = [keyword for keyword in call.keywords if keyword.arg in JIT_OPTIONS and _literal(keyword.value)]
    return ast.Call(func=call.func, args=[], keywords=keywords)


def _jit_by_call(scope: _Scope, value: ast.expr) -> tuple[str, ast.expr] | None:
    """`triton.jit(fn, ...)`, `triton.jit(...)(fn)`, or either inside other wrappers (`autotune(...)(...)`,
    dropped as decorators are): the plain function's name and the call kept for it."""
    if not isinstance(value, ast.Call):
        return None
    if _is_jit(scope, value.func) and len(value.args) == 1 and isinstance(value.args[0], ast.Name):
        keywords = [keyword for keyword in value.keywords if keyword.arg in JIT_OPTIONS and _literal(keyword.value)]
        return value.args[0].id, ast.Call(func=value.func, args=[value.args[0]], keywords=keywords)
    if isinstance(value.func, ast.Call) and len(value.args) == 1 and isinstance(value.args[0], ast.Name):
        decorator = _jit_decorator(scope, value.func)
        if decorator is not None:
            return value.args[0].id, ast.Call(func=decorator, args=[value.args[0]], keywords=[])
    if len(value.args) == 1:
        return _jit_by_call(scope, value.args[0])
    return None


def _literal(node: ast.expr) -> bool:
    try:
        ast.literal_eval(node)
    except ValueError:
        return False
    return True


# Gate evaluation (trusted side only, over a closed set of host objects).
class _Opaque(KernelGymError):
    """A gate's part that calls code the kernels file cannot run (the submission's own); caught where the
    gate is decided, never raised out of the extractor."""

    def __init__(self, node: ast.AST) -> None:
        super().__init__(ast.unparse(node))
        self.node = node


GATE_BUILTINS: dict[str, Any] = {
    "int": int,
    "float": float,
    "str": str,
    "bool": bool,
    "tuple": tuple,
    "list": list,
    "map": map,
    "len": len,
    "min": min,
    "max": max,
    "any": any,
    "all": all,
    "hasattr": hasattr,
}
# Host modules a gate may import and read (by module name), and what it may read of them.
GATE_MODULES = {"packaging", "packaging.version", "operator", "importlib", "importlib.metadata", "torch", "torch.cuda", "torch.version"}
GATE_ATTRIBUTES = {
    "packaging": {"version"},
    "packaging.version": {"Version", "parse"},
    "importlib": {"metadata"},
    "importlib.metadata": {"version"},
    "torch": {"cuda", "version", "__version__"},
    "torch.cuda": {"is_available"},
    "torch.version": {"cuda", "hip", "__version__"},
    "operator": {"ge", "gt", "le", "lt", "eq", "ne", "not_"},
}
# What evaluating a gate may raise (a wrong type, a bad version string, a package not installed).
GATE_ERRORS = (TypeError, ValueError, ArithmeticError, AttributeError, LookupError, ImportError)
VALUE_ATTRIBUTES = frozenset({"split", "startswith", "endswith", "strip", "lower", "replace", "major", "minor", "micro", "release", "base_version"})


def _gate_value(scope: _Scope, guesses: list[str], node: ast.expr) -> Any:
    """The value of a gate expression, evaluated here over constants, the installed Triton and a few
    host helpers; _Opaque for a part that is anything else."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Tuple, ast.List)):
        items = [_gate_value(scope, guesses, item) for item in node.elts]
        return tuple(items) if isinstance(node, ast.Tuple) else items
    if isinstance(node, ast.Name):
        if node.id in scope.values:
            value = scope.values[node.id]
            if isinstance(value, _Guessed):
                guesses.extend(value.guesses)
                return value.value
            return value
        if node.id in scope.bindings:
            target = scope.resolve([node.id])
            if target is MISSING:
                raise _Opaque(node)
            return target
        if node.id in GATE_BUILTINS:
            return GATE_BUILTINS[node.id]
        raise _Opaque(node)
    if isinstance(node, ast.Attribute):
        base = _gate_value(scope, guesses, node.value)
        name = getattr(base, "__name__", "") if isinstance(base, ModuleType) else ""
        allowed = (
            (name.startswith("triton") and (not node.attr.startswith("_") or node.attr == "__version__"))
            or node.attr in GATE_ATTRIBUTES.get(name, ())
            or (not isinstance(base, ModuleType) and type(base).__module__ in ("builtins", "packaging.version") and node.attr in VALUE_ATTRIBUTES)
        )
        if not allowed or not hasattr(base, node.attr):
            raise _Opaque(node)
        return getattr(base, node.attr)
    if isinstance(node, ast.Call):
        try:
            function = _gate_value(scope, guesses, node.func)
            args = [_gate_value(scope, guesses, arg) for arg in node.args]
            kwargs = {keyword.arg: _gate_value(scope, guesses, keyword.value) for keyword in node.keywords if keyword.arg}
        except _Opaque:
            raise _Opaque(node) from None
        if function is hasattr:
            if len(args) != 2 or not isinstance(args[0], ModuleType) or not _in_language(args[0]) or not isinstance(args[1], str):
                raise _Opaque(node)
        elif function is map:
            if not args or args[0] not in (int, str, float):
                raise _Opaque(node)
        elif not (
            function in GATE_BUILTINS.values()
            or getattr(function, "__module__", "") in ("packaging.version", "importlib.metadata", "_operator", "operator")
            or getattr(function, "__qualname__", "") == "is_available"
            or (
                type(getattr(function, "__self__", None)).__module__ in ("builtins", "packaging.version")
                and not isinstance(getattr(function, "__self__", None), ModuleType)
            )
        ):
            raise _Opaque(node)
        try:
            return function(*args, **kwargs)
        except GATE_ERRORS:
            raise _Opaque(node) from None
    if isinstance(node, ast.BoolOp):
        result: Any = None
        for item in node.values:
            result = _gate_value(scope, guesses, item)
            if isinstance(node.op, ast.And) and not result:
                return result
            if isinstance(node.op, ast.Or) and result:
                return result
        return result
    if isinstance(node, ast.UnaryOp):
        operand = _gate_value(scope, guesses, node.operand)
        unary: dict[type, Callable[[Any], Any]] = {ast.Not: operator.not_, ast.USub: operator.neg, ast.UAdd: operator.pos}
        if type(node.op) not in unary:
            raise _Opaque(node)
        return unary[type(node.op)](operand)
    if isinstance(node, ast.Compare):
        left = _gate_value(scope, guesses, node.left)
        compare: dict[type, Callable[[Any, Any], Any]] = {
            ast.Eq: operator.eq,
            ast.NotEq: operator.ne,
            ast.Lt: operator.lt,
            ast.LtE: operator.le,
            ast.Gt: operator.gt,
            ast.GtE: operator.ge,
            ast.Is: operator.is_,
            ast.IsNot: operator.is_not,
            ast.In: lambda a, b: a in b,
            ast.NotIn: lambda a, b: a not in b,
        }
        for op, comparator in zip(node.ops, node.comparators):
            right = _gate_value(scope, guesses, comparator)
            try:
                if not compare[type(op)](left, right):
                    return False
            except GATE_ERRORS:
                raise _Opaque(node) from None
            left = right
        return True
    if isinstance(node, ast.BinOp):
        left, right = _gate_value(scope, guesses, node.left), _gate_value(scope, guesses, node.right)
        binary: dict[type, Callable[[Any, Any], Any]] = {
            ast.Add: operator.add,
            ast.Sub: operator.sub,
            ast.Mult: operator.mul,
            ast.FloorDiv: operator.floordiv,
            ast.Mod: operator.mod,
        }
        small = all(isinstance(value, (int, float)) and abs(value) < 2**64 for value in (left, right))
        if type(node.op) not in binary or not small:
            raise _Opaque(node)
        try:
            return binary[type(node.op)](left, right)
        except GATE_ERRORS:
            raise _Opaque(node) from None
    if isinstance(node, ast.Subscript):
        value, index = _gate_value(scope, guesses, node.value), _gate_value(scope, guesses, node.slice)
        if not isinstance(value, (str, tuple, list)) or not isinstance(index, (int, slice)):
            raise _Opaque(node)
        try:
            return value[index]
        except IndexError:
            raise _Opaque(node) from None
    if isinstance(node, ast.Slice):
        return slice(*(None if part is None else _gate_value(scope, guesses, part) for part in (node.lower, node.upper, node.step)))
    if isinstance(node, ast.IfExp):
        return _gate_value(scope, guesses, node.body if _gate_value(scope, guesses, node.test) else node.orelse)
    raise _Opaque(node)


def _decide(scope: _Scope, test: ast.expr) -> tuple[bool, str]:
    """The branch a module-level `if` takes, and how that was decided."""
    guesses: list[str] = []
    taken = bool(_guess(scope, test, guesses))
    return taken, ("evaluated" if not guesses else "guessed: " + "; ".join(guesses))


def _guess(scope: _Scope, test: ast.expr, guesses: list[str]) -> Any:
    """A gate expression's value, each part that calls the submission's own code guessed (see the
    module docstring) and named in `guesses`."""

    def value(node: ast.expr) -> Any:
        try:
            return _gate_value(scope, guesses, node)
        except _Opaque as opaque:
            if opaque.node is node or not isinstance(node, (ast.BoolOp, ast.UnaryOp, ast.Compare, ast.IfExp)):
                text = str(opaque)
                guess = not OTHER_PLATFORMS.search(text)
                guesses.append(f"`{text}` read as {guess}")
                return guess
            if isinstance(node, ast.BoolOp):
                result: Any = None
                for item in node.values:
                    result = value(item)
                    if (isinstance(node.op, ast.And) and not result) or (isinstance(node.op, ast.Or) and result):
                        return result
                return result
            if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
                return not value(node.operand)
            if isinstance(node, ast.IfExp):
                return value(node.body if value(node.test) else node.orelse)
            text = ast.unparse(node)
            guess = not OTHER_PLATFORMS.search(text)
            guesses.append(f"`{text}` read as {guess}")
            return guess

    return value(test)


@dataclass
class _Guessed:
    """A module name's value for later gates, with the guesses it took."""

    value: Any
    guesses: list[str]


def _opaque_value(scope: _Scope, node: ast.expr) -> Any:
    guesses: list[str] = []
    value = _guess(scope, node, guesses)
    return _Guessed(value, guesses) if guesses else value


class _Extractor:
    def __init__(self, source: str) -> None:
        self.source = source
        self.lines = source.splitlines()
        self.out = [""] * len(self.lines)
        self.scope = _Scope()
        self.gates: list[tuple[int, str, bool, str]] = []

    # Writing lines.
    def write(self, line: int, col: int, text: str) -> None:
        self.out[line - 1] = " " * col + text

    def statement_lines(self, node: ast.stmt) -> tuple[int, int]:
        decorators = getattr(node, "decorator_list", [])
        first = min([node.lineno, *(decorator.lineno for decorator in decorators)])
        return first, node.end_lineno or node.lineno

    def keyword_line(self, keyword: str, col: int, after: int, before: int) -> int:
        """The line of an `else:`/`finally:` keyword between two statements (1-based)."""
        for number in range(before - 1, after, -1):
            text = self.lines[number - 1]
            if text[:col].strip() == "" and re.match(rf"{keyword}\s*:", text[col:]):
                return number
        raise KernelSourceError(before, f"a module-level `{keyword}:` must be on its own line to be kept")

    # Functions.
    def copy_function(self, node: ast.FunctionDef, qualname: str) -> None:
        """Copy a function's lines (checked as a jit function), its annotations made safe."""
        for default in _signature_nodes(node):
            if not _constant(self.scope, default):
                raise KernelSourceError(default.lineno, f"@triton.jit function {qualname}: a default value must be a constant")
        _check_jit_body(self.scope, node, qualname)
        for number in range(node.lineno, (node.end_lineno or node.lineno) + 1):
            self.out[number - 1] = self.lines[number - 1]
        if self.scope.future_annotations:
            return
        spans = [annotation for annotation in _annotations(node) if not _safe_annotation(self.scope, annotation)]
        for annotation in sorted(spans, key=lambda item: (item.lineno, item.col_offset), reverse=True):
            self.replace(annotation, repr(ast.get_source_segment(self.source, annotation) or ast.unparse(annotation)))

    def replace(self, node: ast.expr, text: str) -> None:
        first, last = node.lineno, node.end_lineno or node.lineno
        start = self.out[first - 1].encode()
        end = self.out[last - 1].encode()
        head = start[: node.col_offset].decode()
        tail = end[node.end_col_offset or 0 :].decode()
        for number in range(first, last + 1):
            self.out[number - 1] = ""
        self.out[first - 1] = head + text + (tail if first == last else "")
        if first != last:
            self.out[last - 1] = " " * len(head) + tail.lstrip() if tail.strip() else ""

    def jit_function(self, node: ast.FunctionDef, qualname: str) -> bool:
        """Copy a jit function into the file at its own lines (its other decorators blanked, the jit
        decorator's options reduced to literal ones); False when it is not a jit function."""
        decorators = [(decorator, _jit_decorator(self.scope, decorator)) for decorator in node.decorator_list]
        jit = [(decorator, kept) for decorator, kept in decorators if kept is not None]
        if not jit:
            return False
        self.copy_function(node, qualname)
        for decorator, _ in decorators:
            for number in range(decorator.lineno, (decorator.end_lineno or decorator.lineno) + 1):
                self.out[number - 1] = ""
        first, kept = jit[0]
        self.write(first.lineno, node.col_offset, "@" + ast.unparse(kept))
        self.scope.kernels.add(qualname)
        return True

    def jit_class(self, node: ast.ClassDef, prefix: str) -> bool:
        """A class used as a namespace: its line (no bases, no decorators) and its jit functions
        (`@staticmethod` among the decorators dropped: the class attribute is the jit function)."""
        kept = False
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and self.jit_function(item, f"{prefix}{node.name}.{item.name}"):
                kept = True
            elif isinstance(item, ast.ClassDef) and self.jit_class(item, f"{prefix}{node.name}."):
                kept = True
        if kept:
            for decorator in node.decorator_list:
                for number in range(decorator.lineno, (decorator.end_lineno or decorator.lineno) + 1):
                    self.out[number - 1] = ""
            self.write(node.lineno, node.col_offset, f"class {node.name}:")
        return kept

    # Imports, constants, aliases.
    def library_import(self, node: ast.ImportFrom) -> ast.stmt | None:
        """`from <LIBRARY_IMPORTS module> import name as alias` of a Triton language or library kernel
        module, kept as `import <its real name> as alias` (other names are dropped)."""
        assert node.module is not None
        kept = []
        for alias in node.names:
            if alias.name not in LIBRARY_IMPORTS[node.module]:
                continue
            value = getattr(_import(node.module), alias.name, MISSING)
            if value is MISSING:
                value = _import(f"{node.module}.{alias.name}")
            if not isinstance(value, ModuleType) or not _in_language(value):
                continue
            bound = alias.asname or alias.name
            self.scope.bind(bound, (value.__name__, ()))
            self.scope.values.pop(bound, None)
            kept.append(ast.alias(name=value.__name__, asname=bound))
        return ast.Import(names=kept) if kept else None

    def kept_import(self, node: ast.Import | ast.ImportFrom) -> ast.stmt | None:
        scope = self.scope
        if isinstance(node, ast.Import):
            names = []
            for alias in node.names:
                root = alias.name.split(".")[0]
                if root in KEPT_IMPORT_ROOTS and (scope.union or _import(alias.name) is not MISSING):
                    names.append(alias)
                    if alias.asname:
                        scope.bind(alias.asname, (alias.name, ()))
                    else:
                        scope.bind(root, (root, ()))
                    scope.values.pop(alias.asname or root, None)
                elif alias.name in GATE_MODULES:
                    bound = alias.asname or root
                    scope.values[bound] = _import(alias.name if alias.asname else root)
            return ast.Import(names=names) if names else None
        if node.module == "__future__" and not node.level:
            scope.future_annotations |= any(alias.name == "annotations" for alias in node.names)
            return ast.ImportFrom(module="__future__", names=node.names, level=0)
        if node.level or not node.module:
            return None
        if node.module in LIBRARY_IMPORTS:
            return self.library_import(node)
        if node.module.split(".")[0] not in KEPT_IMPORT_ROOTS:
            if node.module in GATE_MODULES:
                for alias in node.names:
                    if alias.name in GATE_ATTRIBUTES.get(node.module, ()):
                        module = _import(node.module)
                        scope.values[alias.asname or alias.name] = getattr(module, alias.name, MISSING)
            return None
        kept = []
        for alias in node.names:
            if alias.name == "*":
                continue
            bound = alias.asname or alias.name
            module = _import(node.module)
            value = getattr(module, alias.name, MISSING)
            if value is MISSING and _import(f"{node.module}.{alias.name}") is not MISSING:
                scope.bind(bound, (f"{node.module}.{alias.name}", ()))
            elif isinstance(value, ModuleType):
                scope.bind(bound, (value.__name__, ()))
            elif value is not MISSING or scope.union:
                # A name the installed Triton lacks is kept only under a `try` (its ImportError is handled there).
                scope.bind(bound, (node.module, (alias.name,)))
            else:
                continue
            scope.values.pop(bound, None)
            kept.append(alias)
        return ast.ImportFrom(module=node.module, names=kept, level=0) if kept else None

    def missing_import(self, node: ast.Import | ast.ImportFrom) -> str | None:
        """The module of a dropped import that is not installed (its import raises ModuleNotFoundError)."""
        names = [alias.name for alias in node.names] if isinstance(node, ast.Import) else [node.module or ""]
        if isinstance(node, ast.ImportFrom) and node.level:
            return None
        for name in names:
            root = name.split(".")[0]
            if root and root not in KEPT_IMPORT_ROOTS and importlib.util.find_spec(root) is None:
                return root
        return None

    def assignment(self, node: ast.Assign | ast.AnnAssign) -> ast.stmt | None:
        scope = self.scope
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        if node.value is None or not all(isinstance(target, ast.Name) for target in targets):
            return None
        names = [target.id for target in targets if isinstance(target, ast.Name)]
        made = _jit_by_call(scope, node.value)
        if made is not None and made[0] in scope.plain:
            function = scope.plain[made[0]]
            if not function.decorator_list:
                self.copy_function(function, function.name)
                scope.kernels.add(function.name)
                bound = [*dict.fromkeys([*names, function.name])]
                return ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store()) for name in bound], value=made[1])
        if len(names) != 1:
            return None
        name = names[0]
        if name.startswith("__"):
            return None
        parts = _dotted(node.value)
        if parts is not None and parts[0] in scope.bindings and len(parts) > 1:
            # An alias of the Triton language: `libdevice = tl.math`, `fn = tl.some_function`.
            try:
                _check_chain(scope, node.value, parts, "a module-level alias", module_ok=True)
            except KernelSourceError:
                pass
            else:
                if scope.resolve(parts) is not MISSING or scope.union:
                    bindings = [(module, (*path, *parts[1:])) for module, path in scope.bindings[parts[0]]]
                    if scope.union:
                        for binding in bindings:
                            scope.bind(name, binding)
                    else:
                        scope.bindings[name] = bindings
                    scope.constants.discard(name)
                    scope.values.pop(name, None)
                    return ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=node.value)
        if not _constant(scope, node.value):
            scope.constants.discard(name)
            scope.values[name] = _opaque_value(scope, node.value)
            return None
        scope.constants.add(name)
        scope.values[name] = _opaque_value(scope, node.value)
        return ast.Assign(targets=[ast.Name(id=name, ctx=ast.Store())], value=node.value)

    # Blocks and gates.
    def block(self, body: list[ast.stmt]) -> bool:
        """Keep what the statements of a module-level block hold; whether anything was kept."""
        kept = False
        for node in body:
            kept |= self.statement(node)
        return kept

    def statement(self, node: ast.stmt) -> bool:
        scope = self.scope
        kept: ast.stmt | None = None
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            kept = self.kept_import(node)
            if kept is None and scope.union:
                missing = self.missing_import(node)
                if missing is not None:
                    self.write(node.lineno, node.col_offset, f"raise ModuleNotFoundError({f'No module named {missing!r}'!r})")
                    return True
        elif isinstance(node, ast.FunctionDef):
            if self.jit_function(node, node.name):
                return True
            scope.plain[node.name] = node
        elif isinstance(node, ast.ClassDef):
            return self.jit_class(node, "")
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            kept = self.assignment(node)
        elif isinstance(node, ast.If):
            return self.gate_if(node, node.col_offset)
        elif isinstance(node, ast.Try):
            return self.gate_try(node)
        if kept is None:
            return False
        # One line where the statement began; the rest of its lines stay blank.
        self.write(node.lineno, node.col_offset, ast.unparse(ast.fix_missing_locations(kept)))
        return True

    def gate_if(self, node: ast.If, col: int) -> bool:
        """An `if` decided here (see the module docstring): the branch taken, under `if True:` on the
        line of its `if`, `elif` or `else`."""
        taken, how = _decide(self.scope, node.test)
        test = ast.unparse(node.test)
        self.gates.append((node.lineno, test, taken, how))
        if taken:
            branch, opener = node.body, node.lineno
        elif not node.orelse:
            return False
        elif len(node.orelse) == 1 and isinstance(node.orelse[0], ast.If) and self.lines[node.orelse[0].lineno - 1].lstrip().startswith("elif"):
            return self.gate_if(node.orelse[0], col)
        else:
            branch = node.orelse
            opener = self.keyword_line("else", col, (node.body[-1].end_lineno or node.lineno), self.statement_lines(node.orelse[0])[0])
        if self.statement_lines(branch[0])[0] <= opener:
            if any(isinstance(item, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef, ast.Assign)) for item in branch):
                raise KernelSourceError(opener, "the body of a module-level `if` or `else` must be on its own lines to be kept")
            return False
        if not self.block(branch):
            return False
        self.write(opener, col, f"if True:  # kgym: `{test}` {'true' if taken else 'false'} ({how})"[:400])
        return True

    def gate_try(self, node: ast.Try) -> bool:
        """A `try` kept whole, each part with its kept content (`pass` where none)."""
        col = node.col_offset
        self.scope.union += 1
        try:
            parts: list[tuple[int, str, list[ast.stmt]]] = [(node.lineno, "try:", node.body)]
            for handler in node.handlers:
                names = [part for part in ([handler.type] if not isinstance(handler.type, ast.Tuple) else handler.type.elts) if part is not None]
                known = all(isinstance(part, ast.Name) and part.id in HANDLED_EXCEPTIONS for part in names)
                caught = (ast.unparse(handler.type) if known else "Exception") if handler.type is not None else ""
                bound = f" as {handler.name}" if handler.name and not handler.name.startswith("__") else ""
                parts.append((handler.lineno, f"except {caught}{bound}:".replace("except :", "except:"), handler.body))
            previous = node.handlers[-1] if node.handlers else node.body[-1]
            for keyword, body in (("else", node.orelse), ("finally", node.finalbody)):
                if body:
                    parts.append(
                        (self.keyword_line(keyword, col, previous.end_lineno or previous.lineno, self.statement_lines(body[0])[0]), f"{keyword}:", body)
                    )
                    previous = body[-1]
            kept = False
            for opener, _text, body in parts:
                if self.statement_lines(body[0])[0] <= opener:
                    raise KernelSourceError(opener, "the body of a module-level `try` or `except` must be on its own lines to be kept")
                inner = self.block(body)
                kept |= inner
                if not inner:
                    first = body[0]
                    self.write(self.statement_lines(first)[0], first.col_offset, "pass")
            if not kept:
                for opener, _, body in parts:
                    for number in range(opener, (body[-1].end_lineno or opener) + 1):
                        self.out[number - 1] = ""
                return False
            for opener, text, _ in parts:
                self.write(opener, col, text)
            return True
        finally:
            self.scope.union -= 1


def extract_kernels(source: str) -> KernelsFile:
    """The kernels file of a submission (KernelSourceError when its jit code breaks a rule;
    SyntaxError when it does not parse)."""
    tree = ast.parse(source)
    extractor = _Extractor(source)
    extractor.block(tree.body)
    return KernelsFile(text="\n".join(extractor.out) + "\n", kernels=sorted(extractor.scope.kernels), gates=extractor.gates)
