"""A grade's status: the one verdict every grade ends in (the lowest layer: the exception tree and
the serialised results both name it, and neither is below the other)."""

from __future__ import annotations

from enum import Enum

__all__ = ["Status"]


class Status(str, Enum):
    # Every check held on every trial and no integrity rule was broken.
    passed = "passed"
    # The kernel ran but an output broke the contract (values, dtype, shape, structure).
    wrong_answer = "wrong_answer"
    # The submission did not import, defines no kernel(...), or Triton refused to compile it.
    compile_error = "compile_error"
    # The kernel raised or the worker died while running it.
    runtime_error = "runtime_error"
    # The worker ran past the task's wall-clock limit and was killed.
    timeout = "timeout"
    # An integrity rule was broken (mutated inputs, a non-tensor output, ...); see integrity_flags.
    rejected = "rejected"
    # The gym failed (broken task, unreadable job folder, sandbox missing); not the submission's fault.
    infra_error = "infra_error"
