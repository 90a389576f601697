"""The ten contract check kinds, on hand-built evidence: each one passes a right
answer, fails a planted error, and its figure and diagnostics point at it."""

from __future__ import annotations

import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from gym.contracts import (
    CHECK_KINDS,
    AllcloseCheck,
    BatchInvariantCheck,
    BitwiseCheck,
    CheckOutcome,
    DeterministicCheck,
    LogprobCheck,
    NontrivialCheck,
    NormwiseCheck,
    OracleCheck,
    SubBatchRun,
    TopkOverlapCheck,
    TrialEvidence,
    UlpCheck,
)
from gym.contracts.elementwise import ulp_distance

FLOAT_DTYPES = [torch.float64, torch.float32, torch.float16, torch.bfloat16]


def evidence(got, expected, **extra) -> TrialEvidence:
    """Evidence for one trial; single tensors are wrapped into one-output lists."""
    got = list(got) if isinstance(got, (list, tuple)) else [got]
    expected = list(expected) if isinstance(expected, (list, tuple)) else [expected]
    inputs = extra.pop("inputs", {})
    return TrialEvidence(outputs=got, expected=expected, inputs=inputs, **extra)


def randn(*shape: int, seed: int = 0, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=generator, dtype=torch.float64).to(dtype)


def step(value: torch.Tensor, steps: int) -> torch.Tensor:
    """`value` moved `steps` representable numbers towards +inf."""
    for _ in range(steps):
        value = torch.nextafter(value, torch.full_like(value, math.inf))
    return value


def assert_sane(outcome: CheckOutcome) -> None:
    """Invariants every outcome keeps: passing means figure within threshold."""
    assert outcome.message
    if outcome.figure is not None and outcome.threshold is not None and outcome.kind not in ("topk_overlap",):
        assert outcome.passed == (outcome.figure <= outcome.threshold)
    # Results are serialisable (NaN/Inf as strings).
    CheckOutcome.model_validate_json(outcome.model_dump_json())


def test_every_kind_is_registered() -> None:
    assert set(CHECK_KINDS) == {
        "bitwise",
        "allclose",
        "ulp",
        "normwise",
        "oracle",
        "topk_overlap",
        "logprob",
        "deterministic",
        "batch_invariant",
        "nontrivial",
    }
    for kind, model in CHECK_KINDS.items():
        assert model.model_fields["kind"].default == kind


# ----------------------------------------------------------------------------- bitwise


def test_bitwise_passes_identical_copy() -> None:
    expected = randn(4, 5)
    outcome = BitwiseCheck().evaluate(evidence(expected.clone(), expected))
    assert outcome.passed and outcome.figure == 0
    assert outcome.diagnostics[0].mismatched == 0 and outcome.diagnostics[0].elements == 20
    assert_sane(outcome)


def test_bitwise_fails_one_ulp_and_points_at_it() -> None:
    expected = randn(4, 5)
    got = expected.clone()
    got[1, 2] = step(expected[1, 2], 1)
    outcome = BitwiseCheck().evaluate(evidence(got, expected))
    assert not outcome.passed
    assert outcome.figure == 1
    diag = outcome.diagnostics[0]
    assert diag.mismatched == 1
    assert [w.index for w in diag.worst] == [[1, 2]]
    assert diag.worst[0].got == float(got[1, 2]) and diag.worst[0].expected == float(expected[1, 2])
    assert_sane(outcome)


def test_bitwise_distinguishes_signed_zeros() -> None:
    got = torch.tensor([0.0, 1.0, -0.0])
    expected = torch.tensor([-0.0, 1.0, -0.0])
    outcome = BitwiseCheck().evaluate(evidence(got, expected))
    assert not outcome.passed and outcome.figure == 1
    assert outcome.diagnostics[0].worst[0].index == [0]
    # allclose, by contrast, sees no difference between them.
    assert AllcloseCheck(rtol=0, atol=0).evaluate(evidence(got, expected)).passed


def test_bitwise_distinguishes_nan_payloads() -> None:
    got = torch.tensor([0x7FC00000, 0x7FC00001], dtype=torch.int32).view(torch.float32)
    expected = torch.tensor([0x7FC00000, 0x7FC00000], dtype=torch.int32).view(torch.float32)
    assert torch.isnan(got).all()
    outcome = BitwiseCheck().evaluate(evidence(got, expected))
    assert not outcome.passed and outcome.figure == 1
    assert outcome.diagnostics[0].worst[0].index == [1]


def test_bitwise_counts_differences_over_all_outputs() -> None:
    a, b = torch.arange(6, dtype=torch.int32), torch.arange(4, dtype=torch.float16)
    a2, b2 = a.clone(), b.clone()
    a2[[0, 3]] += 1
    b2[[1, 2, 3]] = -b2[[1, 2, 3]] - 1
    outcome = BitwiseCheck().evaluate(evidence([a2, b2], [a, b]))
    assert not outcome.passed and outcome.figure == 5
    assert [d.mismatched for d in outcome.diagnostics] == [2, 3]
    assert [d.output for d in outcome.diagnostics] == [0, 1]


