"""Calibrated oracle checks (issue 37, target 3): the allowance covers honest float32 evaluations
in other orders (gym.contracts.spread), and cheats still fail. Torch emulations of the kernels
(tests/contracts/emulated.py) keep this fast; the sweep (scripts/sweep_secrets.py) runs the real ones."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import pytest
import torch

from gym.contracts import OracleCheck, TrialEvidence, spread
from gym.contracts.spread import HonestOrder, honest_evaluations
from gym.grading.planning.plan import Trial, TrialRequest, hardened_trials, make_trial, plan_trials
from gym.tasks.inputs import mix_seed, public_seed
from gym.tasks.loader import find_task
from tests.contracts import emulated

CPU = torch.device("cpu")


def _trial(task_id: str, seed: int, kind: str = "hidden", index: int = 0) -> tuple[Any, Trial]:
    task = find_task(task_id)
    shape = getattr(task.spec.shapes, kind)[index]
    checks = [check for check in task.spec.contract if check.applies_to(torch.float32)]
    return task, make_trial(task, TrialRequest(f"float32 {kind} #{index + 1}", torch.float32, shape, hidden=kind == "hidden", seed=seed, checks=checks), CPU)


def _passes(task: Any, trial: Trial, candidate: Callable[..., torch.Tensor], before: bool = False) -> bool:
    out = candidate(*[trial.inputs[name] for name in task.spec.params])
    evidence = TrialEvidence(outputs=[out], expected=trial.expected, inputs=trial.inputs, oracle=trial.oracle)
    with spread.disabled() if before else contextlib.nullcontext():
        return all(check.compare([out], evidence).passed for check in trial.checks if check.compares_values)


def test_honest_order_is_another_order_of_the_same_sum() -> None:
    generator = torch.Generator().manual_seed(1)
    a, b = torch.randn(33, 70, generator=generator), torch.randn(70, 9, generator=generator)
    x = torch.randn(5, 300, generator=generator) * 30
    with HonestOrder(torch.Generator().manual_seed(2)):
        mm, total, soft, lse, scan = a @ b, x.sum(-1), torch.softmax(x, -1), torch.logsumexp(x, -1), x.cumsum(-1)
    exact = a.double() @ b.double()
    assert torch.allclose(mm.double(), exact, rtol=0, atol=1e-4) and not torch.equal(mm, a @ b)
    assert torch.allclose(total, x.sum(-1), rtol=1e-5, atol=1e-3)
    assert torch.allclose(soft, torch.softmax(x, -1), rtol=1e-4, atol=1e-6)
    assert torch.allclose(lse, torch.logsumexp(x, -1), rtol=1e-6, atol=1e-4)
    assert torch.allclose(scan, x.cumsum(-1), rtol=1e-5, atol=1e-3)


def test_honest_order_reorders_atomics_and_half_inputs_accumulate_in_float32() -> None:
    generator = torch.Generator().manual_seed(3)
    source = torch.randn(400, 4, generator=generator) * 1e3
    index = torch.randint(0, 3, (400,), generator=generator)
    plain = torch.zeros(3, 4).index_add(0, index, source)
    outs = []
    for seed in range(4):
        with HonestOrder(torch.Generator().manual_seed(seed)):
            outs.append(torch.zeros(3, 4).index_add(0, index, source))
    assert all(torch.allclose(out, plain, rtol=1e-5, atol=1e-2) for out in outs)
    assert any(not torch.equal(out, plain) for out in outs), "atomics in another order must round differently somewhere"
    half_a, half_b = torch.randn(8, 512, generator=generator).half(), torch.randn(512, 8, generator=generator).half()
    with HonestOrder(torch.Generator().manual_seed(0)):
        product = half_a @ half_b
    assert product.dtype == torch.float16
    assert torch.allclose(product.double(), (half_a.double() @ half_b.double()).half().double(), rtol=2e-3, atol=2e-2)


def test_honest_evaluations_are_seeded_and_perturb_only_float32() -> None:
    inputs = {"x": torch.randn(4, 100), "n": torch.arange(3)}
    first = honest_evaluations(lambda args: [args["x"].sum(-1)], inputs, count=4)
    again = honest_evaluations(lambda args: [args["x"].sum(-1)], inputs, count=4)
    assert len(first) == 4 and all(torch.equal(a[0], b[0]) for a, b in zip(first, again))
    assert torch.equal(inputs["n"], torch.arange(3))


def test_calibrated_allowance_is_never_below_the_declared_one() -> None:
    task, trial = _trial("l1/cross_entropy", 5)
    check = next(check for check in trial.checks if isinstance(check, OracleCheck))
    assert check.calibrated
    evidence = TrialEvidence(outputs=trial.expected, expected=trial.expected, inputs=trial.inputs, oracle=trial.oracle)
    reference_error = check._error(trial.expected[0], trial.oracle[0]) if trial.oracle else 0.0
    assert check.honest_errors(evidence)[0] >= 0.0
    assert check.honest_errors(evidence) is check.honest_errors(evidence), "cached per evidence"
    with spread.disabled():
        assert not check.calibrated
    assert max(check.honest_errors(evidence)[0], reference_error) >= reference_error


def test_the_shipped_cross_entropy_failure_is_covered() -> None:
    """Secret 38 of l1/cross_entropy: the shipped solution's heavy-tailed trial failed at 1.87x the
    one-draw allowance (measured with scripts/sweep_secrets.py); an online float32 evaluation here."""
    task = find_task("l1/cross_entropy")
    trials = plan_trials(task, CPU, 38, include_hidden=True)
    heavy = next(trial for trial in trials if "heavy" in trial.label)
    check = next(check for check in heavy.checks if isinstance(check, OracleCheck))
    evidence = TrialEvidence(outputs=heavy.expected, expected=heavy.expected, inputs=heavy.inputs, oracle=heavy.oracle)
    assert heavy.oracle is not None
    reference_error = check._error(heavy.expected[0], heavy.oracle[0])
    assert check.honest_errors(evidence, complete=True)[0] > 1.87 * reference_error, "the spread shows what one draw hid"


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_honest_online_attention_passes_and_cheats_fail(seed: int) -> None:
    task, trial = _trial("l2/sliding_window_attention", seed)
    assert _passes(task, trial, emulated.attention_online)
    for cheat in (emulated.attention_float16, emulated.attention_tf32, emulated.attention_partial):
        assert not _passes(task, trial, cheat), cheat.__name__


def test_heavy_tailed_attention_secret_13() -> None:
    """The shipped sliding-window solution failed secret 13's heavy-tailed trial at 5.44x the one-draw
    allowance; calibrated, an honest online kernel passes and float16, TF32 and partial work still fail."""
    task = find_task("l2/sliding_window_attention")
    trials = plan_trials(task, CPU, 13, include_hidden=True)
    heavy = next(trial for trial in trials if "heavy" in trial.label and trial.dtype == torch.float32)
    assert _passes(task, heavy, emulated.attention_online)
    for cheat in (emulated.attention_float16, emulated.attention_tf32, emulated.attention_partial):
        assert not _passes(task, heavy, cheat), cheat.__name__


@pytest.mark.parametrize("seed", range(6))
def test_cross_entropy_online_passes_and_float16_fails(seed: int) -> None:
    task, trial = _trial("l1/cross_entropy", seed)
    assert _passes(task, trial, emulated.cross_entropy_online)
    assert not _passes(task, trial, emulated.cross_entropy_float16)
    assert not _passes(task, trial, emulated.cross_entropy_partial)


def test_variant_count_is_more_where_evaluations_are_cheap() -> None:
    """16 honest variants (17 draws with the reference) on the CPU trials' sizes; fewer at GPU bench sizes."""
    assert spread.variant_count(200_000) == spread.VARIANTS == 16
    assert spread.variant_count(2_000_000) == spread.MEDIUM_VARIANTS
    assert spread.variant_count(50_000_000) == spread.LARGE_VARIANTS


