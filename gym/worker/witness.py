"""The witness: the worker's first process, which never runs a line of the submission.

    python -P -m gym.worker IN_DIR OUT_DIR      (the sandbox's command; pid 1 of its namespace)

It hardens itself (non-dumpable, so no process of the same uid can ptrace it, read
its memory or open its file descriptors; as pid 1 of the sandbox's pid namespace
it ignores every signal sent from inside), keeps its standard output to itself,
and forks the submission's process, which runs the worker proper
(`gym.worker.submission.main`) with its standard output sent to standard error.
When that process has exited, the witness kills whatever it left behind (every
other process of the namespace) and only then tells the trusted side, on the
private standard output, that it is ready for the replay (`witness_protocol`).
Nothing the submission started is alive from that moment, so the fresh inputs the
trusted side now hands over, and what the witness writes, are out of its reach.

The replay itself is `gym.worker.replayer` (`replay_all`): for each item the grader
chose, the tape of one call, replayed with only the file's jit functions on fresh
inputs. The outputs and a report go into a folder whose name was secret until now,
and the report's sha256 goes out on the private output.
"""

from __future__ import annotations

import hashlib
import os
import signal
import time
import traceback
from collections.abc import Callable
from pathlib import Path

import torch

from .protocol import MAX_TEXT, REQUEST_FILE, WARM_GO_FILE, WARM_POLL_S, WARM_READY_FILE, WARM_READY_TEXT, WorkerRequest, worker_device
from .replayer import replay_all
from .witness_protocol import (
    REPLAY_DIR,
    REPLAY_POLL_S,
    REPLAY_REQUEST_FILE,
    WITNESS_DONE,
    WITNESS_READY,
    WITNESS_REPORT_FILE,
    ReplayRequest,
    witness_line,
)

# Signals the witness ignores (from inside the namespace only a signal with a handler reaches pid 1;
# SIG_IGN keeps the witness alive wherever it runs). The trusted side kills it with SIGKILL from outside.
IGNORED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2, signal.SIGPIPE, signal.SIGALRM)
# How long the witness keeps killing leftovers before it gives up on a clean namespace, seconds.
CLEANUP_S = 5.0
# How long the witness waits for the replay folder once it said it is ready, seconds (the trusted
# side moves it in within seconds; a caller that never does ends the job instead of hanging it).
REPLAY_WAIT_S = 300.0
PR_SET_DUMPABLE = 4


def _set_dumpable(flag: int) -> bool:
    try:
        import ctypes

        return int(ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, flag, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def harden() -> None:
    _set_dumpable(0)
    for number in IGNORED:
        signal.signal(number, signal.SIG_IGN)


def _soften_child() -> None:
    """In the submission's process: default signals, dumpable (it owns nothing of the witness's)."""
    for number in IGNORED:
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    _set_dumpable(1)


def other_pids() -> list[int]:
    """Processes of this pid namespace other than the witness (pid 1 there)."""
    me = os.getpid()
    return [int(name) for name in os.listdir("/proc") if name.isdigit() and int(name) != me]


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_leftovers(child: int) -> bool:
    """Kill everything the submission's process left; True once nothing is left. As pid 1 of a
    namespace: every other process there; elsewhere (the unsafe process backend): its group."""
    if os.getpid() != 1:
        try:
            os.killpg(child, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        _reap()
        return True
    deadline = time.monotonic() + CLEANUP_S
    while time.monotonic() < deadline:
        try:
            os.kill(-1, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _reap()
        if not other_pids():
            return True
        time.sleep(0.01)
    return not other_pids()


def wait_for(path: Path, poll_s: float, deadline: float | None = None) -> bool:
    while not path.exists():
        if deadline is not None and time.monotonic() > deadline:
            return False
        time.sleep(poll_s)
    return True


def warm_prelude(device_type: str) -> None:
    """What every job needs, imported before the job exists (nothing of it is the submission's).
    No CUDA is touched: the submission's process is forked from this one and makes its own context."""
    import triton
    import triton.language
    from triton.runtime import jit  # noqa: F401

    if device_type == "cpu":
        import triton.runtime.interpreter

        from .op_trace import OpTrace

        # The lazy state the first dispatch through a mode sets up (safe to fork: no thread pool runs yet).
        with OpTrace():
            torch.ones(64).add(1)
    del triton


def _text(error: BaseException) -> str:
    return "".join(traceback.format_exception_only(type(error), error)).strip()[-MAX_TEXT:]


def _exit_status(status: int) -> int:
    if os.WIFSIGNALED(status):
        return -os.WTERMSIG(status)
    return os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1


def serve(in_dir: Path, out_dir: Path, run_submission: Callable[[Path, Path], int], warm: tuple[str, float] | None = None) -> int:
    """The whole job: (warm: prepare and wait for the go file), fork the submission's process,
    clean up after it, then replay when the request asks for it. Returns the exit status to use."""
    harden()
    channel = os.dup(1)
    if warm is not None:
        device_type, max_idle_s = warm
        warm_prelude(worker_device(device_type).split(":")[0])
        ready = out_dir / (WARM_READY_FILE + ".tmp")
        ready.write_text(WARM_READY_TEXT)
        os.replace(ready, out_dir / WARM_READY_FILE)
        if not wait_for(in_dir / WARM_GO_FILE, WARM_POLL_S, time.monotonic() + max_idle_s):
            return 0
    request = WorkerRequest.model_validate_json((in_dir / REQUEST_FILE).read_text())
    child = os.fork()
    if child == 0:
        code = 70
        try:
            os.close(channel)
            os.dup2(2, 1)
            os.setpgid(0, 0)
            _soften_child()
            code = run_submission(in_dir, out_dir)
        finally:
            os._exit(code)
    _, status = os.waitpid(child, 0)
    exit_status = _exit_status(status)
    clean = kill_leftovers(child)
    if not request.replay:
        return exit_code(exit_status)
    if not clean:
        os.write(channel, witness_line("unclean"))
        return 1
    os.write(channel, witness_line(WITNESS_READY))
    replay_dir = in_dir / REPLAY_DIR
    if not wait_for(replay_dir / REPLAY_REQUEST_FILE, REPLAY_POLL_S, time.monotonic() + REPLAY_WAIT_S):
        return exit_code(exit_status)
    replay_request = ReplayRequest.model_validate_json((replay_dir / REPLAY_REQUEST_FILE).read_text())
    folder = out_dir / replay_request.out_name
    os.mkdir(folder)
    report = replay_all(request, replay_request, in_dir, out_dir, folder)
    report.submission_exit = exit_status
    data = report.model_dump_json().encode()
    descriptor = os.open(folder / WITNESS_REPORT_FILE, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "wb") as handle:
        handle.write(data)
    os.write(channel, witness_line(WITNESS_DONE, replay_request.out_name, hashlib.sha256(data).hexdigest()))
    return exit_code(exit_status)


def exit_code(status: int) -> int:
    """The witness's own exit status for the submission's: as is, or 128 + the signal that killed it."""
    return status if status >= 0 else 128 - status