def test_bitwise_on_bool_outputs() -> None:
    expected = torch.tensor([True, False, True])
    assert BitwiseCheck().evaluate(evidence(expected.clone(), expected)).passed
    outcome = BitwiseCheck().evaluate(evidence(~expected, expected))
    assert not outcome.passed and outcome.figure == 3


# ---------------------------------------------------------------------------- allclose


def test_allclose_passes_within_tolerance() -> None:
    expected = randn(8, 8)
    check = AllcloseCheck(rtol=1e-3, atol=1e-4)
    got = expected + 0.5 * (1e-4 + 1e-3 * expected.abs())
    outcome = check.evaluate(evidence(got, expected))
    assert outcome.passed
    assert outcome.figure is not None and 0.3 < outcome.figure <= 1.0
    assert outcome.diagnostics[0].mismatched == 0
    assert "rtol=0.001" in outcome.message and "atol=0.0001" in outcome.message
    assert_sane(outcome)


def test_allclose_fails_planted_errors_worst_first() -> None:
    expected = randn(6, 7)
    check = AllcloseCheck(rtol=1e-3, atol=1e-4)
    allowed = 1e-4 + 1e-3 * expected.abs()
    got = expected.clone()
    got[0, 1] += 3 * allowed[0, 1]
    got[5, 6] -= 10 * allowed[5, 6]
    got[2, 3] += 5 * allowed[2, 3]
    outcome = check.evaluate(evidence(got, expected))
    assert not outcome.passed
    assert outcome.figure == pytest.approx(10, rel=1e-3)
    diag = outcome.diagnostics[0]
    assert diag.mismatched == 3 and diag.elements == 42
    assert [w.index for w in diag.worst] == [[5, 6], [2, 3], [0, 1]]
    assert diag.worst[0].got == pytest.approx(float(got[5, 6]))
    assert diag.worst[0].expected == pytest.approx(float(expected[5, 6]))
    assert diag.max_abs_error == pytest.approx(float((got - expected).abs().max()), rel=1e-6)
    assert_sane(outcome)


def test_allclose_nan_on_one_side_is_a_mismatch() -> None:
    expected = randn(10)
    got = expected.clone()
    got[4] = math.nan
    outcome = AllcloseCheck(rtol=1.0, atol=1.0).evaluate(evidence(got, expected))
    assert not outcome.passed
    assert outcome.figure is not None and outcome.figure > 1e300
    diag = outcome.diagnostics[0]
    assert diag.nan_mismatch == 1 and diag.mismatched == 1
    assert diag.worst[0].index == [4] and math.isnan(diag.worst[0].got)
    # ...and the other way round: NaN expected, a number given.
    swapped = AllcloseCheck(rtol=1.0, atol=1.0).evaluate(evidence(expected, got))
    assert not swapped.passed and swapped.diagnostics[0].nan_mismatch == 1


def test_allclose_accepts_nan_at_the_same_position_only() -> None:
    expected = randn(10)
    expected[3] = math.nan
    got = expected.clone()
    assert AllcloseCheck().evaluate(evidence(got, expected)).passed
    moved = expected.clone()
    moved[3], moved[7] = 0.0, math.nan
    outcome = AllcloseCheck(rtol=1.0, atol=1.0).evaluate(evidence(moved, expected))
    assert not outcome.passed and outcome.diagnostics[0].nan_mismatch == 2


def test_allclose_infinities_must_agree_in_sign() -> None:
    expected = torch.tensor([1.0, math.inf, -math.inf])
    assert AllcloseCheck().evaluate(evidence(expected.clone(), expected)).passed
    flipped = torch.tensor([1.0, -math.inf, -math.inf])
    outcome = AllcloseCheck(rtol=1.0, atol=1.0).evaluate(evidence(flipped, expected))
    assert not outcome.passed
    assert outcome.diagnostics[0].inf_mismatch == 1
    assert outcome.diagnostics[0].worst[0].index == [1]
    finite = torch.tensor([1.0, 3e38, -math.inf])
    assert not AllcloseCheck(rtol=1.0, atol=1.0).evaluate(evidence(finite, expected)).passed


def test_shape_and_dtype_mismatch_fail_and_name_the_problem() -> None:
    expected = torch.zeros(3, 4)
    for check in (BitwiseCheck(), AllcloseCheck(), UlpCheck(max_ulp=4), NormwiseCheck(eps=1.0), LogprobCheck(max_abs=1.0)):
        shape = check.evaluate(evidence(torch.zeros(4, 3), expected))
        assert not shape.passed
        assert "shape" in shape.message and "(4, 3)" in shape.message and "(3, 4)" in shape.message
        dtype = check.evaluate(evidence(torch.zeros(3, 4, dtype=torch.float16), expected))
        assert not dtype.passed
        assert "dtype" in dtype.message and "float16" in dtype.message and "float32" in dtype.message
    topk = TopkOverlapCheck(k=1, min_overlap=0).evaluate(evidence(torch.zeros(4, 3), expected))
    assert not topk.passed and "shape" in topk.message


