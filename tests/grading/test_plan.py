"""The planner: a trial's calls, the trials of a grade, and what each call must return (no sandbox)."""

from __future__ import annotations

import pytest
import torch

from gym.contracts import (
    AllcloseCheck,
    BatchInvariantCheck,
    BitwiseCheck,
    DeterministicCheck,
    NontrivialCheck,
)
from gym.grading.planning.plan import (
    CallPlan,
    TimingRequest,
    Trial,
    expected_for_call,
    plan_calls,
    plan_timed_calls,
    plan_trials,
    plan_warmup_call,
    timed_trial,
)
from gym.tasks.loader import find_task
from gym.tasks.model import Task

CPU = torch.device("cpu")


@pytest.fixture(scope="module")
def vector_add() -> Task:
    return find_task("l1/vector_add")


@pytest.fixture(scope="module")
def linear() -> Task:
    return find_task("l1/linear_batch_invariant")


@pytest.fixture(scope="module")
def cumsum() -> Task:
    return find_task("l1/cumsum")


def batch_inputs(rows: int = 6) -> dict[str, object]:
    return {"x": torch.arange(rows * 3, dtype=torch.float32).reshape(rows, 3), "w": torch.ones(2, 3), "scale": 2}


# --- plan_calls -------------------------------------------------------------------------------


def test_a_contract_without_extra_calls_plans_only_the_main_call() -> None:
    inputs = batch_inputs()
    calls = plan_calls([BitwiseCheck(), NontrivialCheck()], inputs)
    assert [call.role for call in calls] == ["main"]
    assert calls[0].args is inputs and calls[0].span is None and calls[0].expected is None


def test_no_checks_still_plan_the_main_call() -> None:
    assert [call.role for call in plan_calls([], batch_inputs())] == ["main"]


def test_repeats_are_shared_between_checks() -> None:
    inputs = batch_inputs()
    calls = plan_calls([DeterministicCheck(runs=3), AllcloseCheck(), DeterministicCheck(runs=5)], inputs)
    # The most demanding check asks for 4 extra runs; the other's 2 are among them.
    assert [call.role for call in calls] == ["main", "repeat", "repeat", "repeat", "repeat"]
    assert all(call.args is inputs for call in calls), "repeats run on the very same inputs as the main call"


def test_batch_invariant_plans_sub_batches_with_spans_and_sliced_args() -> None:
    inputs = batch_inputs(rows=6)
    check = BatchInvariantCheck(args=["x"], sub_batches=[(0, 1), (1, 3), (-2, -1), (0, 6), (1, 3), (5, 99)])
    calls = plan_calls([check], inputs)
    # (0, 6) is the full batch and (1, 3) a duplicate: both dropped; negatives count from the end; stops clamp.
    assert [(call.role, call.span) for call in calls] == [
        ("main", None),
        ("sub_batch", (0, 1)),
        ("sub_batch", (1, 3)),
        ("sub_batch", (4, 5)),
        ("sub_batch", (5, 6)),
    ]
    for call in calls[1:]:
        start, stop = call.span
        assert torch.equal(call.args["x"], inputs["x"][start:stop])
        assert call.args["x"].untyped_storage().data_ptr() != inputs["x"].untyped_storage().data_ptr(), "sliced args are clones"
        assert call.args["w"] is inputs["w"], "only the batched args are sliced"
        assert call.args["scale"] == 2


def test_repeats_come_before_sub_batches_whatever_the_check_order() -> None:
    inputs = batch_inputs(rows=4)
    calls = plan_calls([BatchInvariantCheck(args=["x"], sub_batches=[(0, 2)]), DeterministicCheck(runs=2)], inputs)
    assert [(call.role, call.span) for call in calls] == [("main", None), ("repeat", None), ("sub_batch", (0, 2))]


# --- expected_for_call ------------------------------------------------------------------------


def test_expected_for_each_kind_of_call(linear: Task) -> None:
    trial = plan_trials(linear, CPU, secret=1, include_hidden=False, timing=TimingRequest(reps=1))[0]
    by_role = {plan.role: plan for plan in trial.calls}
    assert expected_for_call(trial, by_role["main"]) is trial.expected
    sub = next(plan for plan in trial.calls if plan.span == (1, 3))
    rows = expected_for_call(trial, sub)
    assert len(rows) == 1 and torch.equal(rows[0], trial.expected[0][1:3])
    timed = by_role["timed"]
    assert expected_for_call(trial, timed) is timed.expected
    assert not torch.equal(timed.expected[0], trial.expected[0]), "a timed call has its own inputs and answer"


