"""Stage the worker's own code into a job, so a sandbox needs to see nothing else of the gym."""

from __future__ import annotations

import os
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import gym.worker
from gym.sandbox.base import Job
from gym.worker.protocol import WARM_GO_FILE

# The sandbox side of the gym: the whole `gym/worker/` package, staged as it is.
WORKER_PACKAGE = Path(gym.worker.__file__).resolve().parent


def worker_files() -> list[str]:
    """The package's files, relative to it (sources only: no bytecode caches)."""
    return sorted(str(path.relative_to(WORKER_PACKAGE)) for path in WORKER_PACKAGE.rglob("*.py") if "__pycache__" not in path.parts)


def stage_worker(lib_dir: Path) -> Path:
    """Copy the worker package to `lib_dir/gym/worker/`; returns `lib_dir` (the worker's PYTHONPATH).

    `lib_dir/gym` gets no `__init__.py`: inside the sandbox `gym` is a namespace
    package holding only the worker, so nothing else of the gym can be imported.
    """
    target = lib_dir / "gym" / "worker"
    for name in worker_files():
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(WORKER_PACKAGE / name, destination)
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
    if job.triton_cache is not None:
        open_cache_to(job.triton_cache, uid)


def closed_ancestor(path: Path) -> Path | None:
    """The first folder above `path` another uid cannot search (no o+x), or None.

    A sandbox uid has no group of the owner's, so only the "other" bits let it
    reach a folder bwrap binds (bwrap resolves its sources as that uid)."""
    for folder in reversed(path.resolve().parents):
        try:
            if not folder.stat().st_mode & stat.S_IXOTH:
                return folder
        except OSError:
            return folder
    return None


def open_cache_to(cache: Path, uid: int) -> None:
    """Hand a grade's shared Triton cache to this job's uid (earlier jobs may have had others).

    As root everything in it becomes `uid`'s, links not followed; anything that
    is not a plain file, folder or symlink, and any file with other hard links
    (it could be a host file's other name), is deleted first: it is only a cache.
    """
    cache.mkdir(parents=True, exist_ok=True)
    if os.geteuid() == 0:
        pending = [str(cache)]
        while pending:
            try:
                entries = list(os.scandir(pending.pop()))
            except OSError:
                continue
            for entry in entries:
                try:
                    info = entry.stat(follow_symlinks=False)
                    mode = info.st_mode
                    if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode) or stat.S_ISLNK(mode)) or (stat.S_ISREG(mode) and info.st_nlink > 1):
                        os.unlink(entry.path)
                        continue
                    os.lchown(entry.path, uid, uid)
                except OSError:
                    continue
                if stat.S_ISDIR(mode):
                    pending.append(entry.path)
        os.chown(cache, uid, uid)
        cache.chmod(0o700)
    elif uid == os.getuid():
        cache.chmod(0o700)
    else:
        # An ordinary user cannot give it away: the other uid can add entries, not change old ones.
        cache.chmod(0o777)


def start_warm_job(job: Job, prepare: Callable[[], None] | None = None) -> None:
    """Let a warm worker start the job now written into its folder: `prepare` (hand the new files
    to its uid), then the go file, written whole under its final name (see gym.sandbox.warm_pool)."""
    if prepare is not None:
        prepare()
    go = job.in_dir / (WARM_GO_FILE + ".tmp")
    go.write_text("go")
    go.chmod(0o644)
    os.replace(go, job.in_dir / WARM_GO_FILE)
