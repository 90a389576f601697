"""OpInfo problems draw their inputs inside the op's preconditions at every shape
(gym.tasks.opinfo.preconditions): one test per family, on samples built here (no op database), each
drawn at the sample's sizes and at sizes the scaler could pick (smaller and larger)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
import torch

from gym.tasks.kernelbench.problem import forward_inputs, init_inputs, instantiate
from gym.tasks.opinfo.preconditions import PRECONDITION_FAMILIES, RULES, apply_preconditions
from gym.tasks.opinfo.problem_source import render, size_names
from gym.tasks.opinfo.samples import OpEntry, SampleCase, TensorInput, _case, _Refused


def t(param: str, shape: tuple[int, ...], dtype: torch.dtype = torch.float32, low: float = -2.0, high: float = 2.0) -> TensorInput:
    return TensorInput(param=param, shape=shape, dtype=dtype, low=low, high=high)


def sample(name: str, args: list[Any], kwargs: dict[str, Any] | None = None, callee: str | None = None) -> SampleCase:
    """A sample of op `name` called as `callee(*args, **kwargs)`, with its preconditions applied."""
    kwargs = kwargs or {}
    tensors: list[TensorInput] = []
    for value in [*args, *kwargs.values()]:
        for item in value if isinstance(value, (list, tuple)) else [value]:
            if isinstance(item, TensorInput):
                tensors.append(item)
    case = SampleCase(
        entry=OpEntry(name=name, variant="", info=None),
        index=0,
        callee=callee or f"torch.{name}",
        args=list(args),
        kwargs=dict(kwargs),
        tensors=tensors,
        compute_op=f"aten.{name.split('.')[-1]}",
        ops={},
        output_kind="float",
        selected=False,
        reduces=False,
    )
    return apply_preconditions(case)


def drawn(case: SampleCase, sizes: dict[str, int], seed: int = 0) -> tuple[list[Any], Any]:
    """The problem's inputs at `sizes` under `seed`, and the op's outputs on them."""
    module = instantiate(render(case, "test"), sizes, case.entry.name)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = module.Model(*init_inputs(module))
        inputs = forward_inputs(module)
    with torch.no_grad():
        return inputs, model(*inputs)


def every_size(case: SampleCase, *scales: float) -> list[dict[str, int]]:
    """The sample's own sizes, and each scaled (at least 2)."""
    own = {name: dim for dim, name in size_names(case).items()}
    return [own] + [{name: max(2, round(dim * scale)) for name, dim in own.items()} for scale in scales]


# ----------------------------------------------------------------------------- sorted, permutation


def test_sorted_boundaries_and_sequences_stay_sorted() -> None:
    bucketize = sample("bucketize", [t("x", (6, 6)), t("y", (9,))])
    searched = sample("searchsorted", [t("x", (4, 9)), t("y", (4, 6))], {"right": False})
    assert bucketize.preconditions == ["y: the boundaries, sorted along its last dim"]
    for case in (bucketize, searched):
        sequence = "y" if case is bucketize else "x"
        for sizes in every_size(case, 0.5, 3):
            inputs, _ = drawn(case, sizes)
            values = dict(zip([tensor.param for tensor in case.tensors], inputs))[sequence]
            assert bool((values.diff(dim=-1) >= 0).all()), (case.entry.name, sizes)


def test_sorter_is_the_permutation_that_sorts_the_sequence() -> None:
    case = sample("searchsorted", [t("x", (10,)), t("y", (10, 10))], {"sorter": t("sorter", (10,), torch.int64, 0, 9)})
    assert "sorter: the permutation that sorts x (its argsort)" in case.preconditions
    for sizes in every_size(case, 0.4, 4):
        (x, y, sorter), result = drawn(case, sizes)
        assert torch.equal(sorter.sort().values, torch.arange(x.numel()))  # a permutation
        assert bool((x[sorter].diff() >= 0).all())  # that sorts x
        assert torch.equal(result, torch.searchsorted(x.sort().values, y))  # so the answer is the sorted sequence's


# ----------------------------------------------------------------------------- unique indices, no ties


def test_scatter_positions_are_distinct_along_the_dim_so_the_order_of_writes_does_not_matter() -> None:
    case = sample("scatter", [t("x", (10, 5)), 0, t("z", (5, 5), torch.int64, 0, 9), t("w", (5, 5))])
    for sizes in every_size(case, 0.5, 3):
        (x, index, src), result = drawn(case, sizes)
        assert bool((index < x.shape[0]).all()) and bool((index >= 0).all())
        assert all(index[:, j].unique().numel() == index.shape[0] for j in range(index.shape[1]))
        flipped = torch.scatter(x, 0, index.flip(0), src.flip(0))  # the same writes in the other order
        assert torch.equal(result, flipped)


