"""The kernels file (gym.grading.intake.kernel_source): a submission's jit functions and constants alone, at
their own line numbers; jit code that is not the Triton language refused with its line."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

import pytest
import triton.language as tl
from triton.runtime.jit import KernelInterface

from gym.errors import KernelSourceError
from gym.grading.intake.kernel_source import extract_kernels
from gym.worker.tape import code_identity

ROOT = Path(__file__).resolve().parents[2]

SOURCE = '''"""doc"""
import functools
import numpy as np
import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

BLOCK = 128
SCALE = tl.constexpr(0.5)
LOG2E = tl.constexpr(1.4426950408889634 * 2)
HELPER_TABLE = np.arange(4)
DEVICE_BLOCK = 256 if torch.cuda.is_available() else 64


@triton.jit
def _helper(x):
    return x * SCALE


@functools.lru_cache(maxsize=None)
def settings(n):
    return triton.next_power_of_2(n)


@triton.autotune(configs=[triton.Config({"B": 64})], key=["n"])
@triton.jit(do_not_specialize=["n"])
def _kernel(x_ptr, out_ptr, n, B: tl.constexpr):
    offs = tl.program_id(0) * B + tl.arange(0, B)
    tl.store(out_ptr + offs, _helper(tl.load(x_ptr + offs, mask=offs < n)), mask=offs < n)


class Kernels:
    """namespace"""

    OTHER = 3

    @triton.jit
    def inner(x_ptr, n):
        tl.store(x_ptr, libdevice.exp(tl.load(x_ptr)))

    def python(self):
        return 1


def kernel(x):
    return x
'''


def test_only_jit_functions_imports_and_constant_expressions_are_kept_on_their_lines() -> None:
    kernels = extract_kernels(SOURCE)
    assert kernels.kernels == ["Kernels.inner", "_helper", "_kernel"]
    lines = kernels.text.splitlines()
    original = SOURCE.splitlines()
    # Every kept line is where it was (so Triton's errors name the submission's lines).
    for number, line in enumerate(lines):
        if line.strip() and not line.lstrip().startswith(("@", "class ", "import ", "from ")) and "=" not in line.split("(")[0]:
            assert line == original[number], (number, line)
    text = kernels.text
    assert "import numpy" not in text and "import functools" not in text and "import torch" not in text
    assert "HELPER_TABLE" not in text and "DEVICE_BLOCK" not in text and "def settings" not in text and "def kernel" not in text
    assert "BLOCK = 128" in text and "SCALE = tl.constexpr(0.5)" in text and "LOG2E" in text
    assert "autotune" not in text and "@triton.jit(do_not_specialize=['n'])" in text
    assert "class Kernels:" in text and "OTHER" not in text and "def python" not in text
    compile(text, "kernels.py", "exec")


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ("tl.store(p, tl.load(p).handle.data.sum())", "`handle`"),
        ("tl.store(p, getattr(tl, 'load')(p))", "`getattr`"),
        ("tl.store(p, tl.load(p)._value)", "`_value`"),
        ("import numpy\n    tl.store(p, 1)", "`Import`"),
        ("tl.store(p, __builtins__['len'](p))", "`__builtins__`"),
        ("tl.store(p, triton.runtime.interpreter.np.add(tl.load(p), 1))", "`triton.runtime`"),
        ("m = tl\n    tl.store(p, 1)", "only be used as"),
        ("tl.store(p, tl.core.builtins.open(p))", "`tl.core.builtins` is not part of the Triton language"),
    ],
)
def test_jit_code_that_is_not_the_triton_language_is_refused_with_its_line(body: str, words: str) -> None:
    source = f"import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(p):\n    {body}\n"
    with pytest.raises(KernelSourceError, match="line 7") as refused:
        extract_kernels(source)
    assert words in str(refused.value)


def test_defaults_and_annotations_are_constants_or_triton_types() -> None:
    with pytest.raises(KernelSourceError, match="default value must be a constant"):
        extract_kernels("import triton\n@triton.jit\ndef k(p, N=__import__('os').getpid()):\n    pass\n")
    # An annotation that is not a Triton or builtin type is kept as the string of its source: nothing runs.
    evil = extract_kernels("import triton\n@triton.jit\ndef k(p, N: __import__('os').getpid()):\n    pass\n")
    assert "def k(p, N: \"__import__('os').getpid()\"):" in evil.text
    kept = extract_kernels("import triton\nimport triton.language as tl\n@triton.jit\ndef k(p, N: tl.constexpr = 4, M: 'constexpr' = 2):\n    pass\n")
    assert kept.kernels == ["k"]


def test_locals_named_like_builtins_are_the_functions_own() -> None:
    source = "import triton\nimport triton.language as tl\n@triton.jit\ndef k(p, open):\n    vars = tl.load(p)\n    tl.store(p, vars + open)\n"
    assert extract_kernels(source).kernels == ["k"]


def test_every_shipped_solution_and_honest_file_extracts() -> None:
    from gym.grading.intake.dsl import submission_dsl

    files = sorted((ROOT / "tasks").glob("*/*/solution*.py")) + sorted(
        path for path in (ROOT / "tests" / "honest").glob("*.py") if not path.name.startswith("test_")
    )
    assert len(files) > 90
    for path in files:
        source = path.read_text()
        kernels = extract_kernels(source)
        # A Helion file's jit functions are the ones Helion generates (staged from the sandbox): its own file may have none.
        assert kernels.kernels or submission_dsl(source) == "helion", path.name
        compile(kernels.text, str(path), "exec")


def _load(text: str, tmp_path: Path, name: str) -> Any:
    """A module from source text, loaded from a file (as the witness loads the kernels file)."""
    path = tmp_path / f"{name}.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _same_kernels(source: str, tmp_path: Path) -> Any:
    """Extract, load both the submission and its kernels file, and check that every kept jit function has
    the submission's code identity and reads the same globals; the kernels module."""
    kernels = extract_kernels(source)
    original = _load(source, tmp_path, "original_submission")
    kept = _load(kernels.text, tmp_path, "kernels_file")
    for qualname in kernels.kernels:
        a, b = original, kept
        for part in qualname.split("."):
            a, b = vars(a)[part], vars(b)[part]
        function = a.__func__ if isinstance(a, staticmethod) else a.fn
        while hasattr(function, "fn"):
            function = function.fn
        assert isinstance(b, KernelInterface), qualname
        assert code_identity(function) == code_identity(b.fn), qualname
        for name in function.__code__.co_names:
            if name in function.__globals__ and not isinstance(function.__globals__[name], KernelInterface):
                assert b.fn.__globals__[name] is function.__globals__[name] or b.fn.__globals__[name] == function.__globals__[name], (qualname, name)
    return kept


