"""One grade never disturbs the next: a fork bomb's processes are all gone before its uid is
leased again, a uid that cannot be swept clean is quarantined, and a sandbox that fails
before the worker starts says so (`RunOutcome.infra_failure`) instead of blaming the
submission.

The sandboxed jobs are real (bwrap and docker, no mocks) with a stand-in worker; the
quarantine bookkeeping is also tested with a fake process table. Backends that cannot run
here are skipped, unless KGYM_REQUIRE_SANDBOXES (comma-separated) names them.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.sandbox import Job, Limits, RunOutcome, available_sandboxes, docker_backend, uids
from gym.schema.result import Status
from gym.tasks.loader import find_task
from tests.support.sandboxes import sandbox_or_skip

BACKENDS = ["bwrap", "docker"]
# Small enough for a bomb to fill in a moment.
BOMB_LIMITS = Limits(processes=192, memory_bytes=4 << 30)
# An honest job needs a few dozen: a bomb's leftovers would crowd it out.
HONEST_LIMITS = Limits(processes=64)
ROUNDS = 3
# MiB each bomb process holds: enough that bwrap's take a while to tear down (what exposed the
# old sweep); docker's less, since a container's bomb is slower to fork and its limit is its own.
HOARD_MIB = {"bwrap": 48, "docker": 8}

# Stands in for the worker: what it does is read from /job/in/mode.
FAKE_WORKER = """
import os, sys, threading, time
mode = open("/job/in/mode").read()
if mode == "bomb":
    # Children with a sizeable address space take a while to tear down once killed.
    hoard = bytearray(int(open("/job/in/hoard").read()) << 20)
    for offset in range(0, len(hoard), 4096):
        hoard[offset] = 1
    forked = 0
    while True:
        try:
            pid = os.fork()
        except OSError:
            break  # the process limit: every slot is taken
        if pid == 0:
            while True:  # each child keeps forking into whatever slot frees up
                try:
                    os.fork()
                except OSError:
                    time.sleep(0.01)
        forked += 1
    open("/job/out/forked", "w").write(str(forked))
    # The worker exits and leaves the bomb running: the sandbox must kill all of it.
elif mode == "honest":
    # What an honest worker needs at least: threads (torch's pools) and a child (Triton's compiler).
    threads = [threading.Thread(target=time.sleep, args=(0.1,)) for _ in range(24)]
    for thread in threads:
        thread.start()
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    for thread in threads:
        thread.join()
    open("/job/out/ok", "w").write("ok")
elif mode == "pretend":
    # A submission cannot pass its own failure off as the sandbox's.
    print("bwrap: Can't fork for pid 1: Resource temporarily unavailable", file=sys.stderr)
    sys.exit(125)
"""


def _uid_range(monkeypatch: pytest.MonkeyPatch, base: int) -> None:
    # Apart from test_sandbox.py (62000 + 100 * worker) and test_triton_cache.py (64000 + ...).
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    monkeypatch.setenv("KGYM_SANDBOX_UID", str(base + 100 * int(worker or 0)))


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    name = request.param
    _uid_range(monkeypatch, 66000)
    sandbox_or_skip(name)
    return name


@pytest.fixture
def fresh_quarantine(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict]:
    """A quarantine of this test's own (locks it still holds are closed afterwards)."""
    table: dict = {}
    monkeypatch.setattr(uids, "_QUARANTINE", table)
    yield table
    for handle in table.values():
        if handle is not None:
            handle.close()


def run_fake(backend: str, mode: str, limits: Limits = BOMB_LIMITS, timeout_s: float = 30) -> tuple[RunOutcome, list[str]]:
    """Run the stand-in worker in `mode`; its outcome and the files it left in OUT."""
    root = Path(tempfile.mkdtemp(prefix="kgym-cleanup-test-"))
    try:
        job = Job.in_folder(root, "cpu", limits)
        package = job.lib_dir / "gym" / "worker"
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
        (package / "__main__.py").write_text(FAKE_WORKER)
        (job.in_dir / "mode").write_text(mode)
        (job.in_dir / "hoard").write_text(str(HOARD_MIB[backend]))
        outcome = available_sandboxes()[backend].run(job, timeout_s=timeout_s)
        return outcome, sorted(path.name for path in job.out_dir.iterdir())
    finally:
        shutil.rmtree(root, ignore_errors=True)


def live_sandbox_processes() -> list[int]:
    """Live processes of this test's sandbox uids (zombies only wait for init to collect them)."""
    return [process.pid for uid in uids.sandbox_uids() for process in uids.scan(uid) if not process.zombie]


def run_bomb(backend: str) -> None:
    outcome, files = run_fake(backend, "bomb")
    assert outcome.infra_failure is None, outcome.infra_failure
    assert "forked" in files, outcome.stderr_tail
    # The moment run() returns, the uid is free for the next grade: nothing of the bomb may be left.
    assert live_sandbox_processes() == [], "a process of the bomb outlived its grade"


def test_bomb_then_honest_job_round_after_round(backend: str) -> None:
    for _ in range(ROUNDS):
        run_bomb(backend)
        outcome, files = run_fake(backend, "honest", HONEST_LIMITS)
        assert outcome.infra_failure is None, outcome.infra_failure
        assert outcome.exit_code == 0, outcome.stderr_tail
        assert files == ["ok"]
    assert uids.quarantined() & set(uids.sandbox_uids()) == set()


