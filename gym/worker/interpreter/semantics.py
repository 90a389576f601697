"""Make the CPU interpreter mean what the GPU compiler means.

Triton's interpreter runs a kernel's body as Python. Where Python and the compiler read
the same code differently, honest code silently does something else on CPU:

- `a and b`, `a or b`, `not a` on tensors: Python picks one operand (a block tensor is
  always truthy), so a mask is dropped and a store can land out of bounds; the compiler
  means logical and / or / not (`&`, `|`, `~` on int1). The kernel's AST is rewritten to
  the compiler's rules: every operand evaluated in order, short-circuiting only on a
  falsy (truthy for `or`) constexpr or Python value, tensors combined with
  logical_and / logical_or.
- `if` / `while` / `x if c else y` on a block tensor, and chained comparisons
  (`a < b < c`): the compiler refuses them; the interpreter took them as True. They raise.
- a float scalar argument is a Python float, so `eps.to(tl.float32)` fails: float
  arguments become fp32 scalar tensors, as the compiler types them.
- `tl.dot` on float32 ignores `input_precision`: the default ("tf32", NVIDIA's) rounds
  both operands to TF32 (10-bit mantissa, round to nearest even) before the product, as
  tensor cores do; "ieee" and "tf32x3" stay exact; "bf16x3" / "bf16x6" (allowed on NVIDIA)
  are emulated by splitting the operands into bfloat16 parts.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

import numpy as np

Array = Any


def _round_low_bits(data: Array, dropped: int) -> Array:
    """float32 values with the low `dropped` mantissa bits rounded off (to nearest, ties to even); inf and NaN unchanged."""
    bits = np.ascontiguousarray(data, dtype=np.float32).view(np.uint32)
    rounded = bits >> np.uint32(dropped)
    rounded &= np.uint32(1)
    rounded += np.uint32((1 << (dropped - 1)) - 1)
    rounded += bits
    rounded &= np.uint32(~((1 << dropped) - 1) & 0xFFFFFFFF)
    special = (bits & np.uint32(0x7F800000)) == np.uint32(0x7F800000)
    if special.any():
        rounded[special] = bits[special]
    return rounded.view(np.float32)


def round_to_tf32(data: Array) -> Array:
    """float32 values rounded to TF32 (1 sign, 8 exponent, 10 mantissa bits): round to nearest even on the low 13 bits."""
    return _round_low_bits(data, 13)


def round_to_bf16(data: Array) -> Array:
    """float32 values rounded to bfloat16 precision (kept as float32), round to nearest even on the low 16 bits."""
    return _round_low_bits(data, 16)


def _bf16_parts(data: Array, count: int) -> list[Array]:
    parts = []
    rest = np.asarray(data, dtype=np.float32)
    for _ in range(count):
        part = round_to_bf16(rest)
        parts.append(part)
        rest = (rest - part).astype(np.float32)
    return parts


def bf16_split_dot(a: Array, b: Array, acc: Array, passes: int) -> Array:
    """a @ b + acc the way bf16x3 (passes=3) / bf16x6 (passes=6) do: bfloat16 parts, float32 accumulation, small terms first."""
    a_parts = _bf16_parts(a, 2 if passes == 3 else 3)
    b_parts = _bf16_parts(b, 2 if passes == 3 else 3)
    terms = [(1, 0), (0, 1), (0, 0)] if passes == 3 else [(2, 0), (0, 2), (1, 1), (1, 0), (0, 1), (0, 0)]
    out = np.asarray(acc, dtype=np.float32).copy()
    for i, j in terms:
        out = (out + np.matmul(a_parts[i], b_parts[j], dtype=np.float32)).astype(np.float32)
    return out


# --- `and` / `or` / `not` / conditions, rewritten to the compiler's rules -------------------

_TENSOR: list[Any] = []  # triton.language.tensor, set by install()
_SEMANTIC: list[Any] = []  # the interpreter's semantic, set by install()


def _combine(method: str, tensors: list[Any]) -> Any:
    result = tensors[-1]
    for tensor in reversed(tensors[:-1]):
        result = getattr(_SEMANTIC[0], method)(tensor, result)
    return result


def kgym_and(first: Any, *rest: Callable[[], Any]) -> Any:
    """`a and b and ...` as the Triton compiler evaluates it."""
    tensor_type = _TENSOR[0]
    tensors = []
    value = first
    index = 0
    while True:
        if isinstance(value, tensor_type):
            tensors.append(value)
        elif not value:
            return value
        if index == len(rest):
            break
        value = rest[index]()
        index += 1
    return _combine("logical_and", tensors) if tensors else value


def kgym_or(first: Any, *rest: Callable[[], Any]) -> Any:
    """`a or b or ...` as the Triton compiler evaluates it."""
    tensor_type = _TENSOR[0]
    tensors = []
    value = first
    index = 0
    while True:
        if isinstance(value, tensor_type):
            tensors.append(value)
        elif value:
            return value
        if index == len(rest):
            break
        value = rest[index]()
        index += 1
    return _combine("logical_or", tensors) if tensors else value


def kgym_not(value: Any) -> Any:
    """`not a`: logical not of a tensor, as the compiler means it."""
    if isinstance(value, _TENSOR[0]):
        return _SEMANTIC[0].not_(value)
    return not value


def kgym_condition(value: Any, construct: str) -> Any:
    """The test of an `if` / `while` / conditional expression: a block tensor with more than one element is refused, as the compiler does."""
    if isinstance(value, _TENSOR[0]) and value.type.is_block() and value.type.numel != 1:
        raise ValueError(
            f"`{construct}` on a block tensor of shape {[int(dim) for dim in value.shape]}: the Triton compiler refuses this on a GPU "
            "('Boolean value of Tensor with more than one value is ambiguous'); reduce it first (e.g. tl.max(...)) or use tl.where"
        )
    return value


def kgym_chained_comparison(source: str) -> Any:
    raise ValueError(
        f"chained comparison `{source}`: the Triton compiler refuses it on a GPU ('simultaneous multiple comparison is not supported'); write (a < b) & (b < c)"
    )


HELPERS: dict[str, Callable[..., Any]] = {
    "_kgym_and": kgym_and,
    "_kgym_or": kgym_or,
    "_kgym_not": kgym_not,
    "_kgym_condition": kgym_condition,
    "_kgym_chained_comparison": kgym_chained_comparison,
}


def _call(helper: str, args: list[ast.expr], like: ast.AST) -> ast.Call:
    return ast.copy_location(ast.Call(func=ast.Name(id=helper, ctx=ast.Load()), args=args, keywords=[]), like)


def _thunk(value: ast.expr) -> ast.Lambda:
    arguments = ast.arguments(posonlyargs=[], args=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])
    return ast.copy_location(ast.Lambda(args=arguments, body=value), value)


def _binds_names(node: ast.AST) -> bool:
    """An operand that assigns (`:=`) must not move into a lambda (it would bind there)."""
    return any(isinstance(child, ast.NamedExpr) for child in ast.walk(node))


def make_transformer(base: type) -> Any:
    """The interpreter's ASTTransformer (`base`), plus the compiler's meaning of the constructs above."""

    class CompilerSemantics(base):  # type: ignore[misc]
        def visit_Assign(self, node: ast.Assign) -> Any:
            node.value = self.visit(node.value)
            return super().visit_Assign(node)

        def visit_BoolOp(self, node: ast.BoolOp) -> Any:
            self.generic_visit(node)
            if any(_binds_names(value) for value in node.values[1:]):
                return node
            helper = "_kgym_and" if isinstance(node.op, ast.And) else "_kgym_or"
            return _call(helper, [node.values[0], *(_thunk(value) for value in node.values[1:])], node)

        def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
            self.generic_visit(node)
            if isinstance(node.op, ast.Not):
                return _call("_kgym_not", [node.operand], node)
            return node

        def _test(self, node: ast.If | ast.While | ast.IfExp, construct: str) -> Any:
            self.generic_visit(node)
            node.test = _call("_kgym_condition", [node.test, ast.Constant(value=construct)], node.test)
            return node

        def visit_If(self, node: ast.If) -> Any:
            return self._test(node, "if")

        def visit_While(self, node: ast.While) -> Any:
            return self._test(node, "while")

        def visit_IfExp(self, node: ast.IfExp) -> Any:
            return self._test(node, "x if condition else y")

        def visit_Compare(self, node: ast.Compare) -> Any:
            if len(node.ops) > 1:
                return _call("_kgym_chained_comparison", [ast.Constant(value=ast.unparse(node))], node)
            self.generic_visit(node)
            return node

    return CompilerSemantics()


def install(patch: Callable[[Any, str, Any], None]) -> None:
    """Rewrite interpreted kernels to the compiler's semantics; float scalars as fp32; TF32 dots."""
    import dataclasses

    import triton.language as tl
    from triton._C.libtriton import ir
    from triton.runtime import interpreter

    _TENSOR[:] = [tl.tensor]
    _SEMANTIC[:] = [interpreter.interpreter_semantic]

    # The AST rewrite, and the helpers it calls, visible from the rewritten function's globals.
    rewriter = interpreter.FunctionRewriter
    patch(rewriter, "ast_transformer", make_transformer(interpreter.ASTTransformer))
    compile_and_exec = rewriter._compile_and_exec

    def _compile_and_exec(self: Any, transformed_ast: Any) -> Any:
        self.fn.__globals__.update(HELPERS)
        return compile_and_exec(self, transformed_ast)

    patch(rewriter, "_compile_and_exec", _compile_and_exec)

    # Float scalar arguments: fp32 scalar tensors, as the compiler types them ("fp32").
    implicit_cvt = interpreter._implicit_cvt
    handle_class = interpreter.TensorHandle
    float32 = tl.float32

    def _implicit_cvt(arg: Any) -> Any:
        if isinstance(arg, float):
            return tl.tensor(handle_class(np.array([arg], dtype=np.float32), float32), float32)
        return implicit_cvt(arg)

    patch(interpreter, "_implicit_cvt", _implicit_cvt)

    # tl.dot's input precision on float32 operands.
    builder = interpreter.interpreter_builder
    allowed = tuple(builder.options.allowed_dot_input_precisions)
    extra = tuple(p for p in ("bf16x3", "bf16x6") if p not in allowed)
    if extra:
        builder.options = dataclasses.replace(builder.options, allowed_dot_input_precisions=allowed + extra)
    create_dot = interpreter.InterpreterBuilder.create_dot
    tf32, bf16x3, bf16x6 = ir.INPUT_PRECISION.TF32, ir.INPUT_PRECISION.BF16x3, ir.INPUT_PRECISION.BF16x6

    def _create_dot(self: Any, a: Any, b: Any, d: Any, input_precision: Any, max_num_imprecise_acc: Any) -> Any:
        if a.dtype == float32 and b.dtype == float32:
            if input_precision == tf32:
                a = handle_class(round_to_tf32(a.data), a.dtype)
                b = handle_class(round_to_tf32(b.data), b.dtype)
            elif input_precision in (bf16x3, bf16x6) and d.data.dtype == np.float32:
                passes = 3 if input_precision == bf16x3 else 6
                return handle_class(bf16_split_dot(a.data, b.data, d.data, passes), d.dtype.scalar)
        return create_dot(self, a, b, d, input_precision, max_num_imprecise_acc)

    patch(interpreter.InterpreterBuilder, "create_dot", _create_dot)
