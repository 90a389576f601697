"""The `ray` executor on a real local Ray cluster (2 CPUs, started here): grades through it read the
same as local grades, a grade whose Ray worker is killed mid-grade is retried (or, without retries,
recorded as an infra_error), a run folder over Ray holds one line per attempt and resumes, and the
server's grading queue runs on it. Skipped only when the `ray` extra is not installed."""

from __future__ import annotations

import os
import shutil
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

ray = pytest.importorskip("ray", reason="the ray executor needs the 'ray' extra: pip install 'kernel-gym[ray]'")

from gym.errors import ExecutorError, KernelGymError, MissingExtra, TaskBundleError  # noqa: E402
from gym.execution import GradeOptions, executor_grader, make_executor  # noqa: E402
from gym.execution.batch import grade_many  # noqa: E402
from gym.execution.ray_executor import MAX_BUNDLE_BYTES, PID_DIR_ENV, GradeRequest, RayExecutor, _load_bundled_task, pid_file_prefix, task_bundle  # noqa: E402
from gym.harness.agents import make_agent  # noqa: E402
from gym.harness.run_folder import RunConfig, read_grade, read_manifest, read_results  # noqa: E402
from gym.harness.runner import run_agent  # noqa: E402
from gym.schema.result import GradeResult, Status  # noqa: E402
from gym.serve.server import ServerConfig  # noqa: E402
from gym.tasks.contract_presets import with_contract  # noqa: E402
from gym.tasks.loader import find_task  # noqa: E402
from gym.tasks.model import Task  # noqa: E402

# A representative slice of l1 (each real grade is ~5 s of CPU here; the whole suite is in scripts/bench_grading.py).
SOLVED = ["l1/vector_add", "l1/silu", "l1/softmax"]
# Long enough never to fire on a loaded 2-core machine; only a broken executor waits for it.
PATIENCE_S = 120.0


@pytest.fixture(scope="module")
def pid_dir() -> Iterator[Path]:
    """A real local Ray of 2 CPUs for this module; yields the folder where every grade attempt records its
    Ray worker's pid (PID_DIR_ENV, set through the cluster's runtime environment)."""
    # Ray's session folder holds unix sockets: a short path under the system temp folder.
    temp = Path(tempfile.mkdtemp(prefix="kgym-ray-"))
    pids = temp / "pids"
    pids.mkdir()
    ray.init(
        num_cpus=2,
        object_store_memory=100 * 1024 * 1024,
        include_dashboard=False,
        log_to_driver=False,
        _temp_dir=str(temp / "ray"),
        runtime_env={"env_vars": {PID_DIR_ENV: str(pids)}},
    )
    try:
        yield pids
    finally:
        ray.shutdown()
        shutil.rmtree(temp, ignore_errors=True)


@pytest.fixture(scope="module")
def executor(pid_dir: Path) -> Iterator[RayExecutor]:
    built = RayExecutor()
    try:
        yield built
    finally:
        built.close()


def attempt_pids(pid_dir: Path, task_id: str) -> list[int]:
    """The Ray worker pids of every attempt at `task_id` so far, oldest first."""
    files = sorted(pid_dir.glob(pid_file_prefix(task_id) + "*"), key=lambda path: path.stat().st_mtime_ns)
    return [int(path.name.removeprefix(pid_file_prefix(task_id)).split(".")[0]) for path in files]


def kill_first_attempt(pid_dir: Path, task_id: str, seen: int = 0) -> threading.Thread:
    """A thread that SIGKILLs the Ray worker of `task_id`'s next attempt (after `seen` earlier ones) once it starts."""

    def watch() -> None:
        deadline = time.monotonic() + PATIENCE_S
        while time.monotonic() < deadline:
            pids = attempt_pids(pid_dir, task_id)
            if len(pids) > seen:
                os.kill(pids[seen], signal.SIGKILL)
                return
            time.sleep(0.02)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def wrong_vector_add(tmp_path: Path) -> Path:
    """vector_add's shipped solution, mutated to subtract."""
    source = find_task("l1/vector_add").solution_path.read_text()
    assert "x + y" in source
    path = tmp_path / "wrong_vector_add.py"
    path.write_text(source.replace("x + y", "x - y"))
    return path