def test_missing_output_fails() -> None:
    expected = [torch.zeros(3), torch.ones(3)]
    outcome = AllcloseCheck().evaluate(evidence([torch.zeros(3)], expected))
    assert not outcome.passed and "missing" in outcome.message and "output 1" in outcome.message


def test_allclose_defaults_depend_on_dtype() -> None:
    # One float16 ULP at 1.0 (relative 9.8e-4): within float16's default rtol=1e-3,
    # far outside float32's 1.3e-6 -- the same verdicts as torch.testing.assert_close.
    one = torch.ones(4, dtype=torch.float16)
    bumped = one.clone()
    bumped[2] = step(one[2], 1)
    half = AllcloseCheck().evaluate(evidence(bumped, one))
    single = AllcloseCheck().evaluate(evidence(bumped.float(), one.float()))
    torch.testing.assert_close(bumped, one)
    with pytest.raises(AssertionError):
        torch.testing.assert_close(bumped.float(), one.float())
    assert half.passed and "rtol=0.001" in half.message
    assert not single.passed and "rtol=1.3e-06" in single.message
    assert single.diagnostics[0].worst[0].index == [2]
    # An explicit tolerance overrides the default.
    assert AllcloseCheck(rtol=1e-2).evaluate(evidence(bumped.float(), one.float())).passed


def test_outputs_selects_the_second_output() -> None:
    first, second = randn(5, seed=1), randn(5, seed=2)
    wrong_first = [first + 1, second.clone()]
    on_second = AllcloseCheck(outputs=[1]).evaluate(evidence(wrong_first, [first, second]))
    assert on_second.passed
    assert [d.output for d in on_second.diagnostics] == [1]
    on_all = AllcloseCheck().evaluate(evidence(wrong_first, [first, second]))
    assert not on_all.passed and on_all.diagnostics[0].mismatched == 5
    wrong_second = [first.clone(), second - 1]
    failed = AllcloseCheck(outputs=[1]).evaluate(evidence(wrong_second, [first, second]))
    assert not failed.passed and failed.diagnostics[0].output == 1
    assert BitwiseCheck(outputs=[0]).evaluate(evidence(wrong_second, [first, second])).passed


def test_applies_to_dtypes() -> None:
    check = AllcloseCheck(dtypes=["float32", "bfloat16"])
    assert check.applies_to(torch.float32) and check.applies_to(torch.bfloat16)
    assert not check.applies_to(torch.float16) and not check.applies_to(torch.float64)
    assert AllcloseCheck().applies_to(torch.float16)
    assert not UlpCheck(max_ulp=0, dtypes=["int8"]).applies_to(torch.uint8)


def test_unknown_check_parameters_are_rejected() -> None:
    with pytest.raises(ValidationError):
        AllcloseCheck(rtoll=1e-3)
    with pytest.raises(ValidationError):
        AllcloseCheck(rtol=-1.0)
    with pytest.raises(ValidationError):
        UlpCheck(max_ulp=-1)


# --------------------------------------------------------------------------------- ulp


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_ulp_distance_of_adjacent_floats_is_one(dtype: torch.dtype) -> None:
    values = torch.tensor([1.0, -3.5, 1e-3, 100.0, 0.0], dtype=dtype)
    up = torch.nextafter(values, torch.full_like(values, math.inf))
    down = torch.nextafter(values, torch.full_like(values, -math.inf))
    assert ulp_distance(up, values).tolist() == [1.0] * 5
    assert ulp_distance(values, down).tolist() == [1.0] * 5
    assert ulp_distance(up, down).tolist() == [2.0] * 5


@pytest.mark.parametrize("dtype", FLOAT_DTYPES)
def test_ulp_distance_across_zero(dtype: torch.dtype) -> None:
    zero = torch.zeros(1, dtype=dtype)
    tiny = torch.nextafter(zero, torch.ones_like(zero))
    assert float(tiny) > 0 and float(torch.nextafter(tiny, zero)) == 0
    assert ulp_distance(tiny, -tiny).tolist() == [2.0]
    assert ulp_distance(tiny, zero).tolist() == [1.0]
    assert ulp_distance(-tiny, zero).tolist() == [1.0]
    assert ulp_distance(zero, -zero).tolist() == [0.0]


