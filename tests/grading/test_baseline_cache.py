"""Cached reference baselines: measured once per key and reused, never used for another key,
corrupt entries ignored and rewritten, writes atomic, `fresh_baselines` re-measures, a real
grade that reuses one says so, and `kgym baselines warm` precomputes a suite's."""

from __future__ import annotations

import json
import multiprocessing
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch
from typer.testing import CliRunner

from gym.cli import app
from gym.errors import BaselineCacheError, KernelGymError
from gym.grading.baselines import cache as baseline_cache
from gym.grading.baselines import measure as baselines
from gym.grading.baselines.cache import BaselineCache, BaselineEntry, BaselineKey, baseline_key, default_cache_dir
from gym.grading.baselines.measure import BaselinePoint, BaselineSetting, build_timings, reference_baseline
from gym.grading.baselines.warm import WarmedBaseline, grade_timed_shapes, warm_baselines, warm_targets
from gym.grading.feedback import write_feedback
from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.grading.planning.plan import TimingRequest, plan_trials, timed_trials
from gym.grading.timing.timing_policy import TimingPolicy
from gym.grading.timing.timing_rounds import ShapeRounds, TimingRounds
from gym.schema.result import GradeResult
from gym.tasks.loader import discover
from gym.tasks.model import Task

CPU = torch.device("cpu")
POLICY = TimingPolicy.for_device(CPU)
SHAPE = {"N": 1000}


@pytest.fixture
def cache(tmp_path: Path) -> BaselineCache:
    return BaselineCache(tmp_path / "baselines")


@pytest.fixture
def reference_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Counts every call of the reference the baselines time (the real one, wrapped)."""
    calls: list[int] = []
    real = baselines.reference_fn

    def counting(task: Task, shape: dict[str, int]) -> Callable[..., Any]:
        fn = real(task, shape)

        def call(*args: Any) -> Any:
            calls.append(1)
            return fn(*args)

        return call

    monkeypatch.setattr(baselines, "reference_fn", counting)
    return calls


def baseline(task: Task, cache: BaselineCache | None, *, policy: TimingPolicy = POLICY, compiled: bool = False, fresh: bool = False) -> baselines.Baseline:
    """vector_add's first public shape, as a CPU grade times it."""
    setting = BaselineSetting(task=task, device=CPU, policy=policy, cache=cache, fresh=fresh)
    return reference_baseline(setting, BaselinePoint(label="float32 public #1", dtype="float32", shape=SHAPE), compiled=compiled)


def with_version(task: Task, version: int) -> Task:
    return task.model_copy(update={"spec": task.spec.model_copy(update={"version": version})})


def test_a_hit_reuses_the_entry_without_timing_the_reference_again(vector_add: Task, cache: BaselineCache, reference_calls: list[int]) -> None:
    first = baseline(vector_add, cache)
    measured_calls = len(reference_calls)
    assert not first.cached and first.source == "measured" and measured_calls >= POLICY.min_reps
    second = baseline(vector_add, cache)
    assert len(reference_calls) == measured_calls, "a hit must not run the reference"
    assert second.cached and second.source == f"cached {first.entry.measured_at}"
    assert second.entry.eager == first.entry.eager
    # The entry records when, how often and how precisely it was measured, and the full key.
    assert second.entry.eager.reps == POLICY.min_reps and second.entry.measured_at and second.entry.origin == "grade"
    stored = json.loads(cache.path_for(first.entry.key).read_text())
    assert stored["key"]["task_id"] == "l1/vector_add" and stored["key"]["policy"] == POLICY.model_dump()
    assert "rse" in stored["eager"] and stored["eager"]["reps"] == POLICY.min_reps


@pytest.mark.parametrize(
    "change",
    [
        {"torch": "9.9.9+other"},
        {"device": "NVIDIA H100 80GB HBM3"},
        {"policy": POLICY.model_copy(update={"min_reps": 4})},
        {"task_version": 99},
        {"triton": "0.0.1"},
        {"cuda": "12.4"},
        {"shape": {"N": 1001}},
        {"dtype": "float16"},
        {"reference_sha256": "0" * 64},
    ],
    ids=lambda change: next(iter(change)),
)
def test_an_entry_for_any_other_key_is_never_used(vector_add: Task, cache: BaselineCache, change: dict[str, Any]) -> None:
    stored = baseline(vector_add, cache).entry
    other = stored.key.model_copy(update=change)
    assert other != stored.key
    assert cache.load(stored.key) is not None and cache.load(other) is None
    # Even planted under the other key's own file name, the stored key decides: a miss.
    cache.path_for(other).write_text(stored.model_dump_json())
    assert cache.load(other) is None


