"""The trusted side of the replay (gym.grading.judging.replay) on hand-made witness reports: what the
witness's channel must say, and how each replay outcome worsens a verdict that would pass."""

from __future__ import annotations

import hashlib
import statistics
from pathlib import Path
from typing import Any

import pytest
import torch

from gym.grading.judging.replay import CPU_REPLAY, GPU_REPLAY, ReplayPhase, replay_settings
from gym.grading.judging.verdict import Verdict
from gym.grading.planning.plan import TimingRequest, plan_trials
from gym.schema.result import Status
from gym.tasks.model import Task
from gym.worker.protocol import OutputRecord
from gym.worker.tensor_io import write_tensor
from gym.worker.witness_protocol import REPLAY_DIR, REPLAY_REQUEST_FILE, WITNESS_REPORT_FILE, ReplayRecord, ReplayRequest, WitnessReport, witness_line

CPU = torch.device("cpu")


def phase(task: Task, tmp_path: Path, candidate_seconds: dict[int, float] | None = None) -> ReplayPhase:
    trials = plan_trials(task, CPU, secret=11, include_hidden=False, timing=TimingRequest(reps=2))
    layout, next_id = [], 0
    for trial in trials:
        layout.append((trial, list(range(next_id, next_id + len(trial.calls)))))
        next_id += len(trial.calls)
    (tmp_path / "in").mkdir(parents=True)
    (tmp_path / "out").mkdir()
    return ReplayPhase(
        task=task,
        device=CPU,
        secret=11,
        layout=layout,
        in_dir=tmp_path / "in",
        staging=tmp_path / "staging",
        candidate_seconds=lambda: dict(candidate_seconds or {}),
    )


def ready(replay: ReplayPhase) -> ReplayRequest:
    replay.poll(witness_line("ready"))
    return ReplayRequest.model_validate_json((replay.in_dir / REPLAY_DIR / REPLAY_REQUEST_FILE).read_text())


def report_with(
    replay: ReplayPhase,
    out_dir: Path,
    outputs: dict[int, torch.Tensor],
    torch_alone: dict[int, tuple[torch.Tensor, torch.Tensor]] | None = None,
    by_item: dict[int, dict[str, object]] | None = None,
    **record: object,
) -> None:
    """The witness's report on every slot (outputs given per item, else the expected ones), announced with its sha256.
    `torch_alone`: per item, what the tape's ops leave without launches and the mask of what torch's plumbing made
    (else NaN, nothing made by plumbing)."""
    folder = out_dir / replay.out_name
    folder.mkdir()
    report = WitnessReport(submission_exit=0)

    def written(name: str, tensor: torch.Tensor) -> OutputRecord:
        meta = write_tensor(folder, name, tensor)
        report.files[name] = hashlib.sha256((folder / name).read_bytes()).hexdigest()
        return OutputRecord(python_type="torch.Tensor", exact_tensor=True, data=meta)

    for slot in replay.slots:
        if slot.own_inputs and slot.item not in outputs:
            tensor = torch.zeros(1)
        elif slot.sub_batch_of is not None and slot.item not in outputs:
            start, stop = slot.plan.span or (0, 0)
            tensor = outputs.get(slot.sub_batch_of, replay.slots[slot.sub_batch_of].expected[0])[start:stop].clone()
        else:
            tensor = outputs.get(slot.item, slot.expected[0] if slot.expected else None)
        fields = {"ops": {"aten.empty_like": 1}, "launches": 1, "seconds": 1.0 if slot.timed else None, **record, **(by_item or {}).get(slot.item, {})}
        if slot.provenance:
            alone, made = (torch_alone or {}).get(
                slot.item, (torch.full_like(slot.expected[0], float("nan")), torch.zeros(slot.expected[0].shape, dtype=torch.bool))
            )
            fields["provenance_outputs"] = [written(f"r{slot.item}_torch0.bin", alone)]
            fields["provenance_masks"] = [written(f"r{slot.item}_made0.bin", made)]
        report.records.append(ReplayRecord(id=slot.item, ok=True, outputs=[written(f"r{slot.item}_out0.bin", tensor)], **fields))  # type: ignore[arg-type]
    data = report.model_dump_json().encode()
    (folder / WITNESS_REPORT_FILE).write_bytes(data)
    replay.poll(witness_line("ready") + witness_line("done", replay.out_name, hashlib.sha256(data).hexdigest()))