def test_ulp_check_threshold_and_diagnostics() -> None:
    expected = randn(3, 4)
    got = expected.clone()
    got[2, 1] = step(expected[2, 1], 3)
    got[0, 0] = step(expected[0, 0], 1)
    assert UlpCheck(max_ulp=3).evaluate(evidence(got, expected)).passed
    outcome = UlpCheck(max_ulp=2).evaluate(evidence(got, expected))
    assert not outcome.passed and outcome.figure == 3 and outcome.threshold == 2
    diag = outcome.diagnostics[0]
    assert diag.mismatched == 1
    assert diag.worst[0].index == [2, 1] and diag.worst[0].error == 3
    assert diag.worst[0].got == float(got[2, 1]) and diag.worst[0].expected == float(expected[2, 1])
    assert_sane(outcome)


def test_ulp_nan_and_inf_mismatches_are_infinite() -> None:
    expected = torch.tensor([1.0, 2.0, math.inf, math.nan])
    assert UlpCheck(max_ulp=0).evaluate(evidence(expected.clone(), expected)).passed
    for got, field in (
        (torch.tensor([math.nan, 2.0, math.inf, math.nan]), "nan_mismatch"),
        (torch.tensor([1.0, 2.0, -math.inf, math.nan]), "inf_mismatch"),
        (torch.tensor([1.0, 2.0, math.inf, 5.0]), "nan_mismatch"),
    ):
        outcome = UlpCheck(max_ulp=1_000_000).evaluate(evidence(got, expected))
        assert not outcome.passed and outcome.figure == math.inf
        assert getattr(outcome.diagnostics[0], field) == 1


def test_ulp_float64_opposite_signs_never_pass() -> None:
    got = torch.tensor([3.0, 2.0], dtype=torch.float64)
    expected = torch.tensor([-1.5, -2.0], dtype=torch.float64)
    assert bool((ulp_distance(got, expected) > 1e15).all())
    assert not UlpCheck(max_ulp=4).evaluate(evidence(got, expected)).passed


def test_ulp_float32_opposite_signs_fail() -> None:
    got = torch.tensor([3.0, 2.0])
    expected = torch.tensor([-1.5, -2.0])
    assert bool((ulp_distance(got, expected) > 1e9).all())
    assert not UlpCheck(max_ulp=4).evaluate(evidence(got, expected)).passed


# --------------------------------------------------- properties: self-comparison, symmetry

floats32 = st.floats(width=32, allow_nan=True, allow_infinity=True)


@settings(max_examples=60, deadline=None)
@given(values=st.lists(floats32, min_size=0, max_size=24), dtype=st.sampled_from(FLOAT_DTYPES))
def test_a_tensor_always_matches_itself(values: list[float], dtype: torch.dtype) -> None:
    tensor = torch.tensor(values, dtype=torch.float32).to(dtype)
    twin = tensor.clone()
    for check in (BitwiseCheck(), AllcloseCheck(), AllcloseCheck(rtol=0, atol=0), UlpCheck(max_ulp=0)):
        outcome = check.evaluate(evidence(twin, tensor))
        assert outcome.passed, (check, outcome.message)
        assert outcome.diagnostics[0].mismatched == 0
    assert bool((ulp_distance(tensor, twin) == 0).all())


@settings(max_examples=80, deadline=None)
@given(
    pairs=st.lists(st.tuples(floats32, floats32), min_size=1, max_size=16),
    dtype=st.sampled_from(FLOAT_DTYPES),
)
def test_ulp_distance_is_symmetric_and_non_negative(pairs: list[tuple[float, float]], dtype: torch.dtype) -> None:
    a = torch.tensor([p[0] for p in pairs], dtype=torch.float32).to(dtype)
    b = torch.tensor([p[1] for p in pairs], dtype=torch.float32).to(dtype)
    forward, backward = ulp_distance(a, b), ulp_distance(b, a)
    assert torch.equal(forward, backward)
    assert bool((forward >= 0).all())
    # Zero exactly when the values are equal (+0 == -0) or both NaN.
    same = (a == b) | (torch.isnan(a) & torch.isnan(b))
    assert torch.equal(forward == 0, same)


@settings(max_examples=60, deadline=None)
@given(value=st.floats(width=32, min_value=-(2.0**100), max_value=2.0**100), steps=st.integers(0, 20))
def test_ulp_distance_counts_nextafter_steps(value: float, steps: int) -> None:
    start = torch.tensor([value], dtype=torch.float32)
    assert ulp_distance(step(start, steps), start).item() == steps


# ---------------------------------------------------------------------------- normwise


def test_normwise_passes_small_relative_noise() -> None:
    expected = randn(32, 32, dtype=torch.float64)
    got = expected + 1e-6 * randn(32, 32, seed=9, dtype=torch.float64)
    outcome = NormwiseCheck(eps=1e-4).evaluate(evidence(got, expected))
    true_error = float(torch.linalg.norm(got - expected) / torch.linalg.norm(expected))
    assert outcome.passed and outcome.figure == pytest.approx(true_error)
    assert outcome.diagnostics[0].mismatched == 0
    assert_sane(outcome)


