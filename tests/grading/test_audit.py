"""The static audit: honest solutions are clean; each rule fires with its reason and line."""

from __future__ import annotations

import pytest

from gym.grading.audit import audit_source
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
        ("import numpy as np", "import"),
        ("import ctypes", "import"),
        ("import gc", "import"),
        ("import importlib", "import"),
        ("import time", "import"),
        ("import socket", "import"),
        ("from gym import worker", "import"),
        ("import torch.nn.functional as F", "torch"),
        ("import torch\ny = torch.matmul(a, b)", "torch_compute"),
        ("import torch as t\ny = t.softmax(a, 0)", "torch_compute"),
        ("import torch\ntorch.manual_seed(0)", "torch"),
        ("import torch\ns = torch.cuda.Stream()", "stream"),
        ("import torch\ntorch.cuda.synchronize = lambda: None", "patch"),
        ("import triton\ntriton.testing.do_bench = None", "patch"),
        ("import os\nv = os.environ.get('CI')", "environment"),
        ("from os import getenv", "environment"),
        ("import sys\nm = sys.modules['torch']", "sys"),
        ("exec('x = 1')", "dynamic_code"),
        ("f = eval", "dynamic_code"),
        ("__import__('numpy')", "dynamic_code"),
        ("import torch\nf = getattr(torch, 'soft' + 'max')", "dynamic_code"),
        ("x = (1).__class__.__bases__", "introspection"),
        ("def f():\n    global cache", "state"),
        ("a = x.numpy()", "host_compute"),
        ("a = x.tolist()", "host_compute"),
        ("a = x.data_ptr()", "host_compute"),
        ("try:\n    k[(1,)](x)\nexcept Exception:\n    y = 0", "launch_fallback"),
        ("from . import helper", "import"),
    ],
)
def test_rule_fires(source: str, rule: str) -> None:
    findings = audit_source(source)
    assert rule in {finding.rule for finding in findings}, findings
    assert all(finding.line >= 1 and finding.message for finding in findings)


def test_try_without_a_launch_is_fine_and_syntax_errors_are_left_to_the_worker() -> None:
    assert rules("try:\n    n = int('3')\nexcept ValueError:\n    n = 0") == set()
    assert audit_source("def kernel(x)\n    return x") == []


def test_allowed_torch_calls_are_clean() -> None:
    source = "import torch, triton\ndef kernel(x):\n    out = torch.empty_like(x)\n    z = torch.zeros((3,), device=x.device)\n    return out.view(-1).reshape(x.shape)\n"
    assert audit_source(source) == []
