"""Helion submissions in the worker: Helion loaded as a compiler before the submission, pinned configs.

A Helion submission's `kernel(...)` calls `@helion.kernel(config=helion.Config(...))`
functions. Helion lowers each to a Triton module on the first call of a shape (a
warm-up call: untimed) and launches its `@triton.jit` function through
`JITFunction.run`, which the launch hook tapes like any Triton launch; the witness
replays those launches from the generated source (gym.worker.launched_modules).

`prepare` runs before the audit hooks are installed, as torch and Triton are imported:
- Helion's environment switches are cleared, except `HELION_DISALLOW_AUTOTUNING=1` (a
  kernel without a config fails with Helion's own message instead of autotuning);
- Helion is imported (its import makes functions and imports ctypes, as a compiler
  may; the audit hooks then treat its frames as trusted, gym.worker.audit_hooks);
- on CPU, `helion.runtime.get_num_sm` answers the fake device's SM count
  (gym.worker.interpreter.device), so persistent program-id configs run.

`check_configs` refuses, at import, a module-level Helion kernel of the submission that
would autotune (no config, several configs, or `force_autotune`), naming how to pin one;
whatever escapes it (a kernel made later, the environment changed) meets Helion's
autotune entry points themselves, which raise the same refusal (`AUTOTUNE_ENTRIES`).
"""

from __future__ import annotations

import os
from types import ModuleType
from typing import Any

import torch

from . import launched_modules, op_trace

# Helion's switches the worker sets; every other HELION_* variable is removed before Helion is imported.
ENVIRONMENT = {"HELION_DISALLOW_AUTOTUNING": "1", "HELION_BACKEND": "triton"}
PIN_HINT = (
    "pin one config: @helion.kernel(config=helion.Config(block_sizes=[...], num_warps=...)) "
    "(find one with `kernel.autotune(args)` on a GPU, or write it by hand)"
)


class AutotuneRefused(Exception):
    """A Helion kernel of the submission would autotune in the worker."""


def prepare(device: torch.device) -> None:
    """Clear Helion's environment, import Helion, and answer CPU SM-count queries (see module doc)."""
    for name in [name for name in os.environ if name.startswith("HELION_")]:
        del os.environ[name]
    os.environ.update(ENVIRONMENT)
    import helion
    import helion.language
    import helion.runtime

    _lower_in_compile_windows()
    if device.type == "cpu":
        from .interpreter.device import SM_COUNT

        def get_num_sm(device: torch.device, *, reserved_sms: int = 0) -> int:
            return max(1, SM_COUNT - reserved_sms)

        op_trace.patch_watched(helion.runtime, "get_num_sm", get_num_sm)


# Helion's entry points that trace a kernel on fake tensors or generate and load its Triton: each runs
# inside op_trace.compiling (its fake-tensor ops and its own mode pushes are the compiler's, not the call's).
LOWERING_ENTRIES = (("Kernel", ("bind",)), ("BoundKernel", ("ensure_config_exists", "set_config", "compile_config", "to_code")))


# Helion's entry points that autotune: refused whoever calls them and whatever the environment says.
AUTOTUNE_ENTRIES = (("Kernel", ("autotune", "autotune_multi")), ("BoundKernel", ("autotune",)))


def _wrap_entries(kernel_module: ModuleType, entries: tuple[tuple[str, tuple[str, ...]], ...], make: Any) -> None:
    """Replace each (class, method) of `entries` by `make(original, method)`, once, watched by the tamper
    fingerprint (op_trace.patch_watched)."""
    for class_name, methods in entries:
        owner = getattr(kernel_module, class_name)
        for method in methods:
            original = vars(owner).get(method)
            if original is None or getattr(original, "_kgym_wrapped", False):
                continue
            wrapper = make(original, method)
            wrapper._kgym_wrapped = True
            op_trace.patch_watched(owner, method, wrapper)


def _refused(original: Any, method: str) -> Any:
    def refused(self: Any, *args: Any, **kwargs: Any) -> Any:
        name = getattr(getattr(self, "kernel", self), "name", None) or getattr(getattr(self, "fn", None), "__name__", "?")
        raise AutotuneRefused(f"Helion kernel {name!r} asked to autotune ({method}); the gym grades one fixed config: {PIN_HINT}")

    return refused


def _windowed(original: Any, method: str) -> Any:
    def windowed(*args: Any, **kwargs: Any) -> Any:
        with op_trace.compiling():
            result = original(*args, **kwargs)
            if method == "compile_config":
                # The host function of the module Helion just wrote and loaded: its file is a launched module's.
                code = getattr(result, "__code__", None)
                if code is not None:
                    launched_modules.register(code.co_filename)
            return result

    return windowed


def _lower_in_compile_windows() -> None:
    import importlib

    # (helion.runtime's attribute `kernel` is the decorator: the module is found by its full name.)
    kernel_module = importlib.import_module("helion.runtime.kernel")
    _wrap_entries(kernel_module, AUTOTUNE_ENTRIES, _refused)
    _wrap_entries(kernel_module, LOWERING_ENTRIES, _windowed)


def helion_kernels(namespace: dict[str, Any]) -> dict[str, Any]:
    """The submission's module-level Helion kernels (`helion.Kernel` objects), by name."""
    import sys

    helion = sys.modules.get("helion")
    kernel_type = getattr(helion, "Kernel", None)
    if kernel_type is None:
        return {}
    return {name: value for name, value in namespace.items() if isinstance(value, kernel_type)}


def check_configs(namespace: dict[str, Any]) -> None:
    """AutotuneRefused for a module-level Helion kernel that would autotune (see module doc)."""
    for name, kernel in helion_kernels(namespace).items():
        configs = list(getattr(kernel, "configs", []) or [])
        settings = getattr(kernel, "settings", None)
        if len(configs) != 1 or getattr(settings, "force_autotune", False):
            given = "no config" if not configs else f"{len(configs)} configs" if len(configs) != 1 else "force_autotune=True"
            raise AutotuneRefused(f"Helion kernel {name!r} would autotune ({given}); the gym grades one fixed config: {PIN_HINT}")
