"""The sandbox interface and its registry.

A sandbox runs `python -m gym.worker IN OUT` for one job: `IN` (request,
submission, input tensors) is readable, `OUT` is the only writable place the
grader looks at, and the whole process tree is killed at the deadline.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

TAIL = 4000


@dataclass(frozen=True)
class Job:
    # Request, submission and input tensors (read-only for the worker).
    in_dir: Path
    # Where the worker writes its records and output tensors.
    out_dir: Path
    # Private scratch space (HOME, Triton cache, temp files).
    scratch_dir: Path
    # "cpu" or "cuda": decides the interpreter and the device nodes.
    device: str


@dataclass(frozen=True)
class RunOutcome:
    # Exit status of the worker (negative: killed by that signal); None when it never started.
    exit_code: int | None
    # True when the deadline killed it.
    timed_out: bool
    # Wall-clock seconds from start to exit.
    wall_s: float
    # Last characters of its stdout/stderr, for diagnostics only (never for a verdict).
    stdout_tail: str
    stderr_tail: str


class SandboxUnavailable(Exception):
    """The backend cannot run here; the message says how to fix that."""


class Sandbox(Protocol):
    # Registry name, e.g. "process".
    name: str
    # Whether the backend isolates the submission (False only for "process").
    isolated: bool

    def check(self) -> str | None:
        """None when usable here, else why not and how to fix it."""
        ...

    def run(self, job: Job, timeout_s: float) -> RunOutcome:
        """Run the worker for `job`; kill everything it started after `timeout_s`."""
        ...


_REGISTRY: dict[str, Sandbox] = {}


def register(sandbox: Sandbox) -> Sandbox:
    _REGISTRY[sandbox.name] = sandbox
    return sandbox


def available_sandboxes() -> dict[str, Sandbox]:
    return dict(_REGISTRY)


def get_sandbox(name: str) -> Sandbox:
    try:
        sandbox = _REGISTRY[name]
    except KeyError:
        raise SandboxUnavailable(f"unknown sandbox {name!r}; known: {', '.join(sorted(_REGISTRY))}") from None
    problem = sandbox.check()
    if problem:
        raise SandboxUnavailable(f"sandbox {name!r} is unavailable: {problem}")
    return sandbox