def test_a_span_slices_every_expected_output() -> None:
    expected = [torch.arange(10.0).reshape(5, 2), torch.arange(5)]
    trial = Trial(label="t", dtype=torch.float32, shape={"M": 5}, hidden=False, inputs={}, expected=expected, returns_tuple=True, oracle=None, checks=[])
    rows = expected_for_call(trial, CallPlan(role="sub_batch", args={}, span=(3, 5)))
    assert [r.tolist() for r in rows] == [[[6.0, 7.0], [8.0, 9.0]], [3, 4]]


# --- plan_trials ------------------------------------------------------------------------------


def test_trials_are_labelled_public_then_hidden(vector_add: Task) -> None:
    trials = plan_trials(vector_add, CPU, secret=7)
    # The hidden trials are followed by the hardened one (gym.tasks.hardened) on the first hidden shape.
    assert [trial.label for trial in trials] == [
        "float32 public #1",
        "float32 public #2",
        "float32 hidden #1",
        "float32 hidden #2",
        "float32 hidden #3",
        "float32 heavy-tailed #1",
    ]
    assert [trial.hidden for trial in trials] == [False, False, True, True, True, True]
    assert [dict(trial.shape) for trial in trials] == [{"N": 1000}, {"N": 4097}, {"N": 5003}, {"N": 7}, {"N": 37}, {"N": 5003}]
    for trial in trials:
        assert trial.dtype == torch.float32 and not trial.returns_tuple
        assert set(trial.inputs) == {"x", "y"} and trial.inputs["x"].shape == (trial.shape["N"],)
        assert torch.equal(trial.expected[0], trial.inputs["x"] + trial.inputs["y"])
        assert [plan.role for plan in trial.calls] == ["main"]
        assert trial.oracle is None, "no vector_add check needs the oracle"


def test_hidden_trials_can_be_left_out(vector_add: Task) -> None:
    assert [trial.hidden for trial in plan_trials(vector_add, CPU, secret=7, include_hidden=False)] == [False, False]


def test_gpu_only_dtypes_are_planned_only_for_gpus(vector_add: Task) -> None:
    labels = [trial.label for trial in plan_trials(vector_add, CPU, secret=7, include_hidden=False, gpu=True)]
    assert labels == ["float32 public #1", "float32 public #2", "bfloat16 public #1", "bfloat16 public #2"]


def test_oracle_outputs_only_where_a_check_needs_them(cumsum: Task, vector_add: Task) -> None:
    trials = plan_trials(cumsum, CPU, secret=3, include_hidden=False, timing=TimingRequest(reps=2))
    for trial in trials:
        assert trial.oracle is not None and trial.oracle[0].dtype == torch.float64
        assert trial.oracle[0].shape == trial.expected[0].shape
        assert torch.allclose(trial.oracle[0], trial.inputs["x"].double().cumsum(-1))
        # Only the float32 oracle check applies to a float32 trial.
        assert [check.kind for check in trial.checks] == ["oracle", "nontrivial"]
    for plan in timed_trial(trials).calls[1:]:
        assert plan.oracle is not None and torch.allclose(plan.oracle[0], plan.args["x"].double().cumsum(-1))
    for plan in timed_trial(plan_trials(vector_add, CPU, secret=3, timing=TimingRequest(reps=2))).calls[1:]:
        assert plan.oracle is None


def test_contract_rich_task_plans_repeats_and_sub_batches() -> None:
    embedding = find_task("l1/embedding_backward")
    for trial in plan_trials(embedding, CPU, secret=5):
        assert [plan.role for plan in trial.calls] == ["main", "repeat", "repeat"]
        assert all(plan.args is trial.inputs for plan in trial.calls)
        assert trial.expected[0].shape == (trial.shape["W"], trial.shape["D"])
    linear = find_task("l1/linear_batch_invariant")
    trial = plan_trials(linear, CPU, secret=5, include_hidden=False)[0]
    rows = trial.shape["M"]
    assert [(plan.role, plan.span) for plan in trial.calls] == [
        ("main", None),
        ("sub_batch", (0, 1)),
        ("sub_batch", (1, 3)),
        ("sub_batch", (rows - 2, rows - 1)),
    ]
    for plan in trial.calls[1:]:
        start, stop = plan.span
        assert torch.equal(plan.args["x"], trial.inputs["x"][start:stop])
        assert plan.args["w"] is trial.inputs["w"]