FLAGGEMS_ANNOTATIONS = """import torch
import triton
from triton import language as tl


@triton.jit
def program_id(
    axis: int,
) -> tl.tensor:
    return tl.program_id(axis).to(tl.int64)


@triton.jit
def scale(x: tl.tensor, factor: float = 2.0, shape: tuple[int, int] = (1, 2), t: torch.Tensor = None, o: "tl.constexpr" = 1) -> tl.tensor:
    return x * factor


@triton.jit
def k(X, n: tl.int32, BLOCK: tl.constexpr):
    offs = program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(X + offs, scale(tl.load(X + offs, mask=offs < n)), mask=offs < n)
"""


def test_annotations_of_any_kind_are_kept_or_made_strings(tmp_path: Path) -> None:
    kernels = extract_kernels(FLAGGEMS_ANNOTATIONS)
    assert kernels.kernels == ["k", "program_id", "scale"]
    # Triton and builtin types as written (Triton reads them); torch.Tensor as the string of its source.
    assert "    axis: int,\n) -> tl.tensor:" in kernels.text
    assert "t: 'torch.Tensor' = None" in kernels.text and "shape: tuple[int, int] = (1, 2)" in kernels.text
    assert "def k(X, n: tl.int32, BLOCK: tl.constexpr):" in kernels.text
    kept = _same_kernels(FLAGGEMS_ANNOTATIONS, tmp_path)
    assert [param.annotation for param in kept.k.params] == ["", "i32", "constexpr"]