def test_honest_sums_are_sequential_in_a_random_order() -> None:
    """A variant's sum is the noisiest honest order: one running float32 total, element by element.
    1 followed by many quarter-ulps: a tree keeps them, a running total of 1 rounds each one away."""
    x = torch.cat([torch.ones(1), torch.full((1000,), 2.0**-25)])[None, :]
    exact = 1 + 1000 * 2.0**-25
    sums = []
    for seed in range(4):
        with HonestOrder(torch.Generator().manual_seed(seed)):
            sums.append(float(x.sum(-1)))
    tree_error = abs(float(x.sum(-1)) - exact)
    assert all(abs(total - exact) >= tree_error for total in sums)
    assert len(set(sums)) > 1, "the 1 lands at another position in each random order"
    long = torch.randn(3, spread.SEQUENTIAL_STEPS + 5, dtype=torch.float32)
    with HonestOrder(torch.Generator().manual_seed(0)):
        lanes = long.sum(-1)
    assert torch.allclose(lanes.double(), long.double().sum(-1), rtol=0, atol=1e-3)


def _grade_fails(task_id: str, secret: int, candidate: Callable[..., torch.Tensor]) -> list[str]:
    """The labels of a grade's float32 trials (public, hidden, hardened: as plan_trials makes them
    for `secret`) whose value checks `candidate` fails."""
    task = find_task(task_id)
    checks = [check for check in task.spec.contract if check.applies_to(torch.float32)]
    trials = [
        make_trial(
            task,
            TrialRequest(
                f"float32 {kind} #{index + 1}",
                torch.float32,
                shape,
                hidden=kind == "hidden",
                seed=mix_seed(public_seed(task.id, "float32", kind, index), secret),
                checks=checks,
            ),
            CPU,
        )
        for kind in ("public", "hidden")
        for index, shape in enumerate(getattr(task.spec.shapes, kind))
    ]
    trials += hardened_trials(task, trials, CPU, secret)
    return [trial.label for trial in trials if not _passes(task, trial, candidate)]


