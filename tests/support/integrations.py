"""The RL frameworks' packages live in a venv of their own (`make test-integrations`, .venv-integrations).

`needs("verifiers")` at the top of a test module imports the package, or skips the module where it is
not installed; with KGYM_REQUIRE_INTEGRATIONS=1 (set by `make test-integrations`) a missing package
fails the run instead, so CI cannot pass by skipping.
"""

from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest

REQUIRED = os.environ.get("KGYM_REQUIRE_INTEGRATIONS") == "1"


def needs(module: str) -> ModuleType:
    try:
        return importlib.import_module(module)
    except ImportError as error:
        message = f"{module} is not installed here ({error}); `make test-integrations` runs these tests in .venv-integrations"
        if REQUIRED:
            pytest.fail(message, pytrace=False)
        pytest.skip(message, allow_module_level=True)