def test_future_annotations_keep_every_annotation_as_written() -> None:
    source = "from __future__ import annotations\nimport torch\nimport triton\n\n\n@triton.jit\ndef k(p: torch.Tensor) -> Weird[1]:\n    pass\n"
    kernels = extract_kernels(source)
    assert kernels.text.splitlines()[0] == "from __future__ import annotations"
    assert "def k(p: torch.Tensor) -> Weird[1]:" in kernels.text


JIT_BY_CALL = """import triton
import triton.language as tl


def _add_impl(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)


def _scale_impl(x_ptr, n):
    tl.store(x_ptr, tl.load(x_ptr) * n)


def _tuned_impl(x_ptr, n, BLOCK: tl.constexpr):
    tl.store(x_ptr, n)


def python_helper(x):
    return x


add_kernel = triton.jit(_add_impl)
scale_kernel = triton.jit(do_not_specialize=["n"])(_scale_impl)
tuned_kernel = triton.autotune(configs=[triton.Config({"BLOCK": 16})], key=["n"])(triton.jit(_tuned_impl))
"""


def test_jit_applied_by_call_is_found_under_the_name_its_code_carries(tmp_path: Path) -> None:
    kernels = extract_kernels(JIT_BY_CALL)
    assert kernels.kernels == ["_add_impl", "_scale_impl", "_tuned_impl"]
    lines = kernels.text.splitlines()
    assert lines[21] == "add_kernel = _add_impl = triton.jit(_add_impl)"
    assert lines[22] == "scale_kernel = _scale_impl = triton.jit(do_not_specialize=['n'])(_scale_impl)"
    assert lines[23] == "tuned_kernel = _tuned_impl = triton.jit(_tuned_impl)"
    assert "python_helper" not in kernels.text
    kept = _load(kernels.text, tmp_path, "kernels_by_call")
    assert kept.add_kernel is kept._add_impl and isinstance(kept._add_impl, KernelInterface)
    assert kept._scale_impl.do_not_specialize == ["n"]


VERSION_GATES = """import operator

import triton
import triton.language as tl
from packaging.version import Version

if Version(triton.__version__) >= Version("3.0.0"):
    from triton.language.extra import libdevice
else:
    libdevice = tl.math

if tuple(map(int, triton.__version__.split(".")[:2])) < (2, 1):

    @triton.jit
    def act(x):
        return x / (1.0 + tl.exp(-x))

elif hasattr(tl, "sigmoid"):

    @triton.jit
    def act(x):
        return x * tl.sigmoid(x)

else:
    raise RuntimeError("no sigmoid")

try:
    from triton.language.extra.libdevice import rsqrt
except ModuleNotFoundError:
    from triton.language.extra.cuda.libdevice import rsqrt

try:
    import some_vendor_extension_that_is_not_installed
    pair = tl.pair_uniform_to_normal
except ImportError:

    @triton.jit
    def pair(u1, u2):
        return u1, u2


@triton.jit
def k(X, eps):
    tl.store(X, act(libdevice.exp(rsqrt(tl.load(X) + eps))))
"""


def test_version_gates_keep_their_structure_and_take_the_branch_triton_would(tmp_path: Path) -> None:
    kernels = extract_kernels(VERSION_GATES)
    assert kernels.kernels == ["act", "k", "pair"]
    text = kernels.text
    assert "if True:  # kgym: `Version(triton.__version__) >= Version('3.0.0')` true (evaluated)" in text
    assert "libdevice = tl.math" not in text and "    from triton.language.extra import libdevice" in text
    assert "x * tl.sigmoid(x)" in text and "tl.exp(-x)" not in text and "RuntimeError" not in text
    assert "    raise ModuleNotFoundError(\"No module named 'some_vendor_extension_that_is_not_installed'\")" in text
    assert [(line, taken, how) for line, _, taken, how in kernels.gates] == [(7, True, "evaluated"), (12, False, "evaluated"), (18, True, "evaluated")]
    kept = _same_kernels(VERSION_GATES, tmp_path)
    import triton.language.extra.libdevice as libdevice

    assert kept.rsqrt is libdevice.rsqrt and kept.libdevice is libdevice


