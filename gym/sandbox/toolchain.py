"""What Triton needs to compile on a GPU: a C compiler and Python.h, as the worker sees them.

At first use on a GPU, Triton builds its launcher (driver.c) with `$CC`, else
`gcc`, else `clang` from PATH, against the Python headers at the running
interpreter's sysconfig include folder. Without them every compiled kernel
fails, so each backend's `check()` and `kgym doctor` ask for them on hosts
where CUDA is available (the CPU interpreter needs neither).
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass

# Run with the worker's interpreter and PATH; mirrors triton/runtime/build.py.
PROBE = r"""
import json, os, shutil, sys, sysconfig
scheme = sysconfig.get_default_scheme()
if scheme == "posix_local":
    scheme = "posix_prefix"
include = sysconfig.get_paths(scheme=scheme)["include"]
print(json.dumps({
    "compiler": os.environ.get("CC") or shutil.which("gcc") or shutil.which("clang"),
    "include_dir": include,
    "python_h": os.path.isfile(os.path.join(include, "Python.h")),
    "python_version": "%d.%d" % sys.version_info[:2],
}))
"""

COMPILER_HINT = "install gcc (Debian/Ubuntu: apt-get install gcc; `sandbox/build_runtime.sh` does it as root)"


@dataclass(frozen=True)
class Toolchain:
    # The compiler Triton would run (None: none found).
    compiler: str | None
    # The interpreter's include folder, and whether Python.h is in it.
    include_dir: str
    python_h: bool
    # "3.11": names the headers' package.
    python_version: str


def toolchain_problem(toolchain: Toolchain) -> str | None:
    """None when Triton can build its launcher, else what is missing and what to install."""
    problems = []
    if toolchain.compiler is None:
        problems.append(f"no C compiler (gcc or clang) on the worker's PATH: {COMPILER_HINT}")
    if not toolchain.python_h:
        version = toolchain.python_version
        problems.append(
            f"no Python.h in {toolchain.include_dir}: install the Python {version} headers (Debian/Ubuntu: apt-get install python{version}-dev; `sandbox/build_runtime.sh` does it as root)"
        )
    if not problems:
        return None
    return "Triton cannot compile its launcher on this GPU host: " + "; ".join(problems)


def parse_probe(output: str) -> Toolchain:
    """The probe's JSON line (the last line printed) as a Toolchain."""
    data = json.loads(output.strip().splitlines()[-1])
    return Toolchain(
        compiler=data.get("compiler") or None,
        include_dir=str(data.get("include_dir", "")),
        python_h=bool(data.get("python_h")),
        python_version=str(data.get("python_version", "3")),
    )


def run_probe(command: list[str], env: Mapping[str, str] | None = None) -> Toolchain | str:
    """Run `command + ["-c", PROBE]` (command: the worker's interpreter, maybe behind a wrapper);
    a Toolchain, or why the probe itself failed."""
    try:
        probe = subprocess.run([*command, "-c", PROBE], capture_output=True, text=True, timeout=60, env=dict(env) if env is not None else None)
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"could not run {command[-1]} to look for a C compiler and Python.h: {error}"
    if probe.returncode != 0:
        return f"{command[-1]} failed looking for a C compiler and Python.h: {probe.stderr.strip()[-300:]}"
    try:
        return parse_probe(probe.stdout)
    except (ValueError, IndexError) as error:
        return f"{command[-1]} gave an unreadable toolchain probe ({error})"


def cuda_available() -> bool:
    """Whether this (trusted) process has a usable CUDA GPU; False on CPU hosts."""
    try:
        import torch

        return bool(torch.cuda.is_available())
    except Exception:  # noqa: BLE001 - any failure means: no GPU to compile for
        return False


# Keys whose toolchain was found complete (a problem is probed again: it may have been fixed).
_FINE: set[tuple[object, ...]] = set()


def gpu_toolchain_problem(
    key: tuple[object, ...],
    probe: Callable[[], Toolchain | str],
    cuda: bool | None = None,
) -> str | None:
    """On a CUDA host, what the worker lacks to compile Triton's launcher (None: nothing, or a
    CPU host). `probe` runs until it finds everything for `key` (interpreter, PATH, image)."""
    if not (cuda_available() if cuda is None else cuda) or key in _FINE:
        return None
    found = probe()
    problem = found if isinstance(found, str) else toolchain_problem(found)
    if problem is None:
        _FINE.add(key)
    return problem