def test_normwise_fails_a_planted_large_error() -> None:
    expected = randn(16, 16, dtype=torch.float64)
    got = expected.clone()
    got[7, 3] += 50.0
    outcome = NormwiseCheck(eps=1e-3).evaluate(evidence(got, expected))
    assert not outcome.passed
    assert outcome.figure == pytest.approx(50.0 / float(torch.linalg.norm(expected)))
    diag = outcome.diagnostics[0]
    assert diag.mismatched == 1
    assert diag.worst[0].index == [7, 3] and diag.worst[0].error == pytest.approx(50.0)
    assert_sane(outcome)


def test_normwise_nan_is_never_a_wildcard() -> None:
    expected = randn(10)
    got = expected.clone()
    got[2] = math.nan
    outcome = NormwiseCheck(eps=1e6).evaluate(evidence(got, expected))
    assert not outcome.passed and outcome.figure == math.inf
    assert outcome.diagnostics[0].nan_mismatch == 1 and outcome.diagnostics[0].worst[0].index == [2]
    both = expected.clone()
    both[2] = math.nan
    assert NormwiseCheck(eps=1e-12).evaluate(evidence(both.clone(), both)).passed
    flipped = expected.clone()
    flipped[5] = math.inf
    twin = flipped.clone()
    twin[5] = -math.inf
    assert not NormwiseCheck(eps=1e6).evaluate(evidence(twin, flipped)).passed


def test_nan_mismatch_scores_infinite_error() -> None:
    expected = torch.tensor([1.0, 2.0, 3.0])
    got = expected.clone()
    got[1] = math.nan
    allclose = AllcloseCheck().evaluate(evidence(got, expected))
    assert allclose.figure == math.inf
    assert allclose.diagnostics[0].worst[0].error == math.inf
    normwise = NormwiseCheck(eps=1e-3).evaluate(evidence(got, expected))
    assert normwise.diagnostics[0].worst[0].error == math.inf


def test_normwise_zero_reference_uses_absolute_norm() -> None:
    expected = torch.zeros(4)
    got = torch.tensor([0.0, 3e-4, 0.0, 4e-4])
    assert NormwiseCheck(eps=1e-3).evaluate(evidence(got, expected)).figure == pytest.approx(5e-4)
    assert not NormwiseCheck(eps=1e-4).evaluate(evidence(got, expected)).passed


# ------------------------------------------------------------------------------ oracle


def _sum_rows(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """A float16 sequential row sum (imprecise reference) and the float64 truth."""
    acc = torch.zeros(x.shape[0], dtype=torch.float16)
    for column in range(x.shape[1]):
        acc = acc + x[:, column]
    return acc, x.double().sum(dim=1)


def test_oracle_passes_a_kernel_more_precise_than_the_reference() -> None:
    x = (randn(8, 512, seed=3).abs() + 1).to(torch.float16)
    reference, truth = _sum_rows(x)
    precise = truth.to(torch.float16)
    assert not torch.equal(precise, reference)  # so allclose-to-reference alone could mislead
    outcome = OracleCheck().evaluate(evidence(precise, reference, oracle=[truth]))
    assert outcome.passed and outcome.figure < 1
    assert_sane(outcome)


def test_oracle_fails_a_much_less_precise_kernel() -> None:
    x = (randn(8, 512, seed=3).abs() + 1).to(torch.float16)
    reference, truth = _sum_rows(x)
    reference_error = float((reference.double() - truth).abs().max())
    sloppy = (truth + 20 * reference_error).to(torch.float16)
    outcome = OracleCheck(factor=2.0).evaluate(evidence(sloppy, reference, oracle=[truth]))
    assert not outcome.passed and outcome.figure > 5
    assert outcome.diagnostics[0].mismatched > 0
    assert_sane(outcome)
    # The norm metric reaches the same verdicts.
    assert not OracleCheck(metric="norm").evaluate(evidence(sloppy, reference, oracle=[truth])).passed
    precise = truth.to(torch.float16)
    assert OracleCheck(metric="norm").evaluate(evidence(precise, reference, oracle=[truth])).passed


def test_oracle_floor_and_exact_reference() -> None:
    truth = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    exact = truth.float()
    off = exact.clone()
    off[1] += 1e-3
    # The reference is exact, so without a floor any error is infinitely too much.
    no_floor = OracleCheck().evaluate(evidence(off, exact, oracle=[truth]))
    assert not no_floor.passed and no_floor.figure == math.inf
    assert no_floor.diagnostics[0].worst[0].index == [1]
    assert OracleCheck().evaluate(evidence(exact.clone(), exact, oracle=[truth])).passed
    assert OracleCheck(floor=1e-2).evaluate(evidence(off, exact, oracle=[truth])).passed


def test_oracle_without_oracle_outputs_fails() -> None:
    outcome = OracleCheck().evaluate(evidence(torch.ones(3), torch.ones(3)))
    assert not outcome.passed and "oracle" in outcome.message


def test_oracle_nan_is_a_mismatch() -> None:
    truth = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)
    got = truth.float()
    got[0] = math.nan
    outcome = OracleCheck(floor=1e6).evaluate(evidence(got, truth.float(), oracle=[truth]))
    assert not outcome.passed and outcome.diagnostics[0].nan_mismatch == 1


