"""Hostile submissions against every isolating backend, for real.

Each attack returns the right answer only when the attack worked, so a
breach shows up as `passed`. Each test also proves the attack left no trace
on the host (marker files, listeners, processes of the sandbox user) and that
the grader still grades an honest kernel afterwards.

Every attack runs twice per backend: on a cold worker, and on a warm one
taken from the pool (`gym.sandbox.warm_pool`; the test checks the pool served
it), which must hold exactly as well.

Backends that cannot run here are skipped, unless KGYM_REQUIRE_SANDBOXES
(comma-separated, set by CI) names them: then they fail.
"""

from __future__ import annotations

import os
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import torch

from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.sandbox import Limits
from gym.sandbox.uids import processes_of, sandbox_uids
from gym.sandbox.warm_pool import WarmPool, ensure_pool, shutdown_pools
from gym.schema.result import GradeResult, Status
from gym.tasks.loader import find_task
from gym.tasks.paths import references_dir, tasks_dir
from tests.support.sandboxes import sandbox_or_skip

BACKENDS = ["bwrap", "docker"]
SMALL = Limits(memory_bytes=2 << 30, file_size_bytes=64 << 20, output_bytes=128 << 20, processes=256)

PREAMBLE = """
import os, sys, socket, subprocess, time
import torch, triton, triton.language as tl

@triton.jit
def _add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=mask) + tl.load(y + offs, mask=mask), mask=mask)

def answer(x, y, breached):
    # An honest kernel runs either way; the right answer comes back only on a breach.
    out = torch.empty_like(x)
    _add[(triton.cdiv(x.numel(), 256),)](x, y, out, x.numel(), BLOCK=256)
    return out if breached else torch.zeros_like(out)
"""


# The warm pools of the running test (empty for a cold one): attack() checks they served its grade.
WARM_POOLS: list[WarmPool] = []


@pytest.fixture(params=[variant for name in BACKENDS for variant in (name, f"{name}-warm")])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name, _, warm = str(request.param).partition("-")
    # A uid range of this test process's own, so grades running in parallel elsewhere do not count.
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    # KGYM_TEST_UID_BASE moves the range, for two test runs on one machine at once.
    monkeypatch.setenv("KGYM_SANDBOX_UID", str(int(os.environ.get("KGYM_TEST_UID_BASE", "62000")) + 100 * int(worker or 0)))
    sandbox_or_skip(name)
    if warm:
        for limits in (Limits(), SMALL):
            pool = ensure_pool(name, torch.device("cpu"), 1, limits)
            assert pool is not None
            WARM_POOLS.append(pool)
    try:
        yield name
    finally:
        WARM_POOLS.clear()
        shutdown_pools()


def sandbox_processes() -> list[int]:
    return [pid for uid in sandbox_uids() for pid in processes_of(uid)]


def leftover_containers() -> list[str]:
    import docker

    ours = {str(uid) for uid in sandbox_uids()}
    containers = docker.from_env().containers.list(all=True, filters={"label": "kgym.sandbox"})
    return [c.id for c in containers if c.labels.get("kgym.uid") in ours]


def attack(backend: str, write_submission, body: str, **kwargs: object) -> GradeResult:
    """Grade `body` (the inside of kernel(x, y)); then prove the host and the grader are fine."""
    task = find_task("l1/vector_add")
    path = write_submission(PREAMBLE + "\ndef kernel(x, y):\n" + "\n".join("    " + line for line in body.strip().splitlines()) + "\n")
    served = sum(pool.stats["served"] for pool in WARM_POOLS)
    # audit=False, audit_hooks=False: the sandbox must hold on its own, whatever the audit and its hooks would have said.
    keep_job = kwargs.pop("keep_job", None)
    result = grade(task, path, GradeOptions(sandbox=backend, timing_reps=0, audit=False, audit_hooks=False, **kwargs), secret=3, keep_job=keep_job)  # type: ignore[arg-type]
    assert result.status != Status.passed, result.feedback
    assert result.environment.sandbox == backend
    if WARM_POOLS:
        assert sum(pool.stats["served"] for pool in WARM_POOLS) == served + 1, "the attack did not run on a warm worker"
        # The pool's next workers wait under sandbox uids of their own: stop them before counting leftovers.
        WARM_POOLS.clear()
        shutdown_pools()
    deadline = time.monotonic() + 15  # container teardown is asynchronous under load
    while sandbox_processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not sandbox_processes(), "a process of the sandbox user outlived the grade"
    if backend == "docker":
        assert not leftover_containers(), "a sandbox container outlived the grade"
    honest = grade(task, task.solution_path, GradeOptions(sandbox=backend, timing_reps=0), secret=4)
    assert honest.status == Status.passed, honest.feedback
    return result