def judged(replay: ReplayPhase, out_dir: Path, candidate: float = 1.0, timed_out: bool = False) -> Verdict:
    verdict = Verdict()
    seconds = {call_id: candidate for trial, ids in replay.layout for plan, call_id in zip(trial.calls, ids) if plan.role == "timed"}
    replay.judge(verdict, out_dir, timed_out, [], seconds)
    return verdict


def test_ready_moves_in_one_replay_per_trial_and_every_timed_call(vector_add: Task, tmp_path: Path) -> None:
    replay = phase(vector_add, tmp_path)
    assert not (replay.in_dir / REPLAY_DIR).exists()
    request = ready(replay)
    trials = len(replay.layout)
    timed_trials = sum(any(plan.role == "timed" for plan in trial.calls) for trial, _ in replay.layout)
    # On CPU one replay per trial: the timed trial's is one of its timed calls (interpreted timings need one sample),
    # which is replayed once more on its own inputs (its tape must be what it ran).
    own = [slot for slot in replay.slots if slot.own_inputs]
    assert len(request.items) == trials + len(own) == len(replay.slots) and len(own) == 1
    assert own[0].call_id == next(slot.call_id for slot in replay.slots if slot.timed) and own[0].inputs is own[0].plan.args
    assert sum(item.timed for item in request.items) == timed_trials == 1
    assert request.out_name == replay.out_name and request.compile_target == "cuda:90"
    # Fresh inputs: generated now, never the ones the calls were given.
    for slot in replay.slots:
        assert not torch.equal(slot.inputs["x"], slot.trial.inputs["x"]) or slot.timed or slot.own_inputs
    # A second "ready" changes nothing.
    replay.poll(witness_line("ready") + witness_line("ready"))
    assert len(replay.slots) == len(request.items)


def test_a_lie_on_stdout_is_not_the_witness_and_no_report_is_no_pass(vector_add: Task, tmp_path: Path) -> None:
    replay = phase(vector_add, tmp_path)
    ready(replay)
    replay.poll(b"kgym-witness done witness-" + b"0" * 32 + b" " + b"0" * 64 + b"\n")
    # No report the witness vouched for: never a pass, and never a status that pays more than a rejection.
    unvouched = judged(replay, tmp_path / "out")
    assert unvouched.status == Status.rejected and "replay_failed" in unvouched.flags
    assert judged(replay, tmp_path / "out", timed_out=True).status == Status.timeout


def test_the_right_outputs_pass_and_anything_else_is_named(vector_add: Task, tmp_path: Path) -> None:
    replay = phase(vector_add, tmp_path)
    ready(replay)
    report_with(replay, tmp_path / "out", {})
    assert judged(replay, tmp_path / "out").status == Status.passed

    wrong = phase(vector_add, tmp_path / "wrong")
    ready(wrong)
    report_with(wrong, tmp_path / "wrong" / "out", {0: torch.zeros_like(wrong.slots[0].expected[0])})
    verdict = judged(wrong, tmp_path / "wrong" / "out")
    assert verdict.status == Status.rejected and "replay_mismatch" in verdict.flags


@pytest.mark.parametrize(
    ("record", "flag"),
    [
        ({"ops": {"aten.add": 1, "aten.empty_like": 1}}, "torch_compute:aten.add"),
        ({"launches": 0}, "no_triton_launch"),
        ({"inputs_mutated": ["x"]}, "input_mutated:x"),
    ],
)
def test_what_the_replayed_tape_ran_is_judged(vector_add: Task, tmp_path: Path, record: dict[str, object], flag: str) -> None:
    replay = phase(vector_add, tmp_path)
    ready(replay)
    report_with(replay, tmp_path / "out", {}, **record)
    verdict = judged(replay, tmp_path / "out")
    assert verdict.status == Status.rejected and flag in verdict.flags