def test_changing_torch_device_policy_or_task_version_measures_again(
    vector_add: Task, cache: BaselineCache, reference_calls: list[int], monkeypatch: pytest.MonkeyPatch
) -> None:
    baseline(vector_add, cache)

    def measures(**kwargs: Any) -> bool:
        before = len(reference_calls)
        result = baseline(kwargs.pop("task", vector_add), cache, **kwargs)
        return not result.cached and len(reference_calls) > before

    assert not measures()  # the same key: reused
    assert measures(task=with_version(vector_add, vector_add.spec.version + 1))
    assert measures(policy=POLICY.model_copy(update={"target_rse": 0.02}))
    with monkeypatch.context() as patched:
        patched.setattr(torch, "__version__", "2.99.0+elsewhere")
        assert measures()
    with monkeypatch.context() as patched:
        patched.setattr(baseline_cache, "device_model", lambda device: "cpu: another CPU")
        assert measures()
    assert not measures()  # the original key is still there, untouched


@pytest.mark.parametrize("content", ["", "{", "not json at all", '{"format": 1}', "null", "[]"])
def test_a_corrupt_or_partial_entry_is_ignored_and_rewritten(vector_add: Task, cache: BaselineCache, reference_calls: list[int], content: str) -> None:
    key = baseline_key(vector_add, "float32", SHAPE, CPU, POLICY)
    cache.root.mkdir(parents=True)
    cache.path_for(key).write_text(content)
    assert cache.load(key) is None
    measured = baseline(vector_add, cache)
    assert not measured.cached and reference_calls
    assert cache.load(key) == measured.entry