def test_ray_grades_read_like_local_grades(executor: RayExecutor, tmp_path: Path) -> None:
    assert executor.name == "ray" and executor.concurrency == 2 and not executor.gpu
    tasks = [find_task(task_id) for task_id in SOLVED]
    cheat = tmp_path / "cheat.py"
    cheat.write_text("import os\n\ndef kernel(x, y):\n    return os.system('true')\n")
    jobs: list[tuple[Task, Path]] = [(task, task.solution_path) for task in tasks]
    jobs += [(tasks[0], wrong_vector_add(tmp_path)), (tasks[0], cheat)]
    over_ray = grade_many(jobs, executor=executor)
    local = grade_many(jobs, parallel=2)
    assert [result.status for result in over_ray] == [result.status for result in local]
    assert [result.status for result in over_ray] == [Status.passed] * len(SOLVED) + [Status.wrong_answer, Status.rejected]
    for (task, _), result, local_result in zip(jobs, over_ray, local):
        assert result.task_id == task.id and result.task_version == task.spec.version
        assert result.environment.sandbox == "bwrap" and result.environment.device == "cpu"
        assert result.submission_sha256 == local_result.submission_sha256


def test_a_killed_worker_is_retried_and_without_retries_is_an_infra_error(executor: RayExecutor, pid_dir: Path) -> None:
    task = find_task("l1/silu")
    before = len(attempt_pids(pid_dir, task.id))
    killer = kill_first_attempt(pid_dir, task.id, seen=before)
    result = executor.grade(task, task.solution_path)
    killer.join(timeout=1)
    pids = attempt_pids(pid_dir, task.id)[before:]
    assert result.status == Status.passed, result.error
    assert len(pids) == 2 and pids[0] != pids[1]  # the killed attempt, then the retry on another worker

    no_retries = RayExecutor(max_retries=0)
    before = len(attempt_pids(pid_dir, task.id))
    killer = kill_first_attempt(pid_dir, task.id, seen=before)
    lost = no_retries.grade(task, task.solution_path)
    killer.join(timeout=1)
    assert lost.status == Status.infra_error and lost.task_id == task.id
    assert lost.error is not None and "the Ray worker running the grade died" in lost.error and "WorkerCrashedError" in lost.error
    assert "after 1 attempt(s), no retries allowed" in lost.error
    assert lost.error in lost.feedback and len(attempt_pids(pid_dir, task.id)) == before + 1
    no_retries.close()
    assert ray.is_initialized()  # the executor found Ray running: close() leaves it alone


def test_close_cancels_the_grades_in_flight(pid_dir: Path) -> None:
    task = find_task("l1/vector_add")
    closing = RayExecutor()
    before = len(attempt_pids(pid_dir, task.id))
    results: list[GradeResult] = []
    grading = threading.Thread(target=lambda: results.append(closing.grade(task, task.solution_path)))
    grading.start()
    deadline = time.monotonic() + PATIENCE_S
    while len(attempt_pids(pid_dir, task.id)) == before and time.monotonic() < deadline:
        time.sleep(0.02)
    closing.close()
    grading.join(timeout=PATIENCE_S)
    assert len(results) == 1 and results[0].status == Status.infra_error
    assert results[0].error is not None and "closed while the grade ran" in results[0].error
    assert closing.grade(task, task.solution_path).error == "the ray executor is closed"


