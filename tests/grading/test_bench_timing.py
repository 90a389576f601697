"""GPU timing logic, run on CPU: benchmark shapes timed by default on a GPU, one
figure per shape and their geometric mean, rounds capped by bytes, baselines
that never raise out of grade(), one timed grade per GPU, and outputs on the
grade's own GPU."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest
import torch

from gym.devices import lock as device_lock
from gym.grading.baselines import measure as baselines
from gym.grading.baselines.measure import BaselineSetting, build_timings, geometric_mean, shape_timings
from gym.grading.grader import _speed, grade
from gym.grading.judging.judge import check_structure
from gym.grading.judging.verdict import Verdict
from gym.grading.options import GradeOptions
from gym.grading.planning.plan import TimingRequest, call_bytes, calls_that_fit, plan_trials, plan_warmup_call, timed_trials
from gym.grading.running.job import GradeInProgress
from gym.grading.timing.timing_policy import TimingPolicy
from gym.grading.timing.timing_rounds import ShapeRounds, TimingRounds, run_rounds
from gym.sandbox import Job, Limits, RunOutcome
from gym.schema.result import ShapeTimings, Timings, TimingSummary
from gym.tasks.loader import find_task
from gym.tasks.model import Task
from gym.worker.protocol import REQUEST_FILE, CallRecord, OutputRecord, WorkerRequest

CPU = torch.device("cpu")


def with_bench(task: Task, *shapes: dict[str, int]) -> Task:
    """`task` with small benchmark shapes (so the interpreter can time them)."""
    spec = task.spec.model_copy(update={"shapes": task.spec.shapes.model_copy(update={"bench": list(shapes)})})
    return task.model_copy(update={"spec": spec})


@pytest.fixture(scope="module")
def vector_add() -> Task:
    return find_task("l1/vector_add")


def test_bench_times_every_benchmark_shape_and_checks_each(vector_add: Task) -> None:
    task = with_bench(vector_add, {"N": 64}, {"N": 300})
    trials = plan_trials(task, CPU, secret=3, timing=TimingRequest(reps=2, bench=True))
    timed = timed_trials(trials)
    assert [trial.label for trial in timed] == ["float32 bench #1", "float32 bench #2"]
    assert [trial.shape for trial in timed] == [{"N": 64}, {"N": 300}]
    for trial in timed:
        roles = [plan.role for plan in trial.calls]
        # Its own checked main call, then timed calls with their own expected outputs and seeds.
        assert roles == ["main", "timed", "timed"]
        assert all(plan.expected is not None and plan.seed is not None for plan in trial.calls[1:])
    # Without bench the first public trial is timed, as on CPU.
    assert [trial.label for trial in timed_trials(plan_trials(task, CPU, secret=3, timing=TimingRequest(reps=2)))] == ["float32 public #1"]


def test_a_round_of_timed_calls_is_capped_by_bytes(vector_add: Task) -> None:
    task = with_bench(vector_add, {"N": 1000}, {"N": 4000})
    trials = plan_trials(task, CPU, secret=3, timing=TimingRequest(reps=50, bench=True, round_bytes=200_000))
    small, large = timed_trials(trials)
    assert call_bytes(small) == 3 * 1000 * 4 and call_bytes(large) == 3 * 4000 * 4
    # The byte budget is shared by the two shapes: 100 kB each.
    assert sum(plan.role == "timed" for plan in small.calls) == 100_000 // 12_000
    assert sum(plan.role == "timed" for plan in large.calls) == 100_000 // 48_000
    # Never fewer than one call, however large one is.
    assert calls_that_fit(large, 20, 10) == 1 and calls_that_fit(large, 0, 10**9) == 0


class RecordingSandbox:
    """Records each job's request and fails it (so run_rounds stops after one)."""

    name = "recording"
    isolated = True

    def __init__(self) -> None:
        self.requests: list[WorkerRequest] = []

    def check(self) -> str | None:
        return None

    def run(self, job: Job, timeout_s: float, link: object = None) -> RunOutcome:
        self.requests.append(WorkerRequest.model_validate_json((job.in_dir / REQUEST_FILE).read_text()))
        return RunOutcome(exit_code=1, timed_out=False, wall_s=0.0, stdout_tail="", stderr_tail="crashed on purpose")


def grade_in_progress(task: Task, sandbox: Any, policy: TimingPolicy, limits: Limits | None = None) -> GradeInProgress:
    return GradeInProgress(
        task=task,
        submission=task.solution_path,
        device=CPU,
        secret=7,
        policy=policy,
        limits=limits or Limits(),
        sandbox=sandbox,
        sandbox_name="recording",
        timeout_s=60,
    )