def test_timed_calls_only_on_the_timed_trial(vector_add: Task) -> None:
    trials = plan_trials(vector_add, CPU, secret=11, timing=TimingRequest(reps=3))
    timed = timed_trial(trials)
    assert timed is trials[0]
    assert [plan.role for plan in timed.calls] == ["main", "timed", "timed", "timed"]
    assert all(plan.role != "timed" for trial in trials[1:] for plan in trial.calls)
    seen = [timed.inputs["x"]]
    for plan in timed.calls[1:]:
        x, y = plan.args["x"], plan.args["y"]
        assert x.shape == timed.inputs["x"].shape
        assert all(not torch.equal(x, other) for other in seen), "every timed call gets fresh inputs"
        seen.append(x)
        assert torch.equal(plan.expected[0], x + y)
    assert timed_trial(plan_trials(vector_add, CPU, secret=11)) is None


def test_bench_trial_carries_the_timed_calls(vector_add: Task) -> None:
    # A small bench shape: the real one is 16M elements.
    shapes = vector_add.spec.shapes.model_copy(update={"bench": [{"N": 64}]})
    small = vector_add.model_copy(update={"spec": vector_add.spec.model_copy(update={"shapes": shapes})})
    trials = plan_trials(small, CPU, secret=2, include_hidden=False, timing=TimingRequest(reps=2, bench=True))
    assert [trial.label for trial in trials] == ["float32 public #1", "float32 public #2", "float32 bench #1"]
    assert timed_trial(trials) is trials[-1]
    assert [plan.role for plan in trials[-1].calls] == ["main", "timed", "timed"]
    assert trials[-1].inputs["x"].shape == (64,)
    assert [plan.role for plan in trials[0].calls] == ["main"]


def test_seeds_change_with_the_secret_and_only_with_it(vector_add: Task) -> None:
    first = plan_trials(vector_add, CPU, secret=1, timing=TimingRequest(reps=1))
    again = plan_trials(vector_add, CPU, secret=1, timing=TimingRequest(reps=1))
    other = plan_trials(vector_add, CPU, secret=2, timing=TimingRequest(reps=1))
    public = plan_trials(vector_add, CPU, secret=None, include_hidden=False)
    for a, b, c in zip(first, again, other):
        assert torch.equal(a.inputs["x"], b.inputs["x"]) and torch.equal(a.inputs["y"], b.inputs["y"])
        assert not torch.equal(a.inputs["x"], c.inputs["x"])
    assert torch.equal(first[0].calls[1].args["x"], again[0].calls[1].args["x"])
    assert not torch.equal(first[0].calls[1].args["x"], other[0].calls[1].args["x"])
    assert not torch.equal(public[0].inputs["x"], first[0].inputs["x"])
    assert not torch.equal(first[0].inputs["x"], first[1].inputs["x"][:1000]), "trials have seeds of their own"


def test_timed_rounds_never_repeat_earlier_inputs(vector_add: Task) -> None:
    trial = plan_trials(vector_add, CPU, secret=4, include_hidden=False)[0]
    first = plan_timed_calls(vector_add, trial, CPU, 4, reps=2)
    later = plan_timed_calls(vector_add, trial, CPU, 4, reps=2, start=2)
    overlap = plan_timed_calls(vector_add, trial, CPU, 4, reps=1, start=1)
    assert torch.equal(overlap[0].args["x"], first[1].args["x"]), "call numbers are stable"
    xs = [plan.args["x"] for plan in first + later]
    assert all(not torch.equal(xs[i], xs[j]) for i in range(4) for j in range(i))
    warmup = plan_warmup_call(vector_add, trial, CPU, 4)
    assert warmup.role == "warmup" and warmup.expected is None
    assert warmup.args["x"].shape == trial.inputs["x"].shape
    assert all(not torch.equal(warmup.args["x"], x) for x in xs + [trial.inputs["x"]])


def test_late_calls_go_to_the_cheapest_trial_in_a_secret_number(vector_add: Task) -> None:
    from gym.grading.planning.plan import LATE_CALLS_MIN, LATE_CALLS_SPREAD, add_late_calls

    counts = set()
    for secret in range(6):
        trials = plan_trials(vector_add, CPU, secret=secret)
        chosen = add_late_calls(trials, secret)
        assert chosen is not None and dict(chosen.shape) == {"N": 7}
        late = [plan for plan in chosen.calls if plan.role == "late"]
        assert LATE_CALLS_MIN <= len(late) <= LATE_CALLS_MIN + LATE_CALLS_SPREAD
        # On the trial's own inputs, checked against its expected outputs.
        assert all(plan.args is chosen.inputs and plan.expected is None for plan in late)
        assert all(plan.role != "late" for trial in trials if trial is not chosen for plan in trial.calls)
        counts.add(len(late))
    assert len(counts) > 1, "the number of late calls follows the secret"