@pytest.mark.parametrize(("device_type", "passes", "rejected"), [("cpu", 0.25, 0.15), ("cuda", 0.55, 0.45)])
def test_a_timed_call_far_faster_than_its_own_kernels_is_not_reproduced(
    vector_add: Task, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, device_type: str, passes: float, rejected: float
) -> None:
    settings = replay_settings(torch.device(device_type))
    assert settings is (GPU_REPLAY if device_type == "cuda" else CPU_REPLAY)
    # The inputs stay on this machine's CPU; the judging follows the device's settings.
    monkeypatch.setattr(ReplayPhase, "settings", property(lambda self: settings))
    replay = phase(vector_add, tmp_path)
    request = ready(replay)
    timed_calls = sum(plan.role == "timed" for trial, _ in replay.layout for plan in trial.calls)
    assert sum(item.timed for item in request.items) == (timed_calls if settings.every_timed_call else 1)
    assert request.timed_runs == settings.timed_runs and request.warmup == settings.warmup
    report_with(replay, tmp_path / "out", {})
    assert judged(replay, tmp_path / "out", candidate=passes).status == Status.passed
    verdict = judged(replay, tmp_path / "out", candidate=rejected)
    assert verdict.status == Status.rejected and "timing_not_reproduced" in verdict.flags


def test_a_report_whose_bytes_are_not_the_announced_ones_is_no_report(vector_add: Task, tmp_path: Path) -> None:
    replay = phase(vector_add, tmp_path)
    ready(replay)
    report_with(replay, tmp_path / "out", {})
    path = tmp_path / "out" / replay.out_name / WITNESS_REPORT_FILE
    path.write_bytes(path.read_bytes().replace(b'"launches":1', b'"launches":2'))
    assert judged(replay, tmp_path / "out").status == Status.rejected


def test_compile_errors_are_compile_errors(vector_add: Task, tmp_path: Path) -> None:
    replay = phase(vector_add, tmp_path)
    ready(replay)
    folder = tmp_path / "out" / replay.out_name
    folder.mkdir()
    data = WitnessReport(submission_exit=0, compile_errors=["_add: UnsupportedLanguageConstruct: Import"]).model_dump_json().encode()
    (folder / WITNESS_REPORT_FILE).write_bytes(data)
    replay.poll(witness_line("done", replay.out_name, hashlib.sha256(data).hexdigest()))
    verdict = judged(replay, tmp_path / "out")
    assert verdict.status == Status.compile_error and "sm_90" in (verdict.error or "")


def test_a_timed_replay_is_told_how_fast_the_floor_needs_it(vector_add: Task, tmp_path: Path) -> None:
    """The witness stops repeating a timed replay once it is at or below the candidate's median over the
    floor; a claimed time of zero asks for every run (the fastest then meets the floor or not)."""
    layout_of = phase(vector_add, tmp_path / "layout").layout
    timed = [call_id for trial, ids in layout_of for plan, call_id in zip(trial.calls, ids, strict=True) if plan.role == "timed"]
    assert len(timed) >= 2
    claimed = {call_id: 0.001 * (index + 1) for index, call_id in enumerate(timed)}
    request = ready(phase(vector_add, tmp_path / "claimed", claimed))
    (item,) = [item for item in request.items if item.timed]
    assert item.enough_s == pytest.approx(statistics.median(claimed.values()) / CPU_REPLAY.time_floor)
    assert request.timed_runs == CPU_REPLAY.timed_runs > 1
    # No recorded times (the records did not get that far): every run.
    (bare,) = [item for item in ready(phase(vector_add, tmp_path / "bare")).items if item.timed]
    assert bare.enough_s is None


@pytest.mark.parametrize("seconds", [0.0, None])
def test_a_timed_replay_without_a_time_is_no_floor_and_no_pass(vector_add: Task, tmp_path: Path, seconds: float | None) -> None:
    replay = phase(vector_add, tmp_path)
    ready(replay)
    report_with(replay, tmp_path / "out", {}, seconds=seconds)
    verdict = judged(replay, tmp_path / "out", candidate=1e-9)
    assert verdict.status == Status.infra_error and "no time" in (verdict.error or "")


def test_an_answer_torch_already_gave_is_torch_compute(vector_add: Task, tmp_path: Path) -> None:
    replay = phase(vector_add, tmp_path)
    ready(replay)
    assert all(slot.provenance for slot in replay.slots if not slot.own_inputs)
    expected = replay.slots[0].expected[0]
    # Every launch left out, the tape's ops still give the answer (whatever the mask says).
    report_with(replay, tmp_path / "out", {}, {0: (expected.clone(), torch.zeros(expected.shape, dtype=torch.bool))})
    verdict = judged(replay, tmp_path / "out")
    assert verdict.status == Status.rejected and "torch_compute:plumbing" in verdict.flags
    assert "already give the answer" in (verdict.error or "")