# ------------------------------------------------------------------------ topk_overlap


def _scores(rows: int = 6, width: int = 20) -> torch.Tensor:
    # Distinct values per row (a random permutation), so top-k has no ties.
    generator = torch.Generator().manual_seed(5)
    return torch.stack([torch.randperm(width, generator=generator) for _ in range(rows)]).float()


def test_topk_overlap_identical_passes() -> None:
    expected = _scores()
    outcome = TopkOverlapCheck(k=4, min_overlap=1.0, min_row_overlap=1.0, min_rank_correlation=0.99).evaluate(evidence(expected.clone(), expected))
    assert outcome.passed and outcome.figure == 1.0
    assert outcome.diagnostics[0].mismatched == 0 and outcome.diagnostics[0].elements == 6


@pytest.mark.parametrize("k", [2, 3, 4, 5, 7])
def test_topk_overlap_identical_meets_perfect_rank_correlation(k: int) -> None:
    expected = _scores(3, 10)
    outcome = TopkOverlapCheck(k=k, min_overlap=1.0, min_rank_correlation=1.0).evaluate(evidence(expected.clone(), expected))
    assert outcome.passed, outcome.message


def test_topk_overlap_mean_and_per_row() -> None:
    expected = _scores()
    got = expected.clone()
    got[4] = -expected[4]  # row 4 ranks its top-4 last: overlap 0
    lenient = TopkOverlapCheck(k=4, min_overlap=0.8).evaluate(evidence(got, expected))
    assert lenient.passed
    assert lenient.figure == pytest.approx(5 / 6)
    diag = lenient.diagnostics[0]
    assert diag.mismatched == 1
    assert diag.worst[0].index == [4] and diag.worst[0].got == 0.0
    strict_mean = TopkOverlapCheck(k=4, min_overlap=0.9).evaluate(evidence(got, expected))
    assert not strict_mean.passed and "mean top-4 overlap" in strict_mean.message
    per_row = TopkOverlapCheck(k=4, min_overlap=0.5, min_row_overlap=0.5).evaluate(evidence(got, expected))
    assert not per_row.passed and "a row's top-4 overlap is 0.000" in per_row.message


def test_topk_overlap_partial_row_overlap_fraction() -> None:
    expected = torch.tensor([[10.0, 9.0, 8.0, 7.0, 1.0, 0.0]])
    got = torch.tensor([[10.0, 9.0, 0.0, 1.0, 8.0, 7.0]])  # top-4 {0,1,4,5} vs {0,1,2,3}
    outcome = TopkOverlapCheck(k=4, min_overlap=0.6).evaluate(evidence(got, expected))
    assert not outcome.passed and outcome.figure == pytest.approx(0.5)
    assert TopkOverlapCheck(k=4, min_overlap=0.5).evaluate(evidence(got, expected)).passed
    assert TopkOverlapCheck(k=2, min_overlap=1.0).evaluate(evidence(got, expected)).passed


def test_topk_overlap_rank_correlation() -> None:
    expected = torch.tensor([[9.0, 8.0, 7.0, 6.0, 0.0, 1.0], [1.0, 0.0, 6.0, 7.0, 8.0, 9.0]])
    # Same top-4 sets, order inside them reversed.
    got = torch.tensor([[6.0, 7.0, 8.0, 9.0, 0.0, 1.0], [1.0, 0.0, 9.0, 8.0, 7.0, 6.0]])
    overlap_only = TopkOverlapCheck(k=4, min_overlap=1.0, min_row_overlap=1.0)
    assert overlap_only.evaluate(evidence(got, expected)).passed
    ranked = TopkOverlapCheck(k=4, min_overlap=1.0, min_rank_correlation=0.5).evaluate(evidence(got, expected))
    assert not ranked.passed and "rank correlation" in ranked.message and "-1.000" in ranked.message
    assert TopkOverlapCheck(k=4, min_overlap=1.0, min_rank_correlation=-1.0).evaluate(evidence(got, expected)).passed


def test_topk_overlap_nan_fails() -> None:
    expected = _scores(2, 8)
    got = expected.clone()
    got[0, 0] = math.nan
    outcome = TopkOverlapCheck(k=2, min_overlap=0.0).evaluate(evidence(got, expected))
    assert not outcome.passed and "NaN" in outcome.message
    assert outcome.diagnostics[0].nan_mismatch == 1


# ----------------------------------------------------------------------------- logprob


def test_logprob_needs_a_bound() -> None:
    with pytest.raises(ValidationError, match="max_abs, max_kl or both"):
        LogprobCheck()


