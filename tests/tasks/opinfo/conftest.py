"""OpInfo fixtures: a fixed sample of this torch's OpInfo ops, imported once per session into a task
root of its own (the full import is a benchmark: scripts/bench_task_import.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gym.tasks.opinfo.importer import OpInfoImportReport, import_opinfo

# Ops that import as tasks, across kinds: elementwise (unary, binary, broadcast), reductions, scans,
# selections (sort, gather, max), matmul, a tensor list (cat), bool outputs (eq, isinf) and a
# float16-exact op (sign).
IMPORTED = [
    "abs",
    "add",
    "exp",
    "nn.functional.gelu",
    "nn.functional.silu",
    "clamp",
    "sum",
    "mean",
    "cumsum",
    "softmax",
    "gather",
    "sort",
    "max.binary",
    "max.reduction_with_dim",
    "matmul",
    "cat",
    "eq",
    "isinf",
    "sign",
]
# Ops left out, with the reason each must get.
EXCLUDED = {
    "bernoulli": "random",
    "linalg.svd": "not_unique",
    "t": "view",
    "zeros_like": "view",
    "arange": "factory",
}


@pytest.fixture(scope="session")
def opinfo_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("opinfo-root")


@pytest.fixture(scope="session")
def opinfo_import(opinfo_root: Path) -> OpInfoImportReport:
    return import_opinfo(opinfo_root, [*IMPORTED, *EXCLUDED])
