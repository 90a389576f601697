"""The worker's environment: minimal, no secrets, the same for every backend."""

from __future__ import annotations

import os
import sys
from pathlib import Path

DEFAULT_RUNTIME = "/opt/kgym/runtime"

# Host variables passed through when set (device selection, BLAS quirks).
PASSED_THROUGH = ("CUDA_VISIBLE_DEVICES", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def worker_environment(device: str, home: str, tmp: str, pythonpath: str, path: str = "/usr/local/bin:/usr/bin:/bin") -> dict[str, str]:
    env = {
        "PATH": path,
        "HOME": home,
        "TMPDIR": tmp,
        "USER": "sandbox",
        "LOGNAME": "sandbox",
        "TRITON_CACHE_DIR": f"{tmp}/triton",
        "PYTHONPATH": pythonpath,
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONHASHSEED": "0",
        "LANG": "C.UTF-8",
        "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "2"),
    }
    if device == "cpu":
        env["TRITON_INTERPRET"] = "1"
    for name in PASSED_THROUGH:
        if name in os.environ:
            env[name] = os.environ[name]
    return env


def worker_command(python: str, in_dir: str, out_dir: str) -> list[str]:
    """`-P`: the current directory is not put on sys.path (no shadowing imports)."""
    return [python, "-P", "-m", "gym.worker", in_dir, out_dir]


def is_root() -> bool:
    return os.geteuid() == 0


def runtime_python() -> Path:
    """The interpreter the sandboxed worker runs.

    KGYM_SANDBOX_PYTHON wins; as root, the world-readable runtime venv
    (KGYM_SANDBOX_RUNTIME, default /opt/kgym/runtime) because the sandbox uid
    cannot read root's files; otherwise this process's own interpreter.
    """
    if os.environ.get("KGYM_SANDBOX_PYTHON"):
        return Path(os.environ["KGYM_SANDBOX_PYTHON"])
    if is_root():
        return Path(os.environ.get("KGYM_SANDBOX_RUNTIME", DEFAULT_RUNTIME)) / "bin" / "python"
    return Path(sys.executable)
