"""The kernels file (gym.grading.kernel_source): a submission's jit functions and constants alone, at
their own line numbers; jit code that is not the Triton language refused with its line."""

from __future__ import annotations

from pathlib import Path

import pytest

from gym.errors import KernelSourceError
from gym.grading.kernel_source import extract_kernels

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
    with pytest.raises(KernelSourceError, match="annotation must be a Triton type"):
        extract_kernels("import triton\n@triton.jit\ndef k(p, N: __import__('os').getpid()):\n    pass\n")
    kept = extract_kernels("import triton\nimport triton.language as tl\n@triton.jit\ndef k(p, N: tl.constexpr = 4, M: 'constexpr' = 2):\n    pass\n")
    assert kept.kernels == ["k"]


def test_locals_named_like_builtins_are_the_functions_own() -> None:
    source = "import triton\nimport triton.language as tl\n@triton.jit\ndef k(p, open):\n    vars = tl.load(p)\n    tl.store(p, vars + open)\n"
    assert extract_kernels(source).kernels == ["k"]


def test_every_shipped_solution_and_honest_file_extracts() -> None:
    files = sorted((ROOT / "tasks").glob("*/*/solution.py")) + sorted(
        path for path in (ROOT / "tests" / "honest").glob("*.py") if not path.name.startswith("test_")
    )
    assert len(files) > 90
    for path in files:
        kernels = extract_kernels(path.read_text())
        assert kernels.kernels, path.name
        compile(kernels.text, str(path), "exec")