def test_logprob_max_kl_matches_torch_kl_div() -> None:
    logits = randn(4, 10, dtype=torch.float64)
    expected = F.log_softmax(logits, dim=-1)
    noisy = logits.clone()
    noisy[2] += 0.5 * randn(10, seed=11, dtype=torch.float64)
    got = F.log_softmax(noisy, dim=-1)
    kl = F.kl_div(got, expected, log_target=True, reduction="none").sum(-1)
    assert float(kl[2]) > 1e-3 and float(kl[[0, 1, 3]].abs().max()) < 1e-12
    worst_kl = float(kl.max())
    assert LogprobCheck(max_kl=2 * worst_kl).evaluate(evidence(got, expected)).passed
    outcome = LogprobCheck(max_kl=worst_kl / 4).evaluate(evidence(got, expected))
    assert not outcome.passed and outcome.figure == pytest.approx(4.0)
    diag = outcome.diagnostics[0]
    # The whole offending row is flagged, and only it.
    assert diag.mismatched == 10
    assert {w.index[0] for w in diag.worst} == {2}
    assert_sane(outcome)


def test_logprob_max_abs() -> None:
    expected = F.log_softmax(randn(3, 5), dim=-1)
    got = expected.clone()
    got[1, 3] -= 0.1
    assert LogprobCheck(max_abs=0.2).evaluate(evidence(got, expected)).passed
    outcome = LogprobCheck(max_abs=0.05).evaluate(evidence(got, expected))
    assert not outcome.passed and outcome.figure == pytest.approx(2.0, rel=1e-5)
    assert outcome.diagnostics[0].mismatched == 1 and outcome.diagnostics[0].worst[0].index == [1, 3]


def test_logprob_infinities() -> None:
    expected = torch.tensor([[0.0, -math.inf, -math.inf]])
    assert LogprobCheck(max_abs=1e-6, max_kl=1e-6).evaluate(evidence(expected.clone(), expected)).passed
    lost = torch.tensor([[-math.inf, -math.inf, 0.0]])
    outcome = LogprobCheck(max_kl=1e6).evaluate(evidence(lost, expected))
    assert not outcome.passed and outcome.figure == math.inf
    assert outcome.diagnostics[0].inf_mismatch == 2


# ------------------------------------------------------------------------ deterministic


def test_deterministic_passes_identical_runs() -> None:
    out = randn(5, 3)
    outcome = DeterministicCheck(runs=3).evaluate(evidence(out, out, repeats=[[out.clone()], [out.clone()]]))
    assert outcome.passed and outcome.figure == 0
    assert_sane(outcome)


def test_deterministic_counts_changed_elements() -> None:
    out = randn(5, 3)
    drifted = out.clone()
    drifted[4, 0] = step(out[4, 0], 1)
    drifted[1, 2] = step(out[1, 2], 2)
    outcome = DeterministicCheck(runs=3).evaluate(evidence(out, out, repeats=[[out.clone()], [drifted]]))
    assert not outcome.passed and outcome.figure == 2
    assert outcome.diagnostics[0].mismatched == 2
    assert {tuple(w.index) for w in outcome.diagnostics[0].worst} == {(4, 0), (1, 2)}
    # Only the first runs-1 repeats are compared.
    assert DeterministicCheck(runs=2).evaluate(evidence(out, out, repeats=[[out.clone()], [drifted]])).passed


def test_deterministic_missing_runs_and_structure() -> None:
    out = randn(4)
    short = DeterministicCheck(runs=3).evaluate(evidence(out, out, repeats=[[out.clone()]]))
    assert not short.passed and "only 2 of 3 runs" in short.message
    reshaped = DeterministicCheck(runs=2).evaluate(evidence(out, out, repeats=[[out.reshape(2, 2)]]))
    assert not reshaped.passed and "run 2" in reshaped.message
    with pytest.raises(ValidationError):
        DeterministicCheck(runs=1)


# ---------------------------------------------------------------------- batch_invariant


def test_batch_invariant_resolve_defaults() -> None:
    check = BatchInvariantCheck(args=["x"])
    assert check.resolve(4) == [(0, 1), (1, 3), (2, 3)]
    # Batch of 2: (-2, -1) is (0, 1) again, and not listed twice.
    assert check.resolve(2) == [(0, 1), (1, 2)]
    # Batch of 1: (0, 1) is the full batch, the others are empty.
    assert check.resolve(1) == []
    assert check.resolve(0) == []


def test_batch_invariant_resolve_clamps_and_counts_from_the_end() -> None:
    check = BatchInvariantCheck(args=["x"], sub_batches=[(0, 100), (2, 100), (-3, -1), (-100, 1), (3, 2), (5, 9)])
    assert check.resolve(5) == [(2, 5), (2, 4), (0, 1)]