def test_later_rounds_time_the_unstopped_shapes_together_within_the_byte_cap(vector_add: Task) -> None:
    task = with_bench(vector_add, {"N": 1000}, {"N": 4000})
    policy = TimingPolicy(min_reps=2, max_reps=100, budget_s=60, target_rse=1e-9)
    trials = plan_trials(task, CPU, secret=7, timing=TimingRequest(reps=2, bench=True))
    shapes = [ShapeRounds(trial=trial, warmup=plan_warmup_call(task, trial, CPU, 7), samples=[1.0, 3.0]) for trial in timed_trials(trials)]
    # An output limit of 240 kB: half of it for timed calls, 60 kB per shape.
    sandbox = RecordingSandbox()
    result = run_rounds(grade_in_progress(task, sandbox, policy, Limits(output_bytes=240_000)), TimingRounds(shapes=shapes))
    assert result.failure is not None and result.rounds == 2
    (request,) = sandbox.requests
    assert len(request.warmups) == 2
    # Doubling asks for 2 more calls per shape; the cap allows 60k // 12k = 5 and 60k // 48k = 1.
    assert len(request.calls) == 2 + 1


def fake_summary(median_s: float) -> TimingSummary:
    return TimingSummary(median_s=median_s, mean_s=median_s, p10_s=median_s, p90_s=median_s, min_s=median_s, reps=3)


def test_the_grade_speedup_is_the_geometric_mean_of_the_shapes() -> None:
    assert geometric_mean([2.0, 8.0]) == pytest.approx(4.0)
    assert geometric_mean([2.0, None]) is None and geometric_mean([]) is None
    shapes = [
        ShapeTimings(trial="a", shape={"N": 1}, candidate=fake_summary(1.0), speedup_vs_eager=2.0, speedup_vs_compile=1.0, sol_fraction=0.25),
        ShapeTimings(trial="b", shape={"N": 2}, candidate=fake_summary(1.0), speedup_vs_eager=8.0, speedup_vs_compile=None, sol_fraction=0.64),
    ]
    timings = Timings(device="NVIDIA H200", interpreted=False, trial="a", shapes=shapes)
    verdict = Verdict()
    speedup, speedup_compile, sol = _speed(timings, verdict)
    assert speedup == pytest.approx(4.0) and speedup_compile is None and sol == pytest.approx(0.4)
    assert verdict.flags == []


def test_a_shape_faster_than_light_is_flagged_and_nothing_ranks() -> None:
    shapes = [
        ShapeTimings(trial="float32 bench #1", shape={"N": 1}, candidate=fake_summary(1e-6), speedup_vs_eager=50.0, sol_fraction=0.5),
        ShapeTimings(trial="float32 bench #2", shape={"N": 2}, candidate=fake_summary(1e-6), speedup_vs_eager=90.0, sol_fraction=3.0),
    ]
    verdict = Verdict()
    speedup, speedup_compile, _ = _speed(Timings(device="NVIDIA H200", interpreted=False, trial="x", shapes=shapes), verdict)
    assert speedup is None and speedup_compile is None
    assert verdict.flags == ["below_speed_of_light"] and "float32 bench #2" in (verdict.error or "")


def test_a_baseline_that_runs_out_of_memory_is_a_note_not_an_exception(vector_add: Task, monkeypatch: pytest.MonkeyPatch) -> None:
    trial = timed_trials(plan_trials(vector_add, CPU, secret=1, timing=TimingRequest(reps=2)))[0]
    shape = ShapeRounds(trial=trial, warmup=plan_warmup_call(vector_add, trial, CPU, 1), samples=[1e-3, 2e-3])

    def out_of_memory(*args: Any) -> Any:
        raise torch.OutOfMemoryError("CUDA out of memory. Tried to allocate 64.00 GiB")

    monkeypatch.setattr(baselines, "reference_fn", lambda task, shape: out_of_memory)
    entry = shape_timings(BaselineSetting(task=vector_add, device=CPU, policy=TimingPolicy.for_device(CPU)), shape, "cpu", 1, False, None)
    assert entry.candidate is not None and entry.reference is None and entry.speedup_vs_eager is None
    assert "could not be timed" in (entry.compiled_note or "") and "OutOfMemoryError" in (entry.compiled_note or "")


def test_torch_compile_baselines_use_static_shapes(vector_add: Task, monkeypatch: pytest.MonkeyPatch) -> None:
    asked: dict[str, Any] = {}
    monkeypatch.setattr(torch, "compile", lambda fn, **options: asked.update(options) or fn)
    baselines.compiled_reference(vector_add, vector_add.spec.shapes.public[0])
    assert asked == {"dynamic": False}