def test_a_gate_that_calls_the_submissions_code_is_guessed_as_a_gpu_would_answer() -> None:
    source = """import operator
import triton
from mylib import compare_version, is_npu_available, is_hip

HAS_TLE = has_triton_tle(3, 6, 0)

if compare_version("triton", operator.ge, "3.0.0") and not is_npu_available():
    from triton.language.extra.libdevice import rsqrt
else:
    from triton.language.math import rsqrt

if is_hip():
    from triton.language.extra.hip import libdevice
else:
    from triton.language.extra.cuda import libdevice

if HAS_TLE:
    import triton.experimental.tle.language as tle
"""
    kernels = extract_kernels(source)
    assert [taken for _, _, taken, _ in kernels.gates] == [True, False, False]
    assert "compare_version('triton', operator.ge, '3.0.0')` read as True" in kernels.gates[0][3]
    assert "from triton.language.extra.cuda import libdevice" in kernels.text and "tle" not in kernels.text


def test_a_gated_binding_is_checked_under_every_branch_a_try_may_take() -> None:
    source = """import triton
try:
    import triton.language as lang
except ImportError:
    from triton import runtime as lang


@triton.jit
def k(p):
    lang.store(p, 1)
"""
    with pytest.raises(KernelSourceError, match="line 10: .*`lang` is not part of the Triton language"):
        extract_kernels(source)


def test_static_methods_helpers_constexpr_globals_tuples_defaults_do_not_specialize(tmp_path: Path) -> None:
    source = """import triton
import triton.language as tl

SCALE: tl.constexpr = tl.constexpr(0.5)
SHAPE = (2, 4)


@triton.jit
def _helper(x, pair):
    a, b = pair
    return x * SCALE + a * b


class Kernels:
    @staticmethod
    @triton.jit(do_not_specialize=["n"])
    def run(p, n, pair=(1, 2), BLOCK: tl.constexpr = SHAPE[1]):
        tl.store(p, _helper(tl.load(p), pair) + n)

    class Inner:
        @triton.jit
        def nested(p):
            tl.store(p, 1)
"""
    kernels = extract_kernels(source)
    assert kernels.kernels == ["Kernels.Inner.nested", "Kernels.run", "_helper"]
    assert "staticmethod" not in kernels.text and "    @triton.jit(do_not_specialize=['n'])" in kernels.text
    kept = _same_kernels(source, tmp_path)
    assert isinstance(kept.Kernels.run, KernelInterface) and kept.SCALE == tl.constexpr(0.5)


def test_a_name_the_installed_triton_lacks_is_kept_and_private_names_stay_refused() -> None:
    source = "import triton\nimport triton.language as tl\n\n\n@triton.jit\ndef k(p):\n    tl.store(p, tl.cidv(1, 2) + tl._experimental_descriptor_load(p))\n"
    assert extract_kernels(source).kernels == ["k"]
    with pytest.raises(KernelSourceError, match="the attribute `_value`"):
        extract_kernels("import triton\nimport triton.language as tl\n@triton.jit\ndef k(p):\n    tl.store(p, tl.core._value)\n")
    with pytest.raises(KernelSourceError, match="the attribute `_experimental_x`"):
        extract_kernels("import triton\nimport triton.language as tl\n@triton.jit\ndef k(p):\n    tl.store(p, tl.load(p)._experimental_x)\n")


def test_a_one_line_gate_body_is_refused_with_how_to_write_it() -> None:
    source = "import triton\nif triton.__version__ >= '3': from triton.language.extra import libdevice\n"
    with pytest.raises(KernelSourceError, match="must be on its own lines"):
        extract_kernels(source)