def test_a_truncated_entry_is_ignored(vector_add: Task, cache: BaselineCache) -> None:
    entry = baseline(vector_add, cache).entry
    path = cache.path_for(entry.key)
    text = path.read_text()
    path.write_text(text[: len(text) // 2])
    assert cache.load(entry.key) is None
    # An entry of another format is a miss too.
    path.write_text(entry.model_copy(update={"format": baseline_cache.ENTRY_FORMAT + 1}).model_dump_json())
    assert cache.load(entry.key) is None


def test_writes_are_atomic(vector_add: Task, cache: BaselineCache, monkeypatch: pytest.MonkeyPatch) -> None:
    entry = baseline(vector_add, cache).entry
    path = cache.path_for(entry.key)
    moves: list[tuple[str, str]] = []
    real_replace = os.replace

    def recording(source: str, target: Any) -> None:
        # The whole entry is in the temp file before it is moved into place.
        assert BaselineEntry.model_validate_json(Path(source).read_text()) == newer
        moves.append((source, str(target)))
        real_replace(source, target)

    newer = entry.model_copy(update={"measured_at": "2030-01-01T00:00:00+00:00"})
    monkeypatch.setattr(baseline_cache.os, "replace", recording)
    assert cache.store(newer) == path
    assert len(moves) == 1 and Path(moves[0][0]).parent == cache.root and moves[0][1] == str(path)
    assert cache.load(entry.key) == newer

    def failing(source: str, target: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(baseline_cache.os, "replace", failing)
    assert cache.store(entry) is None  # a grade never fails for the cache
    assert cache.load(entry.key) == newer, "a failed write leaves the old entry whole"
    assert sorted(p.name for p in cache.root.iterdir()) == [path.name], "and no temp file behind"


def _store_many(root: str, text: str, times: int) -> None:
    entry = BaselineEntry.model_validate_json(text)
    target = BaselineCache(root)
    for index in range(times):
        target.store(entry.model_copy(update={"measured_at": f"2030-01-01T00:00:{index % 60:02d}+00:00"}), strict=True)


def test_several_processes_writing_at_once_never_leave_a_partial_entry(vector_add: Task, cache: BaselineCache) -> None:
    entry = baseline(vector_add, cache).entry
    context = multiprocessing.get_context("fork")
    writers = [context.Process(target=_store_many, args=(str(cache.root), entry.model_dump_json(), 40)) for _ in range(3)]
    for writer in writers:
        writer.start()
    seen = 0
    while any(writer.is_alive() for writer in writers):
        loaded = cache.load(entry.key)
        assert loaded is not None and loaded.eager == entry.eager
        seen += 1
    for writer in writers:
        writer.join()
        assert writer.exitcode == 0
    assert seen > 0 and cache.load(entry.key) is not None
    assert [p.name for p in cache.root.iterdir()] == [cache.path_for(entry.key).name]


def test_an_unwritable_cache_is_skipped_in_a_grade_and_an_error_when_warming(vector_add: Task, tmp_path: Path) -> None:
    (tmp_path / "a-file").write_text("")
    unwritable = BaselineCache(tmp_path / "a-file" / "baselines")
    measured = baseline(vector_add, unwritable)
    assert not measured.cached and measured.entry.eager.reps == POLICY.min_reps
    with pytest.raises(BaselineCacheError) as raised:
        unwritable.store(measured.entry, strict=True)
    assert isinstance(raised.value, KernelGymError)
    with pytest.raises(BaselineCacheError):
        warm_baselines(warm_targets([vector_add], CPU), CPU, cache=unwritable)


def test_fresh_baselines_re_measure_and_overwrite(vector_add: Task, cache: BaselineCache, reference_calls: list[int]) -> None:
    first = baseline(vector_add, cache)
    before = len(reference_calls)
    fresh = baseline(vector_add, cache, fresh=True)
    assert not fresh.cached and len(reference_calls) > before
    assert cache.load(first.entry.key) == fresh.entry
    # build_timings takes the same switch.
    trial = timed_trials(plan_trials(vector_add, CPU, secret=3, timing=TimingRequest(reps=3)))[0]
    shape = ShapeRounds(trial=trial, warmup=None)
    shape.add([plan for plan in trial.calls if plan.role == "timed"], [1e-3, 1e-3, 1e-3])
    cached = build_timings(BaselineSetting(task=vector_add, device=CPU, policy=POLICY, cache=cache), TimingRounds(shapes=[shape]), 1)
    assert cached.baseline == f"cached {fresh.entry.measured_at}" and cached.shapes[0].baseline == cached.baseline
    before = len(reference_calls)
    again = build_timings(BaselineSetting(task=vector_add, device=CPU, policy=POLICY, cache=cache, fresh=True), TimingRounds(shapes=[shape]), 1)
    assert again.baseline == "measured" and len(reference_calls) > before


def test_on_cpu_only_the_eager_reference_is_timed(vector_add: Task, cache: BaselineCache, monkeypatch: pytest.MonkeyPatch) -> None:
    def never(task: Task, shape: dict[str, int]) -> Any:
        raise AssertionError("torch.compile must not run on CPU")

    monkeypatch.setattr(baselines, "compiled_reference", never)
    trial = timed_trials(plan_trials(vector_add, CPU, secret=3, timing=TimingRequest(reps=3)))[0]
    shape = ShapeRounds(trial=trial, warmup=None)
    shape.add([plan for plan in trial.calls if plan.role == "timed"], [1e-3, 1e-3, 1e-3])
    for _ in range(2):  # measured, then cached: the same figures either way
        timings = build_timings(BaselineSetting(task=vector_add, device=CPU, policy=POLICY, cache=cache), TimingRounds(shapes=[shape]), 1)
        assert timings.reference is not None and timings.compiled is None and timings.shapes[0].compiled is None
        assert "not measured on CPU" in (timings.compiled_note or "") and timings.shapes[0].speedup_vs_compile is None
    entry = cache.load(baseline_key(vector_add, "float32", SHAPE, CPU, POLICY))
    assert entry is not None and entry.compiled is None


def test_a_torch_compile_baseline_is_cached_and_a_compile_failure_is_not(vector_add: Task, cache: BaselineCache, monkeypatch: pytest.MonkeyPatch) -> None:
    # Stand-in for a GPU's torch.compile (CPU's needs a C++ toolchain): the eager reference under another name.
    monkeypatch.setattr(baselines, "compiled_reference", lambda task, shape: baselines.reference_fn(task, shape))
    first = baseline(vector_add, cache, compiled=True)
    assert first.entry.compiled is not None and first.compiled_note is None
    assert baseline(vector_add, cache, compiled=True).cached

    def broken(task: Task, shape: dict[str, int]) -> Any:
        raise RuntimeError("inductor exploded")

    monkeypatch.setattr(baselines, "compiled_reference", broken)
    failed = baseline(vector_add, cache, compiled=True, fresh=True)
    assert failed.entry.compiled is None and "torch.compile failed" in (failed.compiled_note or "")
    assert cache.load(first.entry.key) == first.entry, "a failed compile is never cached over a good entry"
    # An entry without a compiled figure never serves a grade that wants one.
    cache.store(failed.entry)
    assert not baseline(vector_add, cache, compiled=True).cached


def test_the_cache_folder_follows_the_env_var_then_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("KGYM_BASELINE_CACHE", str(tmp_path / "mine"))
    assert default_cache_dir() == (tmp_path / "mine").resolve() and BaselineCache().root == (tmp_path / "mine").resolve()
    assert BaselineCache(tmp_path / "arg").root == (tmp_path / "arg").resolve()
    monkeypatch.delenv("KGYM_BASELINE_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == (tmp_path / "xdg").resolve() / "kgym" / "baselines"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert default_cache_dir() == Path.home().resolve() / ".cache" / "kgym" / "baselines"


def test_old_results_without_a_baseline_field_still_load(vector_add: Task, cache: BaselineCache) -> None:
    trial = timed_trials(plan_trials(vector_add, CPU, secret=3, timing=TimingRequest(reps=3)))[0]
    shape = ShapeRounds(trial=trial, warmup=None)
    shape.add([plan for plan in trial.calls if plan.role == "timed"], [1e-3, 1e-3, 1e-3])
    timings = build_timings(BaselineSetting(task=vector_add, device=CPU, policy=POLICY, cache=cache), TimingRounds(shapes=[shape]), 1)
    raw = json.loads(timings.model_dump_json())
    raw.pop("baseline")
    for entry in raw["shapes"]:
        entry.pop("baseline")
    old = type(timings).model_validate(raw)
    assert old.baseline is None and old.shapes[0].baseline is None


def test_the_warmed_shapes_are_the_ones_a_grade_times(suite_tasks: list[Task]) -> None:
    for task in [task for task in suite_tasks if task.suite == "l1"]:
        planned = timed_trials(plan_trials(task, CPU, secret=5, include_hidden=False, timing=TimingRequest(reps=1)))
        assert [(t.label, dict(t.shape)) for t in grade_timed_shapes(task, CPU)] == [(t.label, dict(t.shape)) for t in planned], task.id
    # On a GPU: every benchmark shape of the first dtype (labels as plan_trials gives them).
    vector_add = next(task for task in suite_tasks if task.id == "l1/vector_add")
    small = vector_add.model_copy(
        update={"spec": vector_add.spec.model_copy(update={"shapes": vector_add.spec.shapes.model_copy(update={"bench": [{"N": 64}, {"N": 96}]})})}
    )
    planned = timed_trials(plan_trials(small, CPU, secret=5, include_hidden=False, gpu=True, timing=TimingRequest(reps=1, bench=True)))
    gpu = grade_timed_shapes(small, torch.device("cuda"))
    assert [(t.label, t.dtype, dict(t.shape)) for t in gpu] == [(t.label, "float32", dict(t.shape)) for t in planned]


def test_a_real_grade_reuses_the_cached_baseline_and_says_so(vector_add: Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KGYM_BASELINE_CACHE", str(tmp_path / "grade-cache"))
    # late_calls=False only to keep these three interpreted grades quick: they are about the baselines.
    first = grade(vector_add, vector_add.solution_path, GradeOptions(sandbox="bwrap", late_calls=False))
    second = grade(vector_add, vector_add.solution_path, GradeOptions(sandbox="bwrap", late_calls=False))
    for result in (first, second):
        assert result.status.value == "passed", result.feedback
        assert result.timings is not None and result.timings.reference is not None
        assert GradeResult.model_validate_json(result.model_dump_json()) == result
    assert first.timings is not None and second.timings is not None
    assert first.timings.baseline == "measured" and "baseline: measured" in first.feedback
    entry = BaselineCache().load(baseline_key(vector_add, "float32", vector_add.spec.shapes.public[0], CPU, POLICY))
    assert entry is not None and entry.eager == first.timings.reference
    assert second.timings.baseline == f"cached {entry.measured_at}" == second.timings.shapes[0].baseline
    assert f"baseline: cached {entry.measured_at}" in second.feedback and second.feedback == write_feedback(second.model_copy(update={"feedback": ""}))
    assert second.timings.reference == first.timings.reference
    # The correctness path is untouched: every trial was checked again on fresh inputs.
    assert len(second.trials) == len(first.trials) and all(trial.passed for trial in second.trials)
    third = grade(vector_add, vector_add.solution_path, GradeOptions(sandbox="bwrap", late_calls=False, fresh_baselines=True))
    assert third.timings is not None and third.timings.baseline == "measured"
    rewritten = BaselineCache().load(entry.key)
    assert rewritten is not None and rewritten.eager == third.timings.reference and rewritten.measured_at >= entry.measured_at


def test_kgym_baselines_warm_precomputes_a_suite(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KGYM_BASELINE_CACHE", str(tmp_path / "warm-cache"))
    runner = CliRunner()
    command = ["baselines", "warm", "--suite", "l1", "--task", "l1/vector_add", "--task", "l1/softmax", "--device", "cpu", "--json"]
    result = runner.invoke(app, command)
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [(row["task_id"], row["trial"], row["outcome"]) for row in rows] == [
        ("l1/softmax", "float32 public #1", "measured"),
        ("l1/vector_add", "float32 public #1", "measured"),
    ]
    assert all(row["reps"] == POLICY.min_reps and row["eager_median_s"] > 0 and row["compiled_median_s"] is None for row in rows)
    tasks = {task.id: task for task in discover(suite="l1").tasks}
    for row in rows:
        key = baseline_key(tasks[row["task_id"]], row["dtype"], row["shape"], CPU, POLICY)
        entry = BaselineCache().load(key)
        assert entry is not None and entry.origin == "warm" and entry.measured_at == row["measured_at"]
    again = json.loads(runner.invoke(app, command).stdout)
    assert [row["outcome"] for row in again] == ["cached", "cached"]
    assert [row["measured_at"] for row in again] == [row["measured_at"] for row in rows]
    fresh = runner.invoke(app, [*command, "--fresh"])
    assert fresh.exit_code == 0 and [row["outcome"] for row in json.loads(fresh.stdout)] == ["measured", "measured"]
    # The table form, into a folder given on the command line.
    table = runner.invoke(app, ["baselines", "warm", "--task", "l1/vector_add", "--device", "cpu", "--cache-dir", str(tmp_path / "other")])
    assert table.exit_code == 0, table.output
    assert "l1/vector_add" in table.stdout and "measured" in table.stdout and str((tmp_path / "other").resolve()) in table.stdout.replace("\n", "")
    assert len(list((tmp_path / "other").glob("*.json"))) == 1
    # Unknown tasks and devices are usage errors.
    assert runner.invoke(app, ["baselines", "warm", "--suite", "l1", "--task", "l2/nope", "--device", "cpu"]).exit_code == 2
    assert runner.invoke(app, ["baselines", "warm", "--task", "l1/vector_add", "--device", "bogus"]).exit_code == 2


def test_a_reference_that_cannot_be_timed_is_a_failed_row(vector_add: Task, cache: BaselineCache, monkeypatch: pytest.MonkeyPatch) -> None:
    def out_of_memory(task: Task, shape: dict[str, int]) -> Any:
        def call(*args: Any) -> Any:
            raise torch.OutOfMemoryError("CUDA out of memory")

        return call

    monkeypatch.setattr(baselines, "reference_fn", out_of_memory)
    rows = warm_baselines(warm_targets([vector_add], CPU), CPU, cache=cache)
    assert [row.outcome for row in rows] == ["failed"] and "OutOfMemoryError" in (rows[0].error or "")
    assert not cache.root.exists() or not list(cache.root.iterdir())


def test_a_key_is_every_field_it_names() -> None:
    assert set(BaselineKey.model_fields) == {"task_id", "task_version", "reference_sha256", "dtype", "shape", "device", "torch", "cuda", "triton", "policy"}
    for model in (BaselineKey, BaselineEntry, WarmedBaseline):
        assert all((field.description or "").strip() for field in model.model_fields.values()), model.__name__


def test_a_gpu_is_keyed_by_its_name_sms_and_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import SimpleNamespace

    whole = SimpleNamespace(name="NVIDIA H100 80GB HBM3", multi_processor_count=132, total_memory=80 << 30)
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: whole)
    assert baseline_cache.device_model(torch.device("cuda:0")) == "NVIDIA H100 80GB HBM3, 132 SMs, 80 GiB"
    # A MIG slice of the same GPU is another device model: never served the whole GPU's baselines.
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: SimpleNamespace(name=whole.name, multi_processor_count=16, total_memory=10 << 30))
    assert baseline_cache.device_model(torch.device("cuda:0")) != "NVIDIA H100 80GB HBM3, 132 SMs, 80 GiB"
    assert baseline_cache.device_model(CPU).startswith("cpu: ")


def test_fresh_baselines_reaches_the_grade_from_every_command(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import gym.execution.batch
    import gym.grading.grader
    import gym.harness.runner
    from gym.errors import RunFolderError
    from gym.harness.agents import make_agent
    from gym.harness.run_folder import RunConfig

    asked: list[tuple[str, bool]] = []

    def fake_grade(task: Any, submission: Any, options: Any, **kwargs: Any) -> Any:
        asked.append(("grade", options.fresh_baselines))
        raise SystemExit(0)

    def fake_grade_many(*args: Any, **kwargs: Any) -> Any:
        asked.append(("solutions", kwargs["fresh_baselines"]))
        return []

    import gym.execution

    graders: list[bool] = []

    def fake_executor_grader(executor: Any, options: Any = None) -> Any:
        # `kgym run` grades through an executor: the option rides in its GradeOptions.
        graders.append(options.fresh_baselines)
        return lambda task, path: None

    def fake_run_agent(*args: Any, **kwargs: Any) -> Any:
        asked.append(("run", graders[-1]))
        raise RunFolderError("stop here")

    monkeypatch.setattr(gym.execution, "executor_grader", fake_executor_grader)
    monkeypatch.setattr(gym.grading.grader, "grade", fake_grade)
    monkeypatch.setattr(gym.execution.batch, "grade_many", fake_grade_many)
    monkeypatch.setattr(gym.harness.runner, "run_agent", fake_run_agent)
    runner = CliRunner()
    for flag in ([], ["--fresh-baselines"]):
        runner.invoke(app, ["grade", "l1/vector_add", "x.py", *flag])
        runner.invoke(app, ["solutions", "--suite", "no-such-suite", "--json", *flag])
        runner.invoke(app, ["run", "--agent", "solutions", "--task", "l1/vector_add", "--out", str(tmp_path / f"run{len(flag)}"), *flag])
    assert asked == [("grade", False), ("solutions", False), ("run", False), ("grade", True), ("solutions", True), ("run", True)]
    # run_agent hands it to the grader it builds, and the run's config does not record it.
    monkeypatch.undo()
    built: list[GradeOptions] = []
    monkeypatch.setattr(gym.harness.runner, "local_grader", lambda options, *rest: built.append(options) or (lambda task, path: None))
    config = RunConfig(agent="solutions", tasks=[], attempts=1, concurrency=1, sandbox="bwrap", device="cpu")
    gym.harness.runner.run_agent(make_agent("solutions"), [], tmp_path / "run-b", config, fresh_baselines=True)
    assert built == [GradeOptions(sandbox="bwrap", fresh_baselines=True)]
    assert "baseline" not in (tmp_path / "run-b" / "run.json").read_text()