@pytest.mark.parametrize(("share", "passes"), [(0.5, False), (0.02, False), (0.0, True)])
def test_a_share_of_the_answer_made_by_plumbing_is_torch_compute(vector_add: Task, tmp_path: Path, share: float, passes: bool) -> None:
    replay = phase(vector_add, tmp_path)
    ready(replay)
    expected = replay.slots[0].expected[0]
    alone = torch.full_like(expected, float("nan"))
    made = torch.ones(expected.shape, dtype=torch.bool)  # plumbing moved values everywhere ...
    count = int(share * expected.numel())
    alone.view(-1)[:count] = expected.view(-1)[:count]  # ... and they are the answer on `share` of them
    report_with(replay, tmp_path / "out", {}, {0: (alone, made)})
    verdict = judged(replay, tmp_path / "out")
    assert (verdict.status == Status.passed) is passes, verdict.error
    if not passes:
        assert "torch_compute:plumbing" in verdict.flags and "output #1" in (verdict.error or "")


def test_values_plumbing_made_that_are_not_the_answer_are_no_evidence(vector_add: Task, tmp_path: Path) -> None:
    # A bias broadcast into the output before the kernels accumulate: plumbing made every element, none is the answer.
    replay = phase(vector_add, tmp_path)
    ready(replay)
    expected = replay.slots[0].expected[0]
    report_with(replay, tmp_path / "out", {}, {0: (expected + 1.0, torch.ones(expected.shape, dtype=torch.bool))})
    assert judged(replay, tmp_path / "out").status == Status.passed


def test_on_cpu_the_speed_is_the_replays_runs(vector_add: Task, tmp_path: Path) -> None:
    replay = phase(vector_add, tmp_path)
    ready(replay)
    report_with(replay, tmp_path / "out", {}, run_seconds=[0.3, 0.2, 0.4])
    assert judged(replay, tmp_path / "out", candidate=0.9).status == Status.passed
    timed = {trial.label: [0.9, 0.9] for trial, _ in replay.layout if any(plan.role == "timed" for plan in trial.calls)}
    speeds = replay.replayed_speed(timed, {})
    # The candidate's own 0.9 s decides nothing: its trial's samples are the replay's three runs.
    assert speeds == {label: [0.3, 0.2, 0.4] for label in timed}


def test_on_a_gpu_each_timed_call_counts_as_the_slower_of_it_and_its_replay(vector_add: Task, tmp_path: Path) -> None:
    replay = phase(vector_add, tmp_path)
    replay.device = torch.device("cuda")
    replay.replayed_by_call = {}
    for trial, ids in replay.layout:
        for plan, call_id in zip(trial.calls, ids):
            if plan.role == "timed":
                replay.replayed_by_call[call_id] = 0.5
    candidate = {call_id: (0.1 if index % 2 else 0.9) for index, call_id in enumerate(replay.replayed_by_call)}
    timed = {trial.label: [] for trial, _ in replay.layout if any(plan.role == "timed" for plan in trial.calls)}
    speeds = replay.replayed_speed(timed, candidate)
    assert sorted(sample for samples in speeds.values() for sample in samples) == sorted(max(seconds, 0.5) for seconds in candidate.values())


def test_batch_invariance_is_judged_on_replayed_sub_batches(tmp_path: Path) -> None:
    from gym.tasks.loader import find_task

    task = find_task("l1/linear_batch_invariant")
    replay = phase(task, tmp_path)
    ready(replay)
    subs = [slot for slot in replay.slots if slot.sub_batch_of is not None]
    assert subs, "every batch_invariant trial replays its sub-batch calls"
    for slot in subs:
        whole = replay.slots[slot.sub_batch_of]  # type: ignore[index]
        start, stop = slot.plan.span  # type: ignore[misc]
        # Rows of the fresh inputs of the trial's replay, never the inputs the submission's call saw.
        assert torch.equal(slot.inputs["x"], whole.inputs["x"][start:stop])
        assert not torch.equal(slot.inputs["x"], slot.plan.args["x"])
    report_with(replay, tmp_path / "out", {})
    assert judged(replay, tmp_path / "out").status == Status.passed

    other = phase(task, tmp_path / "cache")
    ready(other)
    sub = next(slot for slot in other.slots if slot.sub_batch_of is not None)
    start, stop = sub.plan.span  # type: ignore[misc]
    rows = other.slots[sub.sub_batch_of].expected[0][start:stop].clone()  # type: ignore[index]
    rows.view(-1)[0] = torch.nextafter(rows.view(-1)[0], torch.tensor(float("inf")))
    report_with(other, tmp_path / "cache" / "out", {sub.item: rows})
    verdict = judged(other, tmp_path / "cache" / "out")
    assert verdict.status == Status.rejected and "replay_mismatch" in verdict.flags and "batch_invariant" in (verdict.error or "")