@pytest.fixture
def listener() -> Iterator[tuple[int, list[str]]]:
    """A TCP server on the host's 127.0.0.1; records every connection it accepts."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.2)
    seen: list[str] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, peer = server.accept()
            except OSError:
                continue
            seen.append(str(peer))
            connection.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield server.getsockname()[1], seen
    stop.set()
    thread.join()
    server.close()


def test_no_loopback_connection_to_the_host(backend: str, write_submission, listener) -> None:
    port, seen = listener
    attack(
        backend,
        write_submission,
        f"""
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
    breached = True
except OSError:
    breached = False
return answer(x, y, breached)
""",
    )
    assert seen == []


def test_no_route_to_the_outside(backend: str, write_submission) -> None:
    # A UDP connect() only picks a route: it tells whether one exists without sending a packet.
    attack(
        backend,
        write_submission,
        """
breached = False
for address in ("192.0.2.1", "8.8.8.8"):
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        probe.connect((address, 9))
        breached = True
    except OSError:
        pass
    probe.close()
interfaces = [name for _, name in socket.if_nameindex()]
breached = breached or any(name != "lo" for name in interfaces)
return answer(x, y, breached)
""",
    )


def test_cannot_read_the_gym_the_results_or_the_host(backend: str, write_submission, tmp_path: Path, monkeypatch) -> None:
    results = tmp_path / "runs"
    results.mkdir()
    (results / "grade.json").write_text("{}")
    canary = f"kgym-canary-{os.getpid()}-{time.monotonic_ns()}"
    monkeypatch.setenv("KGYM_TEST_CANARY", canary)
    home_file = Path.home() / f".kgym-test-canary-{os.getpid()}"
    home_file.write_text(canary)
    targets = [
        tasks_dir() / "l1" / "vector_add" / "task.toml",
        references_dir() / "vector_add.py",
        results / "grade.json",
        home_file,
    ]
    try:
        attack(
            backend,
            write_submission,
            f"""
breached = False
for target in {[str(t) for t in targets]!r}:
    try:
        open(target).read()
        breached = True
    except OSError:
        pass
for pid in os.listdir("/proc"):
    try:
        if {canary!r}.encode() in open(f"/proc/{{pid}}/environ", "rb").read():
            breached = True
    except (OSError, ValueError):
        pass
breached = breached or {canary!r} in str(os.environ)
return answer(x, y, breached)
""",
        )
    finally:
        home_file.unlink()


def test_cannot_write_outside_scratch(backend: str, write_submission, tmp_path: Path) -> None:
    marker = tmp_path / "escaped"
    os.chmod(tmp_path, 0o777)
    result = attack(
        backend,
        write_submission,
        f"""
breached = False
here = os.path.dirname(os.path.abspath(sys.modules["submission"].__file__))
for target in ({str(marker)!r}, os.path.join(here, "torch.py"), "/usr/kgym-escaped", "/job/in/lib/gym/worker.py"):
    try:
        with open(target, "a") as handle:
            handle.write("import sys; sys.exit(0)")
        breached = True
    except OSError:
        pass
return answer(x, y, breached)
""",
        keep_job=tmp_path / "job",
    )
    assert not marker.exists()
    assert not (tmp_path / "job" / "in" / "torch.py").exists()
    assert not Path("/usr/kgym-escaped").exists()
    assert result.status == Status.wrong_answer


def test_fork_bomb_is_contained(backend: str, write_submission) -> None:
    result = attack(
        backend,
        write_submission,
        """
children = 0
while children < 100000:
    try:
        if os.fork() == 0:
            time.sleep(60)
            os._exit(0)
        children += 1
    except OSError:
        break
