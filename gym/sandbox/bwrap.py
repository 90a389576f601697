"""`bwrap`: bubblewrap, run unprivileged. The default backend.

As root, the worker is started as

    setpriv --reuid U --regid U --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs --
      prlimit --data --cpu --nproc --fsize --nofile --core=0 --
        bwrap --unshare-all --die-with-parent --new-session --cap-drop ALL
              (read-only: /usr, the runtime venv, the job's input folder; writable: the job's
               output folder; tmpfs: /tmp and HOME; nothing else of the host)
          python -P -m gym.worker /job/in /job/out

A cuda job also gets its one GPU's /dev/nvidiaN, the NVIDIA control nodes and
the driver's state (read-only), CUDA_VISIBLE_DEVICES=0 (see
`gym.devices.nvidia.bwrap_device_nodes`) and, where libcuda lives outside
/usr, that folder read-only and on LD_LIBRARY_PATH. A job with a shared
Triton cache gets it read-write at /tmp/triton.

with U a sandbox uid leased for this grade only, so whatever is left of it
afterwards can be found and killed (and the uid is leased again only once none
is left, see `gym.sandbox.uids`). As an ordinary user, setpriv is skipped
and the worker runs as that user inside the same bubblewrap jail.

Inside the jail, the runtime interpreter first writes one byte to a pipe only
the trusted side reads (`ANNOUNCE`), then execs the worker: a run that never
wrote it failed in setpriv, prlimit or bwrap (a fork refused, a mount that
failed), before anything submitted could run, and its RunOutcome carries
`infra_failure`.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Callable
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path

from gym.devices import nvidia
from gym.errors import SandboxUnavailable
from gym.sandbox.base import Job, RunOutcome, WitnessLink, register
from gym.sandbox.environment import (
    WORKER_PATH,
    WarmStart,
    is_root,
    runtime_python,
    worker_command,
    worker_environment,
)
from gym.sandbox.staging import closed_ancestor, open_job_to
from gym.sandbox.supervise import SupervisedWorker, start
from gym.sandbox.toolchain import gpu_toolchain_problem, run_probe
from gym.sandbox.uids import lease_uid, signal_uid

SANDBOX_HOME = "/home/sandbox"
# TRITON_CACHE_DIR in the sandbox: in the private /tmp, or the job's shared cache bound there.
SANDBOX_TRITON_CACHE = "/tmp/triton"
INSTALL_HINT = "install bubblewrap (Debian/Ubuntu: `apt-get install bubblewrap`; `make venv` does it as root)"
RUNTIME_HINT = (
    "build the sandbox runtime with `sandbox/build_runtime.sh` (`make venv` runs it; from a wheel: "
    "`bash $(python -c 'from gym.tasks.paths import shipped_root; print(shipped_root())')/sandbox/build_runtime.sh`)"
)
# Run by the sandbox's interpreter inside the jail before the worker, with the pipe's fd and the
# worker command as arguments: one byte says the jail is up; the fd is closed before the worker runs.
ANNOUNCE = "import os,sys;fd=int(sys.argv[1]);os.write(fd,b'1');os.close(fd);os.execv(sys.argv[2],sys.argv[2:])"


def runtime_roots(python: Path) -> list[Path]:
    """Folders the interpreter needs read-only: its venv and, outside /usr, its base install."""
    roots: list[Path] = []
    venv = python.parent.parent
    if (venv / "pyvenv.cfg").is_file():
        roots.append(venv)
        for line in (venv / "pyvenv.cfg").read_text().splitlines():
            key, _, value = line.partition("=")
            if key.strip() == "home":
                base = Path(value.strip()).resolve().parent
                if not str(base).startswith("/usr"):
                    roots.append(base)
    else:
        prefix = python.resolve().parent.parent
        if not str(prefix).startswith("/usr"):
            roots.append(prefix)
    return roots


def _system_roots() -> list[str]:
    """Host folders `_host_system_binds` shows the sandbox (what a library there is visible through)."""
    roots = ["/usr"]
    for name in ("lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_dir() and not path.is_symlink():
            roots.append(str(path))
    return roots


def _host_system_binds() -> list[str]:
    """The host's /usr (read-only) and the usual top-level links into it."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), f"/{name}"]
        elif path.is_dir():
            args += ["--ro-bind", str(path), f"/{name}"]
    for file in ("/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/alternatives", "/etc/localtime"):
        if os.path.exists(file):
            args += ["--ro-bind", file, file]
    if os.path.isdir("/sys/devices/system/cpu"):
        args += ["--ro-bind", "/sys/devices/system/cpu", "/sys/devices/system/cpu"]
    return args


