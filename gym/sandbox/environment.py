"""The worker's environment: minimal, no secrets, the same for every backend."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from gym import settings

DEFAULT_RUNTIME = "/opt/kgym/runtime"

# Host variables passed through when set (device order, BLAS quirks). CUDA_VISIBLE_DEVICES is
# not among them: each job gets its own (`visible_devices`), whatever the host's says.
PASSED_THROUGH = ("CUDA_DEVICE_ORDER", "OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")
WORKER_PATH = "/usr/local/bin:/usr/bin:/bin"


def worker_environment(
    device: str,
    home: str,
    tmp: str,
    pythonpath: str,
    path: str = WORKER_PATH,
    *,
    visible_devices: str = "0",
    library_path: list[str] | None = None,
    triton_cache: str | None = None,
) -> dict[str, str]:
    """The worker's whole environment.

    `visible_devices`: CUDA_VISIBLE_DEVICES of a cuda job, its one GPU as the
    worker must name it ("0" in a sandbox that holds only that GPU); a cpu job
    gets "" (no GPU). `library_path`: LD_LIBRARY_PATH entries (the driver's
    folder where it lives outside /usr). `triton_cache`: TRITON_CACHE_DIR when
    it is not the private `tmp/triton`.
    """
    env = {
        "PATH": path,
        "HOME": home,
        "TMPDIR": tmp,
        "USER": "sandbox",
        "LOGNAME": "sandbox",
        "TRITON_CACHE_DIR": triton_cache or f"{tmp}/triton",
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
    env["CUDA_VISIBLE_DEVICES"] = visible_devices if device == "cuda" else ""
    if library_path:
        env["LD_LIBRARY_PATH"] = ":".join(library_path)
    return env


def worker_command(python: str, in_dir: str, out_dir: str, warm: WarmStart | None = None) -> list[str]:
    """`-P`: the current directory is not put on sys.path (no shadowing imports).

    With `warm`, the worker starts ahead of its job: it imports what every job
    needs, writes its ready file and waits for the go file (`gym.sandbox.warm_pool`)."""
    if warm is not None:
        return [python, "-P", "-m", "gym.worker", "--warm", warm.device, str(warm.max_idle_s), in_dir, out_dir]
    return [python, "-P", "-m", "gym.worker", in_dir, out_dir]


@dataclass(frozen=True)
class WarmStart:
    """How a warm worker is started: the device it prepares, and how long it waits for a job before it exits."""

    # "cpu" or "cuda".
    device: str
    # Seconds without a job after which the worker exits on its own (the pool then starts another).
    max_idle_s: float
    # Started this much nicer, so a refill only takes CPU the running grades leave; `WarmWorker.boost`
    # restores normal priority before the job (bwrap as root only: an ordinary user could not raise it again).
    niceness: int = 0


def is_root() -> bool:
    return os.geteuid() == 0


def runtime_python() -> Path:
    """The interpreter the sandboxed worker runs.

    KGYM_SANDBOX_PYTHON wins; as root, the world-readable runtime venv
    (KGYM_SANDBOX_RUNTIME, default /opt/kgym/runtime) because the sandbox uid
    cannot read root's files; otherwise this process's own interpreter.
    """
    chosen = settings.sandbox_python()
    if chosen is not None:
        return chosen
    if is_root():
        return (settings.path("KGYM_SANDBOX_RUNTIME") or Path(DEFAULT_RUNTIME)) / "bin" / "python"
    return Path(sys.executable)