def test_an_anchor_may_stay_in_torch_only_exactly_as_the_reference_calls_it(vector_add: Task, tmp_path: Path) -> None:
    from gym.grading.planning.anchors import recording_anchors
    from gym.worker.tape import call_signature

    # vector_add with torch's add allowed as an anchor (as a KernelBench level-2 task allows its matmul).
    task = vector_add.model_copy(update={"spec": vector_add.spec.model_copy(update={"allowed_torch": ["add"]})})
    replay = phase(task, tmp_path)
    ready(replay)
    slot = replay.slots[0]
    assert slot.reference_anchors, "the reference's own calls are recorded on the slot's fresh inputs"
    same = list(slot.reference_anchors)[0]
    x, y = slot.inputs["x"], slot.inputs["y"]
    other = call_signature(torch.ops.aten.add.Tensor, (x, y), {"alpha": 2})
    assert same == call_signature(torch.ops.aten.add.Tensor, (x, y), {}) and other != same
    _, recorded = recording_anchors(lambda: torch.add(x, y, alpha=2))
    assert list(recorded) == [other]

    # Each replay calls the anchor exactly as the reference does on that replay's inputs.
    exact: dict[int, dict[str, object]] = {
        each.item: {"anchor_calls": list(each.reference_anchors.elements()) if each.reference_anchors else []} for each in replay.slots
    }
    report_with(replay, tmp_path / "out", {}, by_item=exact)
    verdict = Verdict()
    replay.judge(verdict, tmp_path / "out", False, ["add"], {})
    assert verdict.status == Status.passed, verdict.error

    variant = phase(task, tmp_path / "variant")
    ready(variant)
    report_with(variant, tmp_path / "variant" / "out", {}, anchor_calls=[other])
    verdict = Verdict()
    variant.judge(verdict, tmp_path / "variant" / "out", False, ["add"], {})
    assert verdict.status == Status.rejected and "torch_compute:anchor_call" in verdict.flags
    assert "alpha=2" in (verdict.error or "")


@pytest.mark.parametrize(("nudge", "passes"), [(False, True), (True, False)])
def test_a_tape_replayed_on_its_calls_own_inputs_must_give_what_the_call_returned(vector_add: Task, tmp_path: Path, nudge: bool, passes: bool) -> None:
    from gym.worker.protocol import CallRecord, call_record_file

    replay = phase(vector_add, tmp_path)
    ready(replay)
    own = next(slot for slot in replay.slots if slot.own_inputs)
    out_dir = tmp_path / "out"
    returned = own.plan.args["x"] + own.plan.args["y"]
    meta = write_tensor(out_dir, f"call{own.call_id}_out0.bin", returned)
    record = CallRecord(id=own.call_id, ok=True, outputs=[OutputRecord(python_type="torch.Tensor", exact_tensor=True, data=meta)])
    (out_dir / call_record_file(own.call_id)).write_text(record.model_dump_json())
    # The witness's replay of that call's tape on the call's own inputs: the same bits, or one element a ulp off
    # (the call computed with torch, its tape names a kernel that sums otherwise).
    replayed = returned.clone()
    if nudge:
        replayed[7] = torch.nextafter(replayed[7], torch.tensor(float("inf")))
    report_with(replay, out_dir, {own.item: replayed})
    verdict = judged(replay, out_dir)
    assert (verdict.status == Status.passed) is passes, verdict.error
    if not passes:
        assert verdict.status == Status.rejected and "replay_not_what_ran" in verdict.flags and "output #1" in (verdict.error or "")


