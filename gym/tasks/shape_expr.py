"""Safe arithmetic over shape parameters, for a task's minimum bytes and FLOPs.

Expressions such as ``"2 * M * N * K"`` or ``"(M * N + N) * itemsize"`` are
parsed with `ast` and evaluated over a whitelist of node types: numbers,
names, + - * / // % ** and parentheses. Nothing else runs.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Iterable, Mapping
from typing import cast

_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}


# Bounds that keep `**` from running away on a hostile or mistyped expression.
MAX_EXPONENT = 64
MAX_POWER_BASE = 2**32


def _parse(expr: str) -> ast.expr:
    try:
        tree = ast.parse(expr, mode="eval")
    except SyntaxError as error:
        raise ValueError(f"not an arithmetic expression: {expr!r} ({error.msg})") from None
    for node in ast.walk(tree):
        if not isinstance(
            node,
            (ast.Expression, ast.BinOp, ast.UnaryOp, ast.USub, ast.UAdd, ast.Constant, ast.Name, ast.Load) + tuple(_BINARY),
        ):
            raise ValueError(f"{expr!r}: {type(node).__name__} is not allowed (only numbers, names, + - * / // % **)")
        if isinstance(node, ast.Constant) and (isinstance(node.value, bool) or not isinstance(node.value, (int, float))):
            raise ValueError(f"{expr!r}: only numeric constants are allowed")
    return tree.body


def names_in(expr: str) -> set[str]:
    return {node.id for node in ast.walk(_parse(expr)) if isinstance(node, ast.Name)}


def check_expression(expr: str, allowed_names: Iterable[str] | None = None, field: str = "expression") -> None:
    """Raise ValueError when `expr` is not safe arithmetic over `allowed_names`."""
    names = names_in(expr)
    if allowed_names is not None:
        unknown = names - set(allowed_names)
        if unknown:
            raise ValueError(f"{field} uses unknown names {sorted(unknown)}; allowed: {sorted(allowed_names)}")


def evaluate(expr: str, values: Mapping[str, float]) -> float:
    """Evaluate `expr` with names bound to `values`."""

    def walk(node: ast.expr) -> float:
        if isinstance(node, ast.Constant):
            return cast(float, node.value)  # _parse admits int and float constants only
        if isinstance(node, ast.Name):
            if node.id not in values:
                raise ValueError(f"{expr!r}: no value for {node.id!r}")
            return values[node.id]
        if isinstance(node, ast.UnaryOp):
            operand = walk(node.operand)
            return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, ast.BinOp):
            left, right = walk(node.left), walk(node.right)
            if isinstance(node.op, ast.Pow) and (abs(right) > MAX_EXPONENT or abs(left) > MAX_POWER_BASE):
                raise ValueError(f"{expr!r}: power {left:g} ** {right:g} is out of range")
            return _BINARY[type(node.op)](left, right)
        raise ValueError(f"{expr!r}: unsupported node {type(node).__name__}")

    return float(walk(_parse(expr)))