def _gpu_binds(gpu_index: int) -> list[str]:
    """The job's one GPU node, the NVIDIA control nodes, and the driver state CUDA reads."""
    args: list[str] = []
    for source, target in nvidia.bwrap_device_nodes(gpu_index):
        args += ["--dev-bind", source, target]
    for path in ("/proc/driver/nvidia", "/sys/bus/pci", "/sys/devices"):
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    return args


class BwrapSandbox:
    name = "bwrap"
    isolated = True

    def check(self) -> str | None:
        if shutil.which("bwrap") is None:
            return f"bwrap is not installed: {INSTALL_HINT}"
        if is_root():
            for tool in ("setpriv", "prlimit"):
                if shutil.which(tool) is None:
                    return f"{tool} is not installed (Debian: apt-get install util-linux)"
        elif shutil.which("prlimit") is None:
            return "prlimit is not installed (Debian: apt-get install util-linux)"
        python = runtime_python()
        if not python.exists():
            return f"no sandbox interpreter at {python}: {RUNTIME_HINT}"
        return _namespaces_problem() or gpu_toolchain_problem(
            ("bwrap", str(python), WORKER_PATH),
            # The sandbox sees the host's /usr: the runtime's interpreter there finds what the worker would.
            lambda: run_probe([str(python)], {"PATH": WORKER_PATH}),
        )

    def command(self, job: Job, uid: int, python: Path, announce_fd: int | None = None, warm: WarmStart | None = None) -> list[str]:
        """The whole command line; with `announce_fd`, the worker is started through ANNOUNCE;
        with `warm`, it waits for its job (see `gym.sandbox.warm_pool`)."""
        limits = job.limits
        roots = runtime_roots(python)
        driver_binds: list[str] = []
        library_path: list[str] = []
        if job.device == "cuda":
            driver_binds, library_path = nvidia.bwrap_driver_binds(_system_roots() + [str(root) for root in roots])
        env = worker_environment(
            job.device,
            SANDBOX_HOME,
            "/tmp",
            "/job/in/lib",
            visible_devices=nvidia.SANDBOX_VISIBLE_DEVICES,
            library_path=library_path,
            triton_cache=SANDBOX_TRITON_CACHE,
        )
        # --as-pid-1: the worker's first process (the witness) is pid 1 of the namespace, so nothing
        # inside can signal it, and there is no bwrap monitor holding its standard output open.
        jail = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--as-pid-1"]
        jail += _host_system_binds()
        for root in roots:
            jail += ["--ro-bind", str(root), str(root)]
        for folder in driver_binds:
            jail += ["--ro-bind", folder, folder]
        jail += ["--ro-bind", str(job.in_dir), "/job/in", "--bind", str(job.out_dir), "/job/out"]
        jail += ["--ro-bind", str(job.in_dir / "passwd"), "/etc/passwd"]
        jail += ["--size", str(limits.scratch_bytes), "--tmpfs", "/tmp"]
        jail += ["--size", str(limits.scratch_bytes), "--tmpfs", SANDBOX_HOME]
        if job.triton_cache is not None:
            # After the /tmp tmpfs, so the bind lands on top of it.
            jail += ["--bind", str(job.triton_cache), SANDBOX_TRITON_CACHE]
        jail += ["--proc", "/proc", "--dev", "/dev"]
        if job.device == "cuda":
            jail += _gpu_binds(job.host_gpu)
        jail += ["--clearenv"]
        for key, value in env.items():
            jail += ["--setenv", key, value]
        jail += ["--chdir", "/tmp", "--"]
        if announce_fd is not None:
            jail += [str(python), "-I", "-S", "-c", ANNOUNCE, str(announce_fd)]
        jail += worker_command(str(python), "/job/in", "/job/out", warm)
        limited = [
            "prlimit",
            f"--data={limits.memory_bytes}",
            f"--cpu={limits.cpu_seconds}",
            f"--nproc={limits.processes}",
            f"--fsize={limits.file_size_bytes}",
            f"--nofile={limits.open_files}",
            "--core=0",
            "--",
        ]
        if not is_root():
            return limited + jail
        dropped = [
            "setpriv",
            f"--reuid={uid}",
            f"--regid={uid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
        ]
        return dropped + limited + jail

    def run(self, job: Job, timeout_s: float, link: WitnessLink | None = None) -> RunOutcome:
        start_time = time.monotonic()
        try:
            worker = self._start(job, None)
        except OSError as error:  # setpriv, prlimit or bwrap could not even be executed
            tail = f"{type(error).__name__}: {error}"
            outcome = RunOutcome(exit_code=None, timed_out=False, wall_s=time.monotonic() - start_time, stdout_tail="", stderr_tail=tail)
            return replace(outcome, infra_failure=_launch_failure(outcome))
        return worker.run(timeout_s, link)

    def start_warm(self, job: Job, warm: WarmStart) -> SupervisedWorker:
        return self._start(job, warm)

    def _start(self, job: Job, warm: WarmStart | None) -> SupervisedWorker:
        """Lease a uid, open the job to it and start the jail (cold: on the written job; warm: waiting)."""
        python = runtime_python()
        if job.triton_cache is not None and is_root() and (closed := closed_ancestor(job.triton_cache)) is not None:
            raise SandboxUnavailable(
                f"the sandbox user cannot reach the Triton cache {job.triton_cache}: {closed} is not searchable by others; "
                "put the cache in a folder whose parents all are (e.g. `tempfile.mkdtemp()` itself, or chmod o+x)"
            )
        held = ExitStack()
        try:
            uid = held.enter_context(lease_uid(own_uid_unless_root=True))
            (job.in_dir / "passwd").write_text(f"sandbox:x:{uid}:{uid}:sandbox:{SANDBOX_HOME}:/usr/sbin/nologin\n")
            open_job_to(job, uid)
            announce_read, announce_write = os.pipe()
            held.callback(os.close, announce_read)
            held.callback(os.close, announce_write)
            # A nicer start only as root, who can raise the leased uid's priority again (`boost`).
            niceness = warm.niceness if warm is not None and is_root() else 0
            started = start(
                self.command(job, uid, python, announce_write, warm),
                job,
                {"PATH": os.environ.get("PATH", "/usr/bin:/bin")},
                cwd=job.scratch_dir,
                preexec=_nicer(niceness) if niceness else None,
                pass_fds=(announce_write,),
            )
        except BaseException:
            held.close()
            raise
        return SupervisedWorker(
            job,
            started,
            warm=warm is not None,
            # One round of SIGKILL now; the lease's release waits until none is left.
            on_kill=lambda: signal_uid(uid),
            prepare=lambda: open_job_to(job, uid),
            release=held.close,
            launch_failure=lambda outcome: None if _announced(announce_read) else _launch_failure(outcome),
            # Every process of the leased uid is this worker's.
            boost_priority=(lambda: os.setpriority(os.PRIO_USER, uid, 0)) if niceness else None,
        )