def test_cpu_grades_time_one_small_shape_labelled_interpreted(vector_add: Task) -> None:
    result = grade(with_bench(vector_add, {"N": 64}), vector_add.solution_path, GradeOptions(sandbox="bwrap"), secret=2)
    assert result.status.value == "passed", result.feedback
    assert result.timings is not None and result.timings.interpreted
    assert [entry.trial for entry in result.timings.shapes] == ["float32 public #1"]
    assert result.speedup_vs_eager == pytest.approx(result.timings.shapes[0].speedup_vs_eager)


def test_a_bench_grade_reports_every_shape(vector_add: Task) -> None:
    result = grade(with_bench(vector_add, {"N": 64}, {"N": 300}), vector_add.solution_path, GradeOptions(sandbox="bwrap", bench=True), secret=2)
    assert result.status.value == "passed", result.feedback
    timings = result.timings
    assert timings is not None
    assert [(entry.trial, entry.shape) for entry in timings.shapes] == [("float32 bench #1", {"N": 64}), ("float32 bench #2", {"N": 300})]
    assert all(entry.candidate is not None and entry.reference is not None for entry in timings.shapes)
    assert timings.candidate == timings.shapes[0].candidate
    assert result.speedup_vs_eager == pytest.approx(geometric_mean([entry.speedup_vs_eager for entry in timings.shapes]))
    # The bench trials were checked like any trial.
    assert {"float32 bench #1", "float32 bench #2"} <= {trial.label for trial in result.trials if trial.passed}
    assert "geometric mean" in result.feedback


def test_two_grades_never_hold_one_gpu_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KGYM_LOCK_DIR", str(tmp_path))
    inside: dict[int, int] = {0: 0, 1: 0}
    most: dict[int, int] = {0: 0, 1: 0}
    guard = threading.Lock()

    def hold(index: int) -> None:
        with device_lock.holding(torch.device(f"cuda:{index}")):
            with guard:
                inside[index] += 1
                most[index] = max(most[index], inside[index])
            time.sleep(0.05)
            with guard:
                inside[index] -= 1

    threads = [threading.Thread(target=hold, args=(index % 2,)) for index in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most == {0: 1, 1: 1}
    assert (tmp_path / "kgym-gpu-0.lock").exists() and (tmp_path / "kgym-gpu-1.lock").exists()


def test_the_lock_is_host_wide(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Another process holding the GPU's lock file keeps this one waiting."""
    import subprocess
    import sys

    monkeypatch.setenv("KGYM_LOCK_DIR", str(tmp_path))
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            f"import fcntl,time; f=open({str(tmp_path / 'kgym-gpu-3.lock')!r},'a'); fcntl.flock(f, fcntl.LOCK_EX); print('held', flush=True); time.sleep(0.6)",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
    started = time.monotonic()
    with device_lock.holding(torch.device("cuda:3")):
        waited = time.monotonic() - started
    holder.wait()
    assert waited > 0.3


def test_cpu_grades_take_no_lock(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KGYM_LOCK_DIR", str(tmp_path))
    with device_lock.holding(CPU):
        pass
    assert list(tmp_path.iterdir()) == []


def test_an_output_on_another_gpu_is_refused(vector_add: Task) -> None:
    trial = plan_trials(vector_add, CPU, secret=1)[0]
    expected = trial.expected[0]

    def record(index: int) -> CallRecord:
        output = OutputRecord(
            python_type="torch.Tensor",
            exact_tensor=True,
            dtype="float32",
            shape=list(expected.shape),
            device="cuda",
            device_index=index,
            strides=[1],
            dense=True,
        )
        return CallRecord(id=0, ok=True, container="tensor", outputs=[output])

    gpu = torch.device("cuda:2")  # the grade's GPU on the host; the sandbox shows it as cuda:0
    assert check_structure(record(0), trial, trial.calls[0], gpu) == []
    problems = check_structure(record(1), trial, trial.calls[0], gpu)
    assert problems and "cuda:1" in problems[0]


def test_build_timings_puts_the_first_shape_on_top(vector_add: Task) -> None:
    task = with_bench(vector_add, {"N": 64}, {"N": 300})
    shapes = [ShapeRounds(trial=trial, warmup=None) for trial in timed_trials(plan_trials(task, CPU, secret=4, timing=TimingRequest(reps=2, bench=True)))]
    for shape in shapes:
        shape.add([plan for plan in shape.trial.calls if plan.role == "timed"], [1e-3, 1e-3])
    timings = build_timings(BaselineSetting(task=task, device=CPU, policy=TimingPolicy.for_device(CPU)), TimingRounds(shapes=shapes), 1)
    assert timings.trial == "float32 bench #1" and len(timings.shapes) == 2
    assert timings.candidate == timings.shapes[0].candidate and timings.reference == timings.shapes[0].reference
    assert timings.interpreted and all(entry.sol_fraction is None for entry in timings.shapes)