def test_bomb_then_honest_grade_passes(backend: str) -> None:
    run_bomb(backend)
    task = find_task("l1/vector_add")
    honest = grade(task, task.solution_path, GradeOptions(sandbox=backend, timing_reps=0), secret=4)
    assert honest.status == Status.passed, honest.feedback


def test_submission_cannot_pass_for_a_sandbox_failure(backend: str) -> None:
    outcome, _ = run_fake(backend, "pretend")
    assert outcome.exit_code == 125
    assert outcome.infra_failure is None


def test_bwrap_that_cannot_fork_is_an_infra_failure(backend: str) -> None:
    if backend != "bwrap":
        pytest.skip("bwrap only")
    if os.geteuid() != 0:
        pytest.skip("as an ordinary user the process limit counts all of the user's processes")
    # One process for the whole uid: bwrap itself cannot fork the jail (what leftovers used to cause).
    outcome, files = run_fake(backend, "honest", Limits(processes=1))
    assert outcome.infra_failure is not None
    assert "bwrap" in outcome.infra_failure and "failed before the worker started" in outcome.infra_failure
    assert files == []


def test_docker_that_cannot_start_is_an_infra_failure(backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if backend != "docker":
        pytest.skip("docker only")
    monkeypatch.setattr(docker_backend, "RUNTIME_PYTHON", "/nonexistent/python")
    outcome, files = run_fake(backend, "honest")
    assert outcome.infra_failure is not None
    assert "could not start the container" in outcome.infra_failure
    assert outcome.exit_code is None and files == []


class FakeProcesses:
    """A process table the sweep reads and kills through: uid -> live pids, and each kill round's uid."""

    def __init__(self) -> None:
        self.live: dict[int, list[int]] = {}
        self.killed: list[int] = []

    def scan(self, uid: int) -> list[uids.Process]:
        return [uids.Process(pid, zombie=False, ppid=1) for pid in self.live.get(uid, [])]

    def signal(self, uid: int, pids: list[int] | None = None) -> None:
        self.killed.append(uid)


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, fresh_quarantine: dict) -> FakeProcesses:
    _uid_range(monkeypatch, 68000)
    processes = FakeProcesses()
    monkeypatch.setattr(uids, "scan", processes.scan)
    monkeypatch.setattr(uids, "signal_uid", processes.signal)
    monkeypatch.setattr(uids, "CLEAN_DEADLINE_S", 0.05)
    return processes


def locked_elsewhere(uid: int) -> bool:
    """Whether another grader on this machine would find `uid` taken."""
    with open(uids._lock_folder() / f"{uid}.lock", "w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(handle, fcntl.LOCK_UN)
        return False


def test_a_uid_that_cannot_be_cleaned_is_quarantined_and_another_leased(fake: FakeProcesses) -> None:
    first = uids.uid_base()
    with uids.lease_uid() as uid:
        assert uid == first
        fake.live[uid] = [4242]  # something of this grade that no SIGKILL removes
    assert uids.quarantined() == {first}
    assert fake.killed.count(first) > 1, "the sweep gave up without retrying"
    assert locked_elsewhere(first), "a quarantined uid must stay taken for other graders too"
    with uids.lease_uid() as uid:
        assert uid == first + 1
    # Once it is clean, the next lease releases its lock, but this process never leases it again.
    del fake.live[first]
    with uids.lease_uid() as uid:
        assert uid == first + 1
    assert not locked_elsewhere(first)
    assert uids.quarantined() == {first}


def test_leftovers_found_at_lease_time_quarantine_too(fake: FakeProcesses) -> None:
    first = uids.uid_base()
    fake.live[first] = [4343]  # a grader that died mid-grade left this behind
    with uids.lease_uid() as uid:
        assert uid == first + 1
    assert uids.quarantined() == {first}


def test_kill_uid_sweeps_until_none_is_left(monkeypatch: pytest.MonkeyPatch) -> None:
    # Each SIGKILL round removes one process; the sweep must keep going until the scan is empty.
    left = [1, 2, 3, 4, 5]
    monkeypatch.setattr(uids, "scan", lambda uid: [uids.Process(pid, zombie=False, ppid=1) for pid in left])
    monkeypatch.setattr(uids, "signal_uid", lambda uid, pids=None: left.pop())
    assert uids.kill_uid(68990, deadline_s=5)
    assert left == []


@pytest.mark.skipif(os.geteuid() != 0, reason="making processes of another uid needs root")
def test_real_unreaped_zombies_quarantine_their_uid(monkeypatch: pytest.MonkeyPatch, fresh_quarantine: dict) -> None:
    _uid_range(monkeypatch, 68050)
    monkeypatch.setattr(uids, "CLEAN_DEADLINE_S", 0.3)
    first = uids.uid_base()
    # A parent outside the uid that never collects its dead children: more zombies than the allowance.
    script = (
        "import subprocess, sys, time\n"
        f"children = [subprocess.Popen(['sleep', '60'], user={first}, group={first}, extra_groups=[]) for _ in range({uids.ZOMBIE_ALLOWANCE + 4})]\n"
        "for child in children:\n"
        "    child.kill()\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None and parent.stdout.readline().strip() == "ready"
        with uids.lease_uid() as uid:
            assert uid == first + 1
        assert first in uids.quarantined()
    finally:
        parent.kill()
        parent.wait()
    # Its zombies went with their parent: the next lease finds the uid clean and lets go of its lock.
    uids.retry_quarantined(deadline_s=5)
    assert not locked_elsewhere(first)