def test_softmax_backward_peaked_row_secret_1() -> None:
    """l1/softmax_backward secret 1, hidden #1 (one row, y_max 0.9986: dx is 2,000 times smaller than
    the dot product): version 1's normwise bound against the float32 reference failed the shipped
    solution at 5.8x (the reference itself is 5.1e-5 from the exact result). Against the float64
    oracle and the honest spread, a blocked and a fully sequential float32 dot pass."""
    task = find_task("l1/softmax_backward")
    trial = next(trial for trial in plan_trials(task, CPU, 1, include_hidden=True) if trial.label == "float32 hidden #1")
    for candidate in (emulated.softmax_backward_blocked, emulated.softmax_backward_sequential):
        assert _passes(task, trial, candidate), candidate.__name__
    assert not _passes(task, trial, emulated.softmax_backward_float16)


@pytest.mark.parametrize("secret", [0, 2])
def test_softmax_backward_cheats_fail_every_grade(secret: int) -> None:
    assert not _grade_fails("l1/softmax_backward", secret, emulated.softmax_backward_sequential)
    assert _grade_fails("l1/softmax_backward", secret, emulated.softmax_backward_float16)
    assert _grade_fails("l1/softmax_backward", secret, emulated.softmax_backward_partial)


@pytest.mark.parametrize("secret", [0])
def test_causal_attention_tf32_float16_and_partial_fail_every_grade(secret: int) -> None:
    """The task forbids TF32 (`input_precision="ieee"`): with the noisier sequential variants, TF32
    products, float16 arithmetic and a dropped key still fail every grade; an online kernel passes."""

    def causal(cheat: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
        return lambda q, k, v: cheat(q, k, v, q.shape[-2])

    assert not _grade_fails("l2/causal_attention", secret, causal(emulated.attention_online))
    for cheat in (emulated.attention_tf32, emulated.attention_float16, emulated.attention_partial):
        assert _grade_fails("l2/causal_attention", secret, causal(cheat)), cheat.__name__


def test_late_variants_are_evaluated_only_for_a_candidate_over_the_early_allowance() -> None:
    """The first EARLY_VARIANTS give an allowance; only a candidate over it costs the rest, and its
    verdict is the one all of them give (the allowance only grows with more variants)."""
    worst_late = spread.EARLY_VARIANTS + 2
    errors = [0.5 if variant == worst_late else 0.1 for variant in range(spread.EARLY_VARIANTS + 4)]
    asked: list[tuple[int, int | None]] = []

    def honest(inputs: dict[str, Any], start: int, stop: int | None) -> list[list[torch.Tensor]]:
        asked.append((start, stop))
        last = len(errors) if stop is None else min(stop, len(errors))
        return [[torch.tensor([errors[variant]])] for variant in range(start, last)]

    check = OracleCheck(factor=2.0).with_spread(honest)
    inputs, oracle, expected = {"x": torch.zeros(1)}, [torch.zeros(1, dtype=torch.float64)], [torch.tensor([0.05])]

    def judge(error: float) -> Any:
        got = [torch.tensor([error])]
        return check.compare(got, TrialEvidence(outputs=got, expected=expected, inputs=inputs, oracle=oracle))

    assert judge(0.15).passed and asked == [(0, spread.EARLY_VARIANTS)]
    assert judge(0.9).passed, "over the early allowance (0.2) but within all variants' (1.0)"
    assert asked == [(0, spread.EARLY_VARIANTS), (spread.EARLY_VARIANTS, None)]
    outcome = judge(1.5)
    assert not outcome.passed and outcome.figure == pytest.approx(1.5) and len(asked) == 2, "all variants known: no more evaluations"
    with spread.disabled():
        assert not judge(0.15).passed, "one draw: 2 x the reference's 0.05"
