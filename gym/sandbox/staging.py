"""Stage the worker's own code into a job, so a sandbox needs to see nothing else of the gym."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import gym
from gym.sandbox.base import Job

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




def open_job_to(job: Job, uid: int) -> None:
    """Let `uid` read the job's inputs and write its output folder, and nothing else of it."""
    job.in_dir.parent.chmod(0o711)
    for root, _folders, files in os.walk(job.in_dir):
        os.chmod(root, 0o755)
        for name in files:
            os.chmod(os.path.join(root, name), 0o644)
    if os.geteuid() == 0:
        os.chown(job.out_dir, uid, uid)
        job.out_dir.chmod(0o700)
    elif uid == os.getuid():
        job.out_dir.chmod(0o700)
    else:
        # An ordinary user cannot give the folder away: let the other uid write.
        job.out_dir.chmod(0o777)