def test_index_copy_put_and_index_put_write_each_position_once() -> None:
    copy = sample("index_copy", [t("x", (8, 8)), -1, t("z", (8,), torch.int64, 0, 4), t("w", (8, 8))])
    put = sample("put", [t("x", (6, 6)), t("y", (6,), torch.int64, 2, 6), t("z", (6,)), False])
    index_put = sample("index_put", [t("x", (12, 4)), [t("y0", (5,), torch.int64, 0, 3)], t("z", (5, 4))], {"accumulate": False})
    for case, index_at in ((copy, 1), (put, 1), (index_put, 1)):
        for sizes in every_size(case, 0.5, 2):
            inputs, _ = drawn(case, sizes)
            index = inputs[index_at]
            assert index.unique().numel() == index.numel(), (case.entry.name, sizes)
    accumulating = sample("index_put", [t("x", (12, 4)), [t("y0", (5,), torch.int64, 0, 3)], t("z", (5, 4))], {"accumulate": True})
    assert accumulating.preconditions == ["y0: indices into dim 0 below x.shape[0]"]  # duplicates add up: defined


def test_max_unpool_positions_are_distinct_in_each_plane_and_the_output_grows_with_the_input() -> None:
    case = sample(
        "nn.functional.max_unpool2d",
        [t("x", (1, 2, 2, 7)), t("y", (1, 2, 2, 7), torch.int64, 2, 17)],
        {"kernel_size": (3, 2), "stride": (2, 1), "padding": 1, "output_size": (1, 2, 3, 6)},
        callee="torch.nn.functional.max_unpool2d",
    )
    assert "output_size" not in case.kwargs  # a literal the grown input would outgrow: the op's default instead
    for sizes in every_size(case, 4, 8):
        (values, indices), result = drawn(case, sizes)
        plane = result.shape[-2] * result.shape[-1]
        flat = indices.flatten(2)
        assert bool((flat < plane).all()) and all(row.unique().numel() == row.numel() for row in flat.flatten(0, 1))
        assert torch.equal(result.flatten(2).gather(2, flat), values.flatten(2))  # every value lands, none overwritten


def test_values_without_ties_along_the_dim_an_index_output_points_into() -> None:
    case = sample("sort", [t("x", (10, 10, 10)), -3, True])
    for sizes in every_size(case, 2):
        (x,), (values, _) = drawn(case, sizes)
        for half in (x, x.half()):  # distinct in float16 too
            ordered = half.sort(dim=-3).values
            assert bool((ordered.diff(dim=-3) > 0).all())
        assert not torch.equal(values[:, 0], values[:, 1])  # slices differ: no one slice answers them all
    assert sample("sort", [t("x", (10, 10)), -1], {"stable": True}).preconditions == []  # a stable sort defines ties


# ----------------------------------------------------------------------------- index ranges


def test_ctc_loss_labels_and_lengths_fit_every_shape() -> None:
    case = sample(
        "nn.functional.ctc_loss",
        [
            t("x", (50, 16, 20), low=-19.0, high=0.0),
            t("y", (16, 30), torch.int64, 1, 19),
            t("z", (16,), torch.int64, 50, 50),
            t("w", (16,), torch.int64, 12, 29),
        ],
        {"reduction": "none", "zero_infinity": False},
        callee="torch.nn.functional.ctc_loss",
    )
    # The hidden shape: 5 classes where the sample drew labels up to 19.
    for sizes in [*every_size(case, 2), {"s0": 50, "s1": 9, "s2": 5, "s3": 30}]:
        (log_probs, targets, input_lengths, target_lengths), loss = drawn(case, sizes)
        classes = log_probs.shape[2]
        assert bool((targets >= 1).all()) and bool((targets < classes).all()), sizes
        assert bool((input_lengths <= log_probs.shape[0]).all()) and bool((target_lengths <= targets.shape[1]).all())
        assert bool((2 * target_lengths - 1 <= input_lengths).all())  # an alignment exists: the loss is finite
        assert torch.allclose(log_probs.exp().sum(2), torch.ones(()), atol=1e-5)
        assert bool(torch.isfinite(loss).all())


def test_indices_stay_below_the_size_they_index_at_every_shape() -> None:
    gather = sample("gather", [t("x", (20, 10)), 0, t("z", (10, 10), torch.int64, 0, 9)])
    embedding = sample("nn.functional.embedding", [t("x", (20, 8)), t("y", (8, 8), torch.int64, 0, 9)], callee="torch.ops.aten.embedding.default")
    nll = sample("nn.functional.nll_loss", [t("x", (6, 3, 6)), t("y", (6, 6), torch.int64, 0, 2)], {"reduction": "none"})
    for case, dim in ((gather, 0), (embedding, 0), (nll, 1)):
        for sizes in every_size(case, 0.3, 5):
            (source, index), _ = drawn(case, sizes)  # the op itself refuses an index out of range
            assert int(index.max()) < source.shape[dim]
    # Across the scaled range the indices cover the indexed size, not just the sample's first rows.
    (x, index), _ = drawn(gather, {"s0": 400, "s1": 10})
    assert int(index.max()) > 300


