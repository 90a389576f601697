"""`kgym doctor`: what this machine can do, and why not where it cannot."""

from __future__ import annotations

import importlib.metadata
import platform
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import torch

from gym.execution.local import LocalExecutor
from gym.sandbox import DEFAULT_SANDBOX, available_sandboxes
from gym.sandbox import toolchain as sandbox_toolchain
from gym.sandbox.environment import WORKER_PATH, runtime_python
from gym.tasks.loader import discover


@dataclass
class DoctorCheck:
    # What was checked.
    name: str
    # True when fine, False when broken, None when informational.
    ok: bool | None
    detail: str


def _version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def toolchain_check() -> DoctorCheck | None:
    """On a CUDA host: whether the sandbox's interpreter finds the C compiler and Python.h
    Triton builds its launcher with (None on CPU hosts, where the interpreter needs neither)."""
    if not sandbox_toolchain.cuda_available():
        return None
    python = runtime_python()
    found = sandbox_toolchain.run_probe([str(python)], {"PATH": WORKER_PATH})
    if isinstance(found, str):
        return DoctorCheck("gpu toolchain", False, found)
    problem = sandbox_toolchain.toolchain_problem(found)
    if problem:
        return DoctorCheck("gpu toolchain", False, problem)
    return DoctorCheck("gpu toolchain", True, f"{found.compiler} and {found.include_dir}/Python.h, for {python}")


def helion_check(runtime_version: str | None = None) -> DoctorCheck:
    """Whether Helion submissions can be graded: the `helion` extra here (the trusted side vets Helion's
    generated Triton against its helper modules) and the same Helion in the sandbox runtime (where it
    lowers). `runtime_version`: what the runtime reports (tests pass their own; None asks it)."""
    here = _version("helion")
    if here == "not installed":
        return DoctorCheck("helion", None, "not installed: Helion submissions need pip install 'kernel-gym[helion]' (Triton grading is unaffected)")
    if runtime_version is None:
        runtime_version = _runtime_version("helion")
    if runtime_version != here:
        return DoctorCheck(
            "helion",
            False,
            f"{here} here but {runtime_version} in the sandbox runtime ({runtime_python()}): Helion grades need the same version in both "
            "(sandbox/build_runtime.sh installs it; the docker image copies the runtime)",
        )
    return DoctorCheck("helion", True, f"{here}, here and in the sandbox runtime: Helion submissions are graded (docs: Writing a Helion kernel)")


def _runtime_version(package: str) -> str:
    """The version of `package` the sandbox runtime's interpreter has ("not installed", or why it could not say)."""
    import subprocess

    probe = f"import importlib.metadata as m\ntry:\n print(m.version({package!r}))\nexcept m.PackageNotFoundError:\n print('not installed')"
    try:
        done = subprocess.run([str(runtime_python()), "-c", probe], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"unknown ({error})"
    return done.stdout.strip() or f"unknown ({done.stderr.strip()[-200:]})"


# The distribution that owns the import name `gym` here; the retired OpenAI Gym (PyPI `gym`) owns it too.
OWN_DISTRIBUTION = "kernel-gym"


def shadowing_check(owners: Mapping[str, list[str]] | None = None) -> DoctorCheck:
    """Whether another installed distribution (the retired OpenAI `gym`, most likely) also provides the
    import name `gym`: both write into one `gym` package, so one shadows the other. `owners` is
    `importlib.metadata.packages_distributions()` (tests pass their own)."""
    found = importlib.metadata.packages_distributions() if owners is None else owners
    others = sorted({name for name in found.get("gym", []) if name.lower().replace("_", "-") != OWN_DISTRIBUTION})
    if others:
        return DoctorCheck(
            "import name gym",
            False,
            f"also provided by {', '.join(others)} (the retired OpenAI gym?): one shadows the other; "
            f"pip uninstall {' '.join(others)} here, or give Kernel Gym a virtual environment of its own",
        )
    return DoctorCheck("import name gym", True, f"provided by {OWN_DISTRIBUTION} alone ({Path(__file__).resolve().parent})")


def diagnose(smoke_grade: bool = True) -> list[DoctorCheck]:
    checks = [
        DoctorCheck("python", None, platform.python_version()),
        DoctorCheck("platform", None, platform.platform()),
        shadowing_check(),
    ]
    for package in ("torch", "triton", "numpy", "pydantic"):
        version = _version(package)
        checks.append(DoctorCheck(package, version != "not installed", version))
    checks.append(helion_check())
    if torch.cuda.is_available():
        checks.append(DoctorCheck("gpu", True, f"{torch.cuda.get_device_name()} (CUDA {torch.version.cuda}); kernels run compiled, timings are real"))
    else:
        checks.append(DoctorCheck("gpu", None, "none: kernels run under the Triton interpreter (TRITON_INTERPRET=1); timings are labelled interpreted"))
    toolchain = toolchain_check()
    if toolchain is not None:
        checks.append(toolchain)
    for name, sandbox in sorted(available_sandboxes().items()):
        problem = sandbox.check()
        label = "unsafe, for debugging only" if not sandbox.isolated else "isolated"
        role = " (the default)" if name == DEFAULT_SANDBOX else ""
        # Only the default backend is required; the others are reported, not failed.
        ok = (problem is None) if name == DEFAULT_SANDBOX else (True if problem is None else None)
        checks.append(DoctorCheck(f"sandbox {name}", ok, (f"unavailable: {problem}" if problem else f"usable ({label})") + role))
    report = discover()
    checks.append(DoctorCheck("tasks", not report.errors, f"{len(report.tasks)} loaded, {len(report.errors)} broken"))
    checks.extend(DoctorCheck("broken task", False, error) for error in report.errors)
    if smoke_grade and report.tasks:
        task = next((t for t in report.tasks if t.id == "l1/vector_add"), report.tasks[0])
        start = time.monotonic()
        executor = LocalExecutor(concurrency=1, warm=False)
        try:
            result = executor.grade(task, task.solution_path)
        finally:
            executor.close()
        checks.append(
            DoctorCheck(
                "end-to-end grade",
                result.status.value == "passed",
                f"{task.id} shipped solution: {result.status.value} in {time.monotonic() - start:.1f} s"
                + (f" ({result.error.splitlines()[-1]})" if result.error else ""),
            )
        )
    return checks
