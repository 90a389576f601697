"""One KernelBench problem file: its size constants, its Model's signatures, and the module
re-run with other sizes.

A problem is plain Python: module-level constants (`batch_size = 16`), `class
Model(nn.Module)`, `get_inputs()` and `get_init_inputs()`. Its sizes are the
module-level names bound to an int literal; `instantiate` re-runs the file with
some of them replaced (in the source, so constants derived from them, and the
two functions, see the new values).
"""

from __future__ import annotations

import ast
import hashlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from gym.errors import ProblemError


@dataclass(frozen=True)
class ProblemFile:
    """What the importer reads off a problem's source without running it."""

    source: str
    # Module-level names bound to an int literal, in source order, with their values.
    sizes: dict[str, int]
    # Model.forward's parameters after self (a *args forward is refused).
    forward_params: list[str]
    # Model.__init__'s parameters after self.
    init_params: list[str]


_FOLDABLE = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b, ast.FloorDiv: lambda a, b: a // b}


def _int_literal(node: ast.expr) -> int | None:
    """The value of an int literal, or of arithmetic over int literals alone (`16384 * 2`), on one
    line; None for anything else (a name, a float, a call)."""
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if node.lineno != node.end_lineno:
        return None
    if isinstance(node, ast.BinOp) and type(node.op) in _FOLDABLE:
        left, right = _int_literal(node.left), _int_literal(node.right)
        if left is None or right is None or (isinstance(node.op, ast.FloorDiv) and right == 0):
            return None
        return int(_FOLDABLE[type(node.op)](left, right))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow):
        base, exponent = _int_literal(node.left), _int_literal(node.right)
        if base is None or exponent is None or not 0 <= exponent <= 64 or abs(base) > 1 << 32:
            return None
        return int(base**exponent)
    return None


def _assignments(tree: ast.Module) -> list[tuple[ast.expr, ast.expr]]:
    found: list[tuple[ast.expr, ast.expr]] = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            found.append((node.targets[0], node.value))
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            found.append((node.target, node.value))
    return found


def size_literals(tree: ast.Module) -> list[tuple[str, ast.expr]]:
    """Every module-level int literal a size may live in, keyed by the name it gets:
    `n = 16` is "n"; `a, b = 32, 64` are "a" and "b"; `sizes = [400, 800]` (a list or
    tuple of int literals) is "sizes_0" and "sizes_1". A name bound again later is
    dropped (the last binding is not a literal the rewrite could own)."""
    # Keys by the variable they belong to (a list variable owns several).
    owned: dict[str, list[tuple[str, ast.expr]]] = {}
    for target, value in _assignments(tree):
        if isinstance(target, ast.Name):
            if _int_literal(value) is not None:
                owned[target.id] = [(target.id, value)]
            elif isinstance(value, (ast.List, ast.Tuple)) and value.elts and all(_int_literal(item) is not None for item in value.elts):
                owned[target.id] = [(f"{target.id}_{index}", item) for index, item in enumerate(value.elts)]
            else:
                owned.pop(target.id, None)
        elif isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts):
            for name, item in zip(target.elts, value.elts):
                if isinstance(name, ast.Name):
                    if _int_literal(item) is not None:
                        owned[name.id] = [(name.id, item)]
                    else:
                        owned.pop(name.id, None)
    return [pair for pairs in owned.values() for pair in pairs]


def _method_params(cls: ast.ClassDef, name: str, named: bool = True) -> list[str] | None:
    """A method's parameter names after self; `named`: refuse *args/**kwargs (forward's inputs become kernel parameters)."""
    for node in cls.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            if named and (node.args.vararg is not None or node.args.kwarg is not None):
                raise ProblemError(f"Model.{name} takes *args/**kwargs: its inputs cannot be named")
            names = [arg.arg for arg in [*node.args.posonlyargs, *node.args.args]]
            return names[1:]
    return None


def parse_problem(source: str) -> ProblemFile:
    """The sizes and signatures of a problem; ProblemError when it is not a KernelBench problem."""
    try:
        tree = ast.parse(source)
    except SyntaxError as error:
        raise ProblemError(f"not valid Python: {error.msg} (line {error.lineno})") from None
    names = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.ClassDef))}
    missing = [name for name in ("Model", "get_inputs", "get_init_inputs") if name not in names]
    if missing:
        raise ProblemError(f"defines no {', '.join(missing)}")
    model = next(node for node in tree.body if isinstance(node, ast.ClassDef) and node.name == "Model")
    forward = _method_params(model, "forward")
    if forward is None:
        raise ProblemError("Model defines no forward()")
    init = _method_params(model, "__init__", named=False) or []
    sizes = {key: int(_int_literal(node) or 0) for key, node in size_literals(tree)}
    return ProblemFile(source=source, sizes=sizes, forward_params=forward, init_params=init)


def with_sizes(source: str, sizes: dict[str, int]) -> str:
    """`source` with each named size literal (see size_literals) replaced, every other byte kept."""
    tree = ast.parse(source)
    literals = dict(size_literals(tree))
    unknown = set(sizes) - set(literals)
    if unknown:
        raise ProblemError(f"no module-level int constant named {', '.join(sorted(unknown))}")
    lines = source.splitlines(keepends=True)
    edits = sorted(
        ((literals[key].lineno - 1, literals[key].col_offset, literals[key].end_col_offset or 0, repr(int(value))) for key, value in sizes.items()),
        reverse=True,
    )
    for line, start, end, text in edits:
        encoded = lines[line].encode("utf-8")
        # ast offsets are in UTF-8 bytes.
        lines[line] = (encoded[:start] + text.encode() + encoded[end:]).decode("utf-8")
    return "".join(lines)


_MODULES: dict[tuple[str, tuple[tuple[str, int], ...]], ModuleType] = {}


def instantiate(source: str, sizes: dict[str, int], label: str) -> ModuleType:
    """The problem run as a module with `sizes` in place of its own (cached by source and sizes)."""
    key = (hashlib.sha256(source.encode()).hexdigest(), tuple(sorted(sizes.items())))
    cached = _MODULES.get(key)
    if cached is not None:
        return cached
    text = with_sizes(source, sizes)
    module = ModuleType(f"kgym_kernelbench_{key[0][:12]}")
    module.__file__ = f"<kernelbench {label}>"
    try:
        exec(compile(text, module.__file__, "exec"), module.__dict__)
    except ModuleNotFoundError as error:
        hint = " (pip install 'kernel-gym[kernelbench]')" if error.name == "einops" else ""
        raise ProblemError(f"the problem imports {error.name}, which is not installed{hint}") from error
    except Exception as error:
        raise ProblemError(f"running the problem at {sizes} failed: {type(error).__name__}: {error}") from error
    _MODULES[key] = module
    return module


def init_inputs(module: ModuleType) -> list[Any]:
    values = module.get_init_inputs()
    return list(values) if isinstance(values, (list, tuple)) else [values]


def forward_inputs(module: ModuleType) -> list[Any]:
    values = module.get_inputs()
    return list(values) if isinstance(values, (list, tuple)) else [values]