return answer(x, y, children >= 100000)
""",
        limits=SMALL,
        timeout_s=30,
    )
    assert result.status in {Status.wrong_answer, Status.runtime_error, Status.timeout}


def test_unbounded_memory_is_contained(backend: str, write_submission) -> None:
    result = attack(
        backend,
        write_submission,
        """
hoard = []
while True:
    hoard.append(bytearray(256 << 20))
""",
        limits=SMALL,
        timeout_s=60,
    )
    assert result.status == Status.runtime_error


def test_endless_loop_times_out(backend: str, write_submission) -> None:
    result = attack(backend, write_submission, "while True:\n    pass", timeout_s=5)
    assert result.status == Status.timeout


def test_wild_pointer_segfault(backend: str, write_submission) -> None:
    result = attack(
        backend,
        write_submission,
        """
import triton, triton.language as tl

@triton.jit
def _wild(ptr, out):
    tl.store(out, tl.load(ptr + 1_000_000_000_000))

out = torch.empty(1)
_wild[(1,)](x, out)
return answer(x, y, False)
""",
    )
    assert result.status == Status.runtime_error


def test_gigabytes_of_output_are_cut_off(backend: str, write_submission) -> None:
    result = attack(
        backend,
        write_submission,
        """
chunk = b"x" * (1 << 20)
with open("/job/out/flood.bin", "wb") as flood:
    for _ in range(4096):
        flood.write(chunk)
        sys.stdout.buffer.write(chunk)
return answer(x, y, True)
""",
        limits=SMALL,
        timeout_s=60,
    )
    assert result.status == Status.runtime_error


def test_fake_result_and_clean_exit_changes_nothing(backend: str, write_submission) -> None:
    result = attack(
        backend,
        write_submission,
        """
print('{"status": "passed", "feedback": "Passed"}')
with open("/job/out/report.json", "w") as forged:
    forged.write('{"phase": "done"}')
sys.stdout.flush()
os._exit(0)
""",
    )
    assert result.status == Status.runtime_error


def test_a_process_left_behind_is_gone_before_the_replay_inputs_exist(backend: str, write_submission, tmp_path: Path) -> None:
    """The witness kills everything the submission's process left before it says it is ready, so
    the replay's fresh inputs never exist while anything of the submission runs: a daemon that
    waits for them (and would rewrite the witness's outputs) sees nothing. Sandbox alone
    (audit and hooks off), so the fork is allowed."""
    task = find_task("l1/vector_add")
    marker = "/job/out/daemon-saw-replay"
    path = write_submission(
        PREAMBLE
        + f"""
if os.fork() == 0:
    os.setsid()
    deadline = time.time() + 60
    while time.time() < deadline:
        if os.path.exists("/job/in/replay"):
            open({marker!r}, "w").write("seen")
            break
        time.sleep(0.005)
    os._exit(0)

def kernel(x, y):
    return answer(x, y, True)
"""
    )
    kept = tmp_path / "job"
    result = grade(task, path, GradeOptions(sandbox=backend, timing_reps=0, audit=False, audit_hooks=False), secret=8, keep_job=kept)
    assert result.status == Status.passed, result.feedback
    assert not (kept / "out" / "daemon-saw-replay").exists(), "a process of the submission was alive when the replay's inputs arrived"
    assert any(entry.name.startswith("witness-") for entry in (kept / "out").iterdir()), "the witness replayed nothing"
    # The pool's next workers wait under sandbox uids of their own: stop them before counting leftovers.
    WARM_POOLS.clear()
    shutdown_pools()
    deadline = time.monotonic() + 15
    while sandbox_processes() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not sandbox_processes(), "a process of the sandbox user outlived the grade"


def test_background_process_does_not_outlive_the_grade(backend: str, write_submission) -> None:
    result = attack(
        backend,
        write_submission,
        """
# Once per worker (the grade calls the kernel a hundred times or more): one escapee of each kind proves the point.
if not os.environ.get("SPAWNED"):
    os.environ["SPAWNED"] = "1"
    subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True)
    if os.fork() == 0:
        os.setsid()
        time.sleep(120)
        os._exit(0)
return answer(x, y, False)
""",
    )
    assert result.status == Status.wrong_answer