def test_segment_lengths_sum_to_the_segmented_size() -> None:
    case = sample("_segment_reduce", [t("x", (10, 5, 5)), "max"], {"axis": 0, "unsafe": True, "initial": 1, "lengths": t("lengths", (5,), torch.int64, 0, 6)})
    for sizes in every_size(case, 3):
        (x, lengths), _ = drawn(case, sizes)
        assert int(lengths.sum()) == x.shape[0] and bool((lengths >= 0).all())


# ----------------------------------------------------------------------------- matrices


def test_matrices_are_positive_definite_triangular_or_well_conditioned_as_the_op_needs() -> None:
    cholesky = sample("linalg.cholesky_ex", [t("x", (3, 12, 12))], {"upper": True})
    solve = sample("linalg.solve_triangular", [t("x", (3, 12, 12)), t("y", (3, 12, 4))], {"upper": True, "unitriangular": False})
    factor = sample("cholesky_solve", [t("x", (3, 12, 4)), t("y", (3, 12, 12))])
    for sizes in every_size(cholesky, 4):
        (a,), (_, info) = drawn(cholesky, sizes)
        assert int(info.abs().sum()) == 0 and float(torch.linalg.eigvalsh(a).min()) > 0.2
    for sizes in every_size(solve, 4):
        (a, _), _ = drawn(solve, sizes)
        assert float(torch.linalg.cond(a.triu()).max()) < 10
    (b, low), x = drawn(factor, every_size(factor)[0])
    assert torch.equal(low, low.tril()) and bool((low.diagonal(dim1=-2, dim2=-1) > 0).all())
    assert torch.allclose(low @ low.mT @ x, b, atol=1e-4, rtol=1e-4)


def test_lu_and_ldl_factors_come_from_a_real_factorisation() -> None:
    lu = sample("linalg.lu_solve", [t("x", (2, 6, 6)), t("y", (2, 6), torch.int32, 2, 3), t("z", (2, 6, 4))])
    ldl = sample("linalg.ldl_solve", [t("x", (2, 6, 6)), t("y", (2, 6), torch.int32, 1, 5), t("z", (2, 6, 6))], {"hermitian": False})
    for sizes in every_size(lu, 4):
        (factors, pivots, b), x = drawn(lu, sizes)
        assert pivots.dtype == torch.int32 and bool((pivots >= 1).all()) and bool((pivots <= factors.shape[-1]).all())
        p, lower, upper = torch.lu_unpack(factors, pivots)
        assert torch.allclose(p @ lower @ upper @ x, b, atol=1e-3)
        assert not torch.equal(pivots[0], torch.arange(1, pivots.shape[-1] + 1, dtype=torch.int32))  # the rows were shuffled
    for sizes in every_size(ldl, 4):
        (_, pivots, b), x = drawn(ldl, sizes)
        assert pivots.dtype == torch.int32
        assert float(x.norm()) <= float(b.norm()) * 1.001  # eigenvalue magnitudes of at least 1: the solve shrinks


# ----------------------------------------------------------------------------- no zero-size dimension


def test_a_sample_with_a_zero_size_dimension_is_refused_and_rules_apply_through_the_sampler() -> None:
    entry = OpEntry(name="addmm", variant="", info=SimpleNamespace(op=torch.addmm))
    inner_zero = SimpleNamespace(input=torch.rand(3, 4), args=(torch.rand(3, 0), torch.rand(0, 4)), kwargs={})
    with pytest.raises(_Refused) as refused:
        _case(entry, 0, inner_zero)
    assert refused.value.reason == "empty" and "zero-size dimension" in refused.value.detail
    fine = _case(entry, 1, SimpleNamespace(input=torch.rand(3, 4), args=(torch.rand(3, 5), torch.rand(5, 4)), kwargs={}))
    assert fine.flops > 0
    searched = OpEntry(name="searchsorted", variant="", info=SimpleNamespace(op=torch.searchsorted))
    sequence = torch.rand(7)
    found = apply_preconditions(_case(searched, 0, SimpleNamespace(input=sequence.sort().values, args=(torch.rand(3),), kwargs={"sorter": torch.arange(7)})))
    assert found.preconditions == ["sorter: the permutation that sorts x (its argsort)"]


def test_every_rule_names_a_family_the_docs_list() -> None:
    assert set(PRECONDITION_FAMILIES) == {"sorted", "permutation", "unique", "index_range", "matrix", "distribution"}
    assert {"searchsorted", "bucketize", "scatter", "index_copy", "nn.functional.max_unpool2d", "nn.functional.ctc_loss"} <= set(RULES)