def _nicer(niceness: int) -> Callable[[], None]:
    """A preexec callable that makes the started tree `niceness` nicer."""

    def apply() -> None:
        os.nice(niceness)

    return apply


def _announced(read_fd: int) -> bool:
    """Whether ANNOUNCE wrote its byte (read without blocking: a leftover may hold the pipe open)."""
    os.set_blocking(read_fd, False)
    try:
        return bool(os.read(read_fd, 64))
    except BlockingIOError:
        return False


def _launch_failure(outcome: RunOutcome) -> str:
    """Why the jail never started the worker, from what setpriv, prlimit or bwrap said."""
    how = "timed out" if outcome.timed_out else f"exit status {outcome.exit_code}"
    tail = outcome.stderr_tail.strip()[-1000:]
    return f"the bwrap sandbox failed before the worker started ({how})" + (f": {tail}" if tail else "")


_NAMESPACE_PROBLEM: list[str | None] = []


def _namespaces_problem() -> str | None:
    """Whether bwrap can actually build a jail here (user namespaces allowed); cached."""
    if not _NAMESPACE_PROBLEM:
        command = ["bwrap", "--unshare-all", "--die-with-parent", *_host_system_binds(), "--", "/usr/bin/true"]
        try:
            # Under a leased uid: one a grade is using is swept at its end, and the probe with it.
            with lease_uid(own_uid_unless_root=True) as uid:
                if is_root():
                    command = ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--no-new-privs", "--", *command]
                probe = subprocess.run(command, capture_output=True, timeout=20)
            problem = (
                None
                if probe.returncode == 0
                else (
                    "bwrap cannot create namespaces here: "
                    + probe.stderr.decode(errors="replace").strip()[-300:]
                    + " (enable unprivileged user namespaces: sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces)"
                )
            )
        except RuntimeError as error:  # every uid is leased right now: say so, and probe again next time
            return f"bwrap could not be probed: {error}"
        except (OSError, subprocess.TimeoutExpired) as error:
            problem = f"bwrap failed to start: {error}"
        _NAMESPACE_PROBLEM.append(problem)
    return _NAMESPACE_PROBLEM[0]


register(BwrapSandbox())
