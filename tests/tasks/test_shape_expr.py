"""Shape expressions: plain arithmetic over named shape parameters, nothing else."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gym.tasks.shape_expr import check_expression, evaluate, names_in

VALUES = {"M": 7, "N": 12, "K": 5, "itemsize": 4}


@pytest.mark.parametrize(
    ("expr", "expected"),
    [
        ("2 * M * N * K", 2 * 7 * 12 * 5),
        ("(M * N + N) * itemsize", (7 * 12 + 12) * 4),
        ("M ** 2 - -N", 7**2 + 12),
        ("+M - K", 2),
        ("N / 8", 1.5),
        ("N // 5", 2),
        ("N % 5", 2),
        ("2.5 * K", 12.5),
        ("1e3", 1000.0),
        ("((M))", 7),
    ],
)
def test_evaluate(expr: str, expected: float) -> None:
    result = evaluate(expr, VALUES)
    assert isinstance(result, float)
    assert result == expected


def test_names_in() -> None:
    assert names_in("2 * M * N * K") == {"M", "N", "K"}
    assert names_in("(M * N + N) * itemsize") == {"M", "N", "itemsize"}
    assert names_in("42") == set()


def test_evaluate_needs_every_name() -> None:
    with pytest.raises(ValueError, match="no value for 'K'"):
        evaluate("M * K", {"M": 1})


def test_check_expression_allowed_names() -> None:
    check_expression("M * N * itemsize", allowed_names={"M", "N", "itemsize"})
    check_expression("Q * Z")  # no name list: names are not checked
    with pytest.raises(ValueError, match=r"min_bytes uses unknown names \['Q', 'Z'\]") as caught:
        check_expression("M * Q + Z", allowed_names=["M", "N"], field="min_bytes")
    assert "'M'" in str(caught.value) and "'N'" in str(caught.value)


@pytest.mark.parametrize(
    ("expr", "fragment"),
    [
        ("len(M)", "Call"),
        ("__import__('os').system('true')", "not allowed"),
        ("M.bit_length", "Attribute"),
        ("(1).__class__", "Attribute"),
        ("'abc'", "only numeric constants"),
        ("b'abc'", "only numeric constants"),
        ("1j * M", "only numeric constants"),
        ("None", "only numeric constants"),
        ("...", "only numeric constants"),
        ("lambda: 1", "Lambda"),
        ("M[0]", "Subscript"),
        ("M < N", "Compare"),
        ("M and N", "BoolOp"),
        ("not M", "Not"),
        ("~M", "Invert"),
        ("M << 1", "LShift"),
        ("M & N", "BitAnd"),
        ("M @ N", "MatMult"),
        ("M if N else K", "IfExp"),
        ("(M := 3)", "NamedExpr"),
        ("[M, N]", "List"),
        ("M, N", "Tuple"),
        ("{M: N}", "Dict"),
        ("[m for m in M]", "ListComp"),
        ("f'{M}'", "JoinedStr"),
    ],
)
def test_rejects_anything_but_arithmetic(expr: str, fragment: str) -> None:
    for call in (lambda: check_expression(expr), lambda: evaluate(expr, VALUES), lambda: names_in(expr)):
        with pytest.raises(ValueError, match="not allowed|only numeric constants") as caught:
            call()
        assert fragment in str(caught.value)


@pytest.mark.parametrize("expr", ["", "M +", "M; N", "import os", "M = 3", "2 * (M"])
def test_rejects_syntax_errors(expr: str) -> None:
    with pytest.raises(ValueError, match="not an arithmetic expression"):
        check_expression(expr)
    with pytest.raises(ValueError, match="not an arithmetic expression"):
        evaluate(expr, VALUES)


# Random arithmetic: evaluate() agrees with Python itself on the same text.
_leaf = st.one_of(st.integers(0, 50).map(str), st.sampled_from(sorted(VALUES)))


def _extend(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(children, st.sampled_from(["+", "-", "*"]), children).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(children, st.sampled_from(["/", "//", "%"]), st.integers(1, 9)).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(_leaf, st.integers(0, 3)).map(lambda t: f"({t[0]} ** {t[1]})"),
        children.map(lambda c: f"-{c}"),
        children.map(lambda c: f"+{c}"),
    )


@settings(max_examples=200, deadline=None)
@given(expr=st.recursive(_leaf, _extend, max_leaves=12), values=st.fixed_dictionaries({k: st.integers(1, 100) for k in VALUES}))
def test_evaluate_agrees_with_python(expr: str, values: dict[str, int]) -> None:
    expected = eval(expr, {"__builtins__": {}}, dict(values))  # test oracle on generated arithmetic
    assert evaluate(expr, values) == pytest.approx(float(expected), rel=1e-12, abs=1e-12)
    assert names_in(expr) <= set(VALUES)
    check_expression(expr, allowed_names=VALUES)
