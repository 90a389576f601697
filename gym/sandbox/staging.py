"""Stage the worker's own code into a job, so a sandbox needs to see nothing else of the gym."""

from __future__ import annotations

import shutil
from pathlib import Path

import gym

# Every module `python -m gym.worker` imports (tests prove this list is enough).
WORKER_MODULES: tuple[str, ...] = ("__init__.py", "worker.py", "wire.py", "tensor_io.py", "dtypes.py", "op_trace.py", "interpreter_shim.py")

PACKAGE_DIR = Path(gym.__file__).resolve().parent


def stage_worker(lib_dir: Path) -> Path:
    """Copy the worker modules to `lib_dir/gym/`; returns `lib_dir` (the worker's PYTHONPATH)."""
    package = lib_dir / "gym"
    package.mkdir(parents=True, exist_ok=True)
    for name in WORKER_MODULES:
        shutil.copyfile(PACKAGE_DIR / name, package / name)
    return lib_dir