@settings(max_examples=200, deadline=None)
@given(
    spans=st.lists(st.tuples(st.integers(-12, 12), st.integers(-12, 12)), min_size=1, max_size=6),
    batch=st.integers(0, 10),
)
def test_batch_invariant_resolve_follows_python_slicing(spans: list[tuple[int, int]], batch: int) -> None:
    rows = list(range(batch))
    wanted: list[tuple[int, int]] = []
    for start, stop in spans:
        picked = rows[start:stop]
        if picked and len(picked) < batch:
            span = (picked[0], picked[-1] + 1)
            if span not in wanted:
                wanted.append(span)
    assert BatchInvariantCheck(args=["x"], sub_batches=spans).resolve(batch) == wanted


def test_batch_invariant_validation() -> None:
    with pytest.raises(ValidationError):
        BatchInvariantCheck(args=["x"], sub_batches=[])
    with pytest.raises(ValidationError):
        BatchInvariantCheck(args=[])


def test_batch_invariant_evaluate() -> None:
    full = randn(6, 4)
    check = BatchInvariantCheck(args=["x"])
    runs = [SubBatchRun(start, stop, [full[start:stop].clone()]) for start, stop in check.resolve(6)]
    outcome = check.evaluate(evidence(full, full, sub_batches=runs))
    assert outcome.passed and outcome.figure == 0 and "[1, 3)" in outcome.message
    bad_rows = full[1:3].clone()
    bad_rows[1, 2] = step(bad_rows[1, 2], 1)
    runs[1] = SubBatchRun(1, 3, [bad_rows])
    failed = check.evaluate(evidence(full, full, sub_batches=runs))
    assert not failed.passed and failed.figure == 1
    assert failed.diagnostics[0].worst[0].index == [1, 2]
    assert failed.diagnostics[0].worst[0].got == float(bad_rows[1, 2])
    assert failed.diagnostics[0].worst[0].expected == float(full[2, 2])
    none = check.evaluate(evidence(full, full))
    assert not none.passed and "no sub-batch" in none.message
    wrong_shape = check.evaluate(evidence(full, full, sub_batches=[SubBatchRun(0, 2, [full[0:3]])]))
    assert not wrong_shape.passed


# --------------------------------------------------------------------------- nontrivial


def test_nontrivial_fails_when_a_constant_passes() -> None:
    expected = torch.full((4, 4), 3.0)
    x = randn(4, 4)
    outcome = NontrivialCheck().evaluate(evidence(expected, expected, inputs={"x": x}, value_checks=[AllcloseCheck()]))
    assert not outcome.passed and outcome.figure >= 1
    assert "constant" in outcome.message


def test_nontrivial_fails_when_the_input_passes_through() -> None:
    x = randn(3, 5)
    outcome = NontrivialCheck().evaluate(evidence(x.clone(), x.clone(), inputs={"x": x, "scale": 2.0}, value_checks=[AllcloseCheck(), NormwiseCheck(eps=1e-3)]))
    assert not outcome.passed and outcome.figure == 1
    assert "input 'x' passed through" in outcome.message


def test_nontrivial_fails_when_zeros_pass() -> None:
    expected = torch.zeros(8)
    outcome = NontrivialCheck().evaluate(evidence(expected, expected, inputs={"x": randn(8)}, value_checks=[BitwiseCheck()]))
    assert not outcome.passed and "zeros" in outcome.message


def test_nontrivial_passes_for_a_real_op() -> None:
    x = randn(4, 6)
    y = randn(4, 6, seed=1)
    expected = x * y + 1
    outcome = NontrivialCheck().evaluate(evidence(expected, expected, inputs={"x": x, "y": y}, value_checks=[AllcloseCheck(), UlpCheck(max_ulp=2)]))
    assert outcome.passed and outcome.figure == 0
    assert "trivial answers fail" in outcome.message


def test_nontrivial_needs_a_value_check() -> None:
    x = randn(4)
    for checks in ([], [DeterministicCheck()], [NontrivialCheck()]):
        outcome = NontrivialCheck().evaluate(evidence(x, x, inputs={"x": x}, value_checks=checks))
        assert not outcome.passed and "no value check" in outcome.message


def test_nontrivial_a_loose_check_lets_trivial_answers_through() -> None:
    x = randn(4, 6)
    expected = x * 2 + 1
    loose = NontrivialCheck().evaluate(evidence(expected, expected, inputs={"x": x}, value_checks=[AllcloseCheck(rtol=0, atol=100.0)]))
    assert not loose.passed and loose.figure >= 3


def test_allclose_with_no_allowance_fails_any_difference() -> None:
    # atol = rtol = 0 against an expected 0 used to divide by an "infinite" allowance and pass.
    expected = torch.tensor([0.0, 1.0])
    got = torch.tensor([1e-3, 1.0])
    check = AllcloseCheck(rtol=0.0, atol=0.0)
    assert not check.compare([got], evidence(got, expected)).passed
    assert check.compare([expected.clone()], evidence(expected.clone(), expected)).passed
