"""The static audit refuses only what has no honest use in a kernel file, each refusal
with its rule and line; honest idioms from other projects' styles are clean."""

from __future__ import annotations

import pytest

from gym.grading.intake.audit import audit_source
from gym.tasks.loader import discover


def rules(source: str) -> set[str]:
    return {finding.rule for finding in audit_source(source)}


def test_every_shipped_solution_is_clean() -> None:
    for task in discover().tasks:
        assert audit_source(task.solution_path.read_text()) == [], task.id


@pytest.mark.parametrize(
    ("source", "rule"),
    [
        ("import threading", "import"),
        ("from concurrent.futures import ThreadPoolExecutor", "import"),
        ("import ctypes", "import"),
        ("import mmap", "import"),
        ("import gc", "import"),
        ("import inspect", "import"),
        ("import runpy", "import"),
        ("import socket", "import"),
        ("import subprocess", "import"),
        ("import signal", "import"),
        ("import pathlib", "import"),
        ("import cupy", "import"),
        ("from gym import worker", "import"),
        ("from . import helper", "import"),
        ("import torch\ntorch.manual_seed(0)", "seeding"),
        ("import torch\ng = torch.Generator()", "seeding"),
        ("import torch\nf = torch.compile(fn)", "torch"),
        ("import torch\nf = torch.jit.script(fn)", "torch"),
        ("import torch\nlib = torch.library.Library('x', 'DEF')", "torch"),
        ("import torch\ny = torch.ops.aten.add(a, b)", "torch"),
        ("import torch\ng = torch.cuda.CUDAGraph()", "torch"),
        ("import torch\ns = torch.cuda.Stream()", "torch"),
        ("import torch\nf = torch.cuda.jiterator._create_jit_fn('')", "torch"),
        ("import torch\ntorch.cuda.synchronize = lambda: None", "patch"),
        ("import triton\ntriton.testing.do_bench = None", "patch"),
        ("import time\ntime.perf_counter = lambda: 0.0", "patch"),
        ("import torch\nsetattr(torch, 'sum', None)", "patch"),
        ("import torch\ntorch.__dict__['sum'] = None", "patch"),
        ("import os\nos.system('ls')", "processes"),
        ("from os import fork", "processes"),
        ("import os\nfd = os.open('x', 0)", "file_io"),
        ("data = open('/etc/passwd').read()", "file_io"),
        ("import torch\nf = torch.os.system", "processes"),
        ("import sys\nm = sys.modules['torch']", "sys"),
        ("import sys\nf = sys._getframe(1)", "sys"),
        ("import sys\nv = getattr(sys, 'mod' + 'ules')", "introspection"),
        ("f = getattr(__builtins__, name)", "introspection"),
        ("exec('x = 1')", "dynamic_code"),
        ("f = eval", "dynamic_code"),
        ("code = compile('1', 'f', 'eval')", "dynamic_code"),
        ("__import__('numpy')", "dynamic_code"),
        ("x = (1).__class__.__bases__", "introspection"),
        ("g = fn.__globals__", "introspection"),
        ("def f(e):\n    return e.__traceback__.tb_frame.f_back", "introspection"),
    ],
)
def test_rule_fires(source: str, rule: str) -> None:
    findings = audit_source(source)
    assert rule in {finding.rule for finding in findings}, findings
    assert all(finding.line >= 1 and finding.message for finding in findings)


@pytest.mark.parametrize(
    "source",
    [
        # Helpers third-party kernels use (Liger, FlagGems, unsloth, the tutorials).
        "import functools, itertools, operator\nconfigs = list(itertools.product([32, 64], [4, 8]))\nn = functools.reduce(operator.mul, (2, 3), 1)",
        "import functools\n@functools.lru_cache(maxsize=None)\ndef block(n):\n    return 1 << (n - 1).bit_length()",
        # Parameters and locals named like builtins.
        "def kernel(input, weight):\n    compile = input.shape[0]\n    open = weight\n    return input",
        "def forward(input):\n    return input.view(-1)",
        # torch calls are judged at run time by the op trace, not by spelling.
        "import torch\ndef kernel(x, s):\n    return torch.reshape(x, s), torch.flatten(x)",
        "import torch\ndef kernel(x, debug=False):\n    if debug:\n        return torch.sum(x)\n    return x",
        "import torch\ndt = torch.promote_types(torch.float16, torch.float32)",
        # torch.nn modules and autograd.Function wrappers (KernelBench's ModelNew, Liger's style).
        "import torch\nimport torch.nn as nn\nclass ModelNew(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.w = nn.Parameter(torch.empty(3))",
        "import torch\nclass Fn(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n        return x",
        # Pointer-equality checks and device-module lookups.
        "def same(a, b):\n    return a.data_ptr() == b.data_ptr()",
        "import torch\ndef props(x):\n    return getattr(torch, x.device.type).is_available()",
        # Version gates, including importing a package by name.
        "from packaging.version import Version\nimport triton\nNEW = Version(triton.__version__) >= Version('3.0')",
        "import importlib\nlibdevice = importlib.import_module('triton.language.extra.libdevice')",
        "import torch\nif torch.cuda.is_available():\n    s = torch.cuda.current_stream()",
        "import os\nINTERPRET = os.environ.get('TRITON_INTERPRET') == '1'",
        "import math\nimport numpy as np\nn = int(np.prod((2, 3))) + math.ceil(1.5)",
        "try:\n    from triton.language.extra import libdevice\nexcept ImportError:\n    libdevice = None",
        "_cache = {}\ndef kernel(x):\n    global _cache\n    return x",
        "import weakref\n_seen = weakref.WeakValueDictionary()",
    ],
)
def test_honest_idioms_are_clean(source: str) -> None:
    assert audit_source(source) == []


def test_syntax_errors_are_left_to_the_worker() -> None:
    assert audit_source("def kernel(x)\n    return x") == []