def test_kernels_the_witness_saw_use_atomics_are_not_held_to_their_calls_bits(vector_add: Task, tmp_path: Path) -> None:
    from gym.worker.protocol import CallRecord, call_record_file

    # Whether atomics ran is the witness's observation (ReplayRecord.atomics), never the source's text.
    replay = phase(vector_add, tmp_path)
    ready(replay)
    own = next(slot for slot in replay.slots if slot.own_inputs)
    out_dir = tmp_path / "out"
    returned = own.plan.args["x"] + own.plan.args["y"]
    meta = write_tensor(out_dir, f"call{own.call_id}_out0.bin", returned)
    record = CallRecord(id=own.call_id, ok=True, outputs=[OutputRecord(python_type="torch.Tensor", exact_tensor=True, data=meta)])
    (out_dir / call_record_file(own.call_id)).write_text(record.model_dump_json())
    replayed = returned.clone()
    replayed[7] = torch.nextafter(replayed[7], torch.tensor(float("inf")))
    report_with(replay, out_dir, {own.item: replayed}, by_item={own.item: {"atomics": True}})
    assert judged(replay, out_dir).status == Status.passed


def test_a_replay_that_runs_out_the_limit_after_longer_than_the_whole_job_is_the_tapes_doing(vector_add: Task, tmp_path: Path) -> None:
    replay = phase(vector_add, tmp_path)
    ready(replay)
    assert replay.ready_at is not None
    # The submission's process took 2 s for every call; the replay of one call per trial ran 30 s and out the limit.
    replay.started_at, replay.ready_at = replay.ready_at - 2.0, replay.ready_at - 30.0
    forged = judged(replay, tmp_path / "out", timed_out=True)
    assert forged.status == Status.rejected and "replay_failed" in forged.flags and "longer than your own" in (forged.error or "")
    # A job whose own calls took most of the limit: an honest timeout.
    slow = phase(vector_add, tmp_path / "slow")
    ready(slow)
    assert slow.ready_at is not None
    slow.started_at = slow.ready_at - 100.0
    assert judged(slow, tmp_path / "slow" / "out", timed_out=True).status == Status.timeout


def test_a_tape_with_host_reads_is_replayed_on_its_calls_inputs_shuffled_unless_that_keeps_the_answer(tmp_path: Path) -> None:
    """A call that read a count on the host gets every tensor of its inputs in a secret order (the count is
    the call's again, the answer is not); a task whose answer a shuffle keeps (a histogram) gets fresh inputs."""
    from gym.tasks.loader import discover

    tasks = {task.id: task for task in discover().tasks}
    for task_id, shuffled in (("l1/cross_entropy", True), ("l1/histogram", False), ("l1/logsumexp", None)):
        replay = phase(tasks[task_id], tmp_path / task_id.replace("/", "_"))
        replay.tapes_dir = tmp_path / task_id.replace("/", "_") / "out"
        for _, ids in replay.layout:
            for call_id in ids:
                (replay.tapes_dir / f"call{call_id}.tape.json").write_text('{"steps": [{"op": "aten::_local_scalar_dense"}]}')
        ready(replay)
        for slot in replay.slots:
            if slot.own_inputs or slot.sub_batch_of is not None:
                continue
            own = slot.plan.args
            tensors = [name for name, value in own.items() if isinstance(value, torch.Tensor) and value.numel() > 1]
            same_multiset = all(torch.equal(own[name].reshape(-1).sort().values, slot.inputs[name].reshape(-1).sort().values) for name in tensors)
            moved = any(not torch.equal(own[name], slot.inputs[name]) for name in tensors)
            # A one-row log-sum-exp: the shuffled row's answer is the call's within rounding, so the call's own
            # answer would pass there (a host could carry it): fresh inputs. Several rows: shuffled.
            expected = shuffled if shuffled is not None else slot.trial.shape["M"] > 1
            assert same_multiset == expected and moved, (task_id, slot.trial.label)
        if shuffled is None:
            # Every trial of a grade, the one-row hidden one among them, as _add would ask for it. Secret 18's
            # one-row trial, shuffled by item 0's order, gives an answer one rounding off the call's (no bit
            # equality, so only the contract test sees that the call's own answer would pass there).
            judged: list[bool] = []
            own_answer_passes = replay._own_answer_passes

            def spy(*args: Any, judged: list[bool] = judged, check: Any = own_answer_passes) -> bool:
                judged.append(check(*args))
                return judged[-1]

            replay._own_answer_passes = spy  # type: ignore[method-assign]
            for trial in plan_trials(tasks[task_id], CPU, secret=18):
                answered = replay._host_read_inputs(trial, trial.calls[0], 0)
                assert (answered is not None) == (trial.shape["M"] > 1), trial.label
            assert True in judged, "the one-row trial reached the contract test and passed it"