def test_a_run_over_ray_keeps_one_line_per_attempt_and_resumes(executor: RayExecutor, pid_dir: Path, tmp_path: Path) -> None:
    task_ids = ["l1/vector_add", "l1/silu"]
    tasks = [find_task(task_id) for task_id in task_ids]
    config = RunConfig(agent="solutions", tasks=task_ids, attempts=2, concurrency=1, sandbox="bwrap", device="cpu")
    grader = executor_grader(executor, GradeOptions(sandbox="bwrap"))
    run_dir = tmp_path / "run"
    before = len(attempt_pids(pid_dir, "l1/vector_add"))
    killer = kill_first_attempt(pid_dir, "l1/vector_add", seen=before)
    stop = threading.Event()
    first = run_agent(make_agent("solutions"), tasks, run_dir, config, grader=grader, stop=stop, on_attempt=lambda line: stop.set())
    killer.join(timeout=1)
    assert first.interrupted and not first.complete and first.graded_now == 1
    resumed = run_agent(make_agent("solutions"), tasks, run_dir, config, grader=grader, resume=True)
    assert resumed.complete and resumed.graded_now == 1
    lines = read_results(run_dir)
    keys = [(line.task_id, line.attempt) for line in lines]
    assert sorted(keys) == [(task_id, 1) for task_id in sorted(task_ids)]  # one line per attempt, none twice
    assert all(line.status == Status.passed for line in lines), [(line.task_id, line.status, read_grade(run_dir, line).error) for line in lines]
    assert all(read_grade(run_dir, line).status == Status.passed for line in lines)
    assert len(attempt_pids(pid_dir, "l1/vector_add")) - before == 2  # the killed attempt was graded again, once
    manifest = read_manifest(run_dir)
    assert manifest.resumed == 1 and manifest.ended_at is not None


def test_the_server_grading_queue_runs_on_ray(executor: RayExecutor, tmp_path: Path) -> None:
    from gym.serve.client import GymClient
    from tests.support.server_fixtures import running_server

    task = find_task("l1/vector_add")
    wrong = wrong_vector_add(tmp_path).read_text()
    with running_server(ServerConfig(grader=executor_grader(executor), max_concurrent_grades=2)) as url, GymClient(url, timeout_s=60) as client:
        right_id = client.submit(task.id, task.solution_path.read_text()).id
        wrong_id = client.submit(task.id, wrong).id
        right = client.wait_result(right_id, timeout_s=PATIENCE_S, poll_s=0.1)
        wrong_result = client.wait_result(wrong_id, timeout_s=PATIENCE_S, poll_s=0.1)
        assert right.status == Status.passed and right.task_id == task.id
        assert wrong_result.status == Status.wrong_answer and wrong_result.error is not None


def test_a_task_folder_too_large_to_travel_is_an_infra_error(executor: RayExecutor, tmp_path: Path) -> None:
    task = find_task("l1/vector_add")
    folder = tmp_path / "l1" / "vector_add"
    shutil.copytree(task.folder, folder)
    (folder / "data.bin").write_bytes(b"\0" * (MAX_BUNDLE_BYTES + 1))
    heavy = task.model_copy(update={"folder": folder})
    with pytest.raises(TaskBundleError, match="more than a Ray grade carries"):
        task_bundle(heavy)
    result = executor.grade(heavy, task.solution_path)
    assert result.status == Status.infra_error and result.error is not None and "cannot be sent to Ray" in result.error


def test_the_bundle_carries_the_spec_the_driver_holds(tmp_path: Path) -> None:
    task = with_contract(find_task("l1/softmax"), "kernelbench")
    bundle = task_bundle(task)
    assert sorted(bundle.files) == [
        "references/softmax.py",
        "tasks/l1/softmax/solution.py",
        "tasks/l1/softmax/solution_helion.py",
        "tasks/l1/softmax/task.toml",
    ]
    request = GradeRequest(
        bundle=bundle,
        spec_json=task.spec.model_dump_json(),
        submission_name="s.py",
        submission=b"",
        options_json=GradeOptions().model_dump_json(),
        gpu=False,
        warm_pool=False,
    )
    loaded = _load_bundled_task(request)
    assert loaded.id == task.id and loaded.spec == task.spec and loaded.spec != find_task("l1/softmax").spec
    assert (loaded.folder / "task.toml").read_bytes() == task.task_file.read_bytes()


def test_a_cluster_without_gpus_refuses_gpu_grades(pid_dir: Path) -> None:
    with pytest.raises(ExecutorError, match="asks for 1 GPU"):
        RayExecutor(num_gpus=1)
    assert ray.is_initialized()
    assert RayExecutor(num_cpus=2).concurrency == 1 and RayExecutor(concurrency=5).concurrency == 5


def test_without_the_extra_the_executor_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    with pytest.raises(MissingExtra) as missing:
        make_executor("ray")
    assert str(missing.value) == "the ray executor needs the 'ray' extra: pip install 'kernel-gym[ray]'"
    assert isinstance(missing.value, KernelGymError)
