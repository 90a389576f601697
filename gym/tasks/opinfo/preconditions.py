"""Input draws that keep an OpInfo op's documented preconditions at every shape.

OpInfo's sample generators draw inside each op's preconditions (a sorted `sorted_sequence`, a
permutation `sorter`, indices below the indexed size, a positive-definite matrix for a
Cholesky factorisation), but a problem draws its tensors again, one by one, in the sample's
value range, at shapes the scaler grows and halves: drawn that way `searchsorted`'s `sorter`
is no permutation, `scatter`'s indices repeat (the winner is undefined), `ctc_loss`'s labels
run past the class count of a smaller shape (the reference reads out of bounds) and a
random triangular matrix is too ill-conditioned to solve in float32.

`apply_preconditions(case)` gives the tensors of the ops that have such preconditions a draw
of their own (`TensorInput.draw`, a template problem_source fills at render time), written in
terms of the other tensors as drawn (`x.shape[0]`, `argsort(x)`) so that it holds at every
shape the scaler picks. The families (PRECONDITION_FAMILIES):

- sorted: `searchsorted`'s sequence and `bucketize`'s boundaries, sorted along the last dim;
- permutation: `searchsorted`'s `sorter`, the argsort of its sequence;
- unique indices where duplicates leave the result undefined (`scatter` without a reduction,
  `index_copy`, `index_put` and `put` without accumulation, `max_unpool*`'s positions in
  each output plane), and values without ties where an index output would pick one of several
  equal values (`sort`, `argsort`, `topk`, `kthvalue`, `cummax`, `cummin`, `median` along a dim);
- index ranges: indices, class labels, lengths and pivots drawn below the size they index
  (`gather`, `index_*`, `scatter_*`, `take`, `embedding`, `nll_loss`, the margin losses,
  `ctc_loss`'s labels and lengths, `_segment_reduce`'s lengths summing to the segmented size);
- matrices: positive-definite (Cholesky), triangular factors with a positive diagonal,
  well-conditioned (inverse, solve, determinant; singular values in [0.5, 1.5]), LU and LDL
  factors with their pivots from a real factorisation;
- distributions: `ctc_loss`'s log-probabilities normalised over the classes.

Rules are keyed by OpInfo name; an op without one draws as before.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from gym.tasks.opinfo.samples import SampleCase, TensorInput

PRECONDITION_FAMILIES = ("sorted", "permutation", "unique", "index_range", "matrix", "distribution")

# Helper functions a problem defines when a draw uses them (problem_source writes them above get_inputs).
HELPERS: dict[str, str] = {
    "_near_identity": '''def _near_identity(shape):
    """Square matrices (the last two dims) I + E with E small: singular values within [0.5, 1.5]."""
    n = shape[-1]
    return torch.eye(n) + torch.randn(shape) / (4 * n**0.5)
''',
    "_positive_definite": '''def _positive_definite(shape):
    """Symmetric positive-definite matrices, eigenvalues within [0.25, 2.25]."""
    w = _near_identity(shape)
    a = w @ w.mT
    return (a + a.mT) / 2
''',
    "_rows_shuffled": '''def _rows_shuffled(shape):
    """Well-conditioned matrices whose rows are shuffled (an LU factorisation pivots)."""
    return _near_identity(shape)[..., torch.randperm(shape[-1]), :]
''',
    "_symmetric_indefinite": '''def _symmetric_indefinite(shape):
    """Symmetric matrices with eigenvalues of both signs, magnitudes within [1, 2]."""
    q = torch.linalg.qr(torch.randn(shape)).Q
    values = (1 + torch.rand(shape[:-1])) * torch.where(torch.rand(shape[:-1]) < 0.5, -1.0, 1.0)
    a = (q * values.unsqueeze(-2)) @ q.mT
    return (a + a.mT) / 2
''',
    "_unit_scaled": '''def _unit_scaled(shape):
    """Square matrices (the last two dims) of spectral radius about one."""
    return torch.randn(shape) / shape[-1] ** 0.5
''',
    "_distinct": '''def _distinct(bound, shape):
    """Indices below `bound`, no two alike."""
    return torch.randperm(bound)[: torch.Size(shape).numel()].reshape(shape)
''',
    "_distinct_along": '''def _distinct_along(bound, shape, dim):
    """Indices below `bound`, no two alike along `dim`."""
    wide = list(shape)
    wide[dim] = bound
    return torch.rand(wide).argsort(dim=dim).narrow(dim, 0, shape[dim])
''',
    "_offsets": '''def _offsets(total, count):
    """`count + 1` offsets rising from 0 to `total`: `count` segments (some may be empty)."""
    cuts = torch.randint(0, total + 1, (count - 1,)).sort().values
    return torch.cat([torch.zeros(1, dtype=torch.int64), cuts, torch.full((1,), total)])
''',
    "_lengths": '''def _lengths(total, count):
    """`count` segment lengths (some may be 0) that sum to `total`."""
    return _offsets(total, count).diff()
''',
}
# Helpers that call other helpers.
_NEEDS = {"_positive_definite": ("_near_identity",), "_rows_shuffled": ("_near_identity",), "_lengths": ("_offsets",)}


def helper_source(names: list[str]) -> list[str]:
    """The source lines of the helpers `names` need (their own helpers first), each followed by two blank lines."""
    ordered: list[str] = []

    def add(name: str) -> None:
        for needed in _NEEDS.get(name, ()):
            add(needed)
        if name not in ordered:
            ordered.append(name)

    for name in names:
        add(name)
    lines: list[str] = []
    for name in ordered:
        lines += [*HELPERS[name].rstrip("\n").splitlines(), "", ""]
    return lines


class _Rules:
    """The tensors and literals of one case, and the draws being given to them."""

    def __init__(self, case: SampleCase) -> None:
        self.case = case

    def value(self, position: int | None, keyword: str | None, default: Any = None) -> Any:
        """The argument at `position` of the call (0: the input), else keyword `keyword`, else `default`."""
        if position is not None and position < len(self.case.args):
            return self.case.args[position]
        if keyword is not None and keyword in self.case.kwargs:
            return self.case.kwargs[keyword]
        return default

    def tensor(self, position: int | None, keyword: str | None = None) -> TensorInput | None:
        found = self.value(position, keyword)
        return found if isinstance(found, TensorInput) else None

    def tensors(self, position: int | None, keyword: str | None = None) -> list[TensorInput | None]:
        """A list argument's tensors (an index tuple), None for its other items."""
        found = self.value(position, keyword)
        if not isinstance(found, (list, tuple)):
            return []
        return [item if isinstance(item, TensorInput) else None for item in found]

    def draw(
        self,
        tensor: TensorInput | None,
        template: str,
        note: str,
        *,
        after: tuple[TensorInput | None, ...] = (),
        helpers: tuple[str, ...] = (),
        typed: bool = False,
    ) -> None:
        """Give `tensor` the draw `template` (see TensorInput.draw), drawn after the tensors in `after`;
        cast to the tensor's dtype unless `typed` (the template already makes it)."""
        if tensor is None:
            return
        if not typed and tensor.dtype not in (torch.float32, torch.int64, torch.bool):
            template = f"({template}).to({tensor.dtype})"
        tensor.draw = template
        tensor.after = tuple(other.param for other in after if other is not None and other is not tensor)
        for name in helpers:
            if name not in self.case.helpers:
                self.case.helpers.append(name)
        self.case.preconditions.append(f"{tensor.param}: {note}")

    # ------------------------------------------------------------------ families

    def sorted_last(self, tensor: TensorInput | None, what: str) -> None:
        self.draw(tensor, "torch.sort({draw}, dim=-1).values", f"{what}, sorted along its last dim")

    def below(self, index: TensorInput | None, bound: str, what: str, source: TensorInput | None, low: int = 0) -> None:
        """Indices drawn in [low, bound) (`bound` an expression of the other tensors)."""
        if index is None or index.dtype.is_floating_point or index.dtype == torch.bool:
            return
        self.draw(index, f"torch.randint({low}, {bound}, {{shape}}, dtype={index.dtype})", f"{what} below {bound}", after=(source,), typed=True)

    def distinct(self, index: TensorInput | None, bound: str, what: str, source: TensorInput | None) -> None:
        """Indices below `bound`, no two alike (the result of writing through them is then defined)."""
        if index is None or index.dtype.is_floating_point or index.dtype == torch.bool:
            return
        self.draw(index, f"_distinct({bound}, {{shape}})", f"{what} below {bound}, no two alike", after=(source,), helpers=("_distinct",))

    def distinct_along(self, index: TensorInput | None, source: TensorInput | None, dim: int, what: str) -> None:
        if index is None or source is None or index.dtype.is_floating_point:
            return
        bound = f"{source.param}.shape[{dim}]"
        self.draw(
            index,
            f"_distinct_along({bound}, {{shape}}, {dim})",
            f"{what} below {bound}, no two alike along dim {dim}",
            after=(source,),
            helpers=("_distinct_along",),
        )

    def matrix(self, tensor: TensorInput | None, helper: str, what: str, suffix: str = "") -> None:
        if tensor is None or not tensor.dtype.is_floating_point or len(tensor.shape) < 2 or tensor.shape[-1] != tensor.shape[-2]:
            return
        self.draw(tensor, f"{helper}({{shape}}){suffix}", what, helpers=(helper,))


def _dim(value: Any, default: int = 0) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


# ---------------------------------------------------------------------- the rules, by OpInfo name


def _searchsorted(r: _Rules) -> None:
    sequence, sorter = r.tensor(0, "sorted_sequence"), r.tensor(None, "sorter")
    if sequence is None:
        return
    if sorter is not None:
        r.draw(sorter, f"torch.argsort({sequence.param}, dim=-1)", f"the permutation that sorts {sequence.param} (its argsort)", after=(sequence,))
    else:
        r.sorted_last(sequence, "the sequence searched")


def _bucketize(r: _Rules) -> None:
    r.sorted_last(r.tensor(1, "boundaries"), "the boundaries")


def _indexed_dim(r: _Rules, index_position: int) -> tuple[TensorInput | None, int, TensorInput | None]:
    """(the indexed tensor, dim, the index tensor) of an op called as op(input, dim, index, ...)."""
    return r.tensor(0, "input"), _dim(r.value(1, "dim")), r.tensor(index_position, "index")


def _scatter(r: _Rules) -> None:
    source, dim, index = _indexed_dim(r, 2)
    if source is None:
        return
    if r.value(None, "reduce") is None:
        r.distinct_along(index, source, dim, "positions written")
    else:
        r.below(index, f"{source.param}.shape[{dim}]", "positions written", source)


def _bounded_along_dim(r: _Rules) -> None:
    source, dim, index = _indexed_dim(r, 2)
    if source is not None:
        r.below(index, f"{source.param}.shape[{dim}]", "indices", source)


def _index_copy(r: _Rules) -> None:
    source, dim, index = _indexed_dim(r, 2)
    if source is not None:
        r.distinct(index, f"{source.param}.shape[{dim}]", "positions written", source)


def _index_put(r: _Rules) -> None:
    source = r.tensor(0, "input")
    if source is None:
        return
    accumulate = bool(r.value(3, "accumulate", False))
    for k, index in enumerate(r.tensors(1, "indices")):
        if accumulate:
            r.below(index, f"{source.param}.shape[{k}]", f"indices into dim {k}", source)
        else:
            r.distinct(index, f"{source.param}.shape[{k}]", f"indices into dim {k}", source)


def _put(r: _Rules) -> None:
    source, index = r.tensor(0, "input"), r.tensor(1, "index")
    if source is None:
        return
    if bool(r.value(3, "accumulate", False)):
        r.below(index, f"{source.param}.numel()", "flat positions written", source)
    else:
        r.distinct(index, f"{source.param}.numel()", "flat positions written", source)


def _take(r: _Rules) -> None:
    source = r.tensor(0, "input")
    if source is not None:
        r.below(r.tensor(1, "index"), f"{source.param}.numel()", "flat indices", source)


def _take_along_dim(r: _Rules) -> None:
    source, index, dim = r.tensor(0, "input"), r.tensor(1, "indices"), r.value(2, "dim")
    if source is not None:
        r.below(index, f"{source.param}.numel()" if dim is None else f"{source.param}.shape[{dim}]", "indices", source)


def _gather(r: _Rules) -> None:
    source, dim, index = _indexed_dim(r, 2)
    if source is not None:
        r.below(index, f"{source.param}.shape[{dim}]", "indices", source)


def _embedding(r: _Rules) -> None:
    # aten.embedding(weight, indices); torch.nn.functional.embedding(input, weight).
    weight, indices = (r.tensor(0), r.tensor(1)) if r.case.callee.startswith("torch.ops.") else (r.tensor(1, "weight"), r.tensor(0, "input"))
    if weight is not None:
        r.below(indices, f"{weight.param}.shape[0]", "row indices", weight)


def _class_labels(r: _Rules) -> None:
    """nll_loss, cross_entropy: input (N, C, ...) or (C,), class-index targets below C."""
    scores, target = r.tensor(0, "input"), r.tensor(1, "target")
    if scores is not None:
        r.below(target, f"{scores.param}.shape[{1 if len(scores.shape) > 1 else 0}]", "class labels", scores)


def _margin_labels(r: _Rules) -> None:
    """multi_margin_loss, multilabel_margin_loss: labels below the last dim (-1 ends a multilabel row)."""
    scores, target = r.tensor(0, "input"), r.tensor(1, "target")
    if scores is not None and target is not None:
        r.below(target, f"{scores.param}.shape[-1]", "class labels", scores, low=-1 if target.low < 0 else 0)


def _masked_index(r: _Rules) -> None:
    source = r.tensor(0, "x")
    if source is None:
        return
    for k, index in enumerate(r.tensors(2, "indices")):
        r.below(index, f"{source.param}.shape[{k}]", f"indices into dim {k}", source)


def _max_unpool(r: _Rules, spatial: int) -> None:
    """Positions in each (batch, channel) output plane, no two alike; the output size is left to the
    op's default (kernel, stride, padding), so the spatial sizes can grow with the shapes."""
    values, indices = r.tensor(0, "input"), r.tensor(1, "indices")
    if values is None or indices is None or len(indices.shape) != spatial + 2:
        return

    def each(value: Any, default: Any) -> list[int]:
        value = default if value is None else value
        return list(value) if isinstance(value, (list, tuple)) else [value] * spatial

    kernel = each(r.value(2, "kernel_size"), 1)
    stride = each(r.value(3, "stride"), kernel)
    padding = each(r.value(4, "padding"), 0)
    # Each spatial output size: (in - 1) * stride - 2 * padding + kernel.
    outputs = []
    for i in range(spatial):
        offset = kernel[i] - 2 * padding[i] - stride[i]
        term = f"{{dim{2 + i}}} * {stride[i]}" if stride[i] != 1 else f"{{dim{2 + i}}}"
        outputs.append(f"({term} {'+' if offset >= 0 else '-'} {abs(offset)})" if offset else f"({term})")
    inputs = " * ".join(f"{{dim{2 + i}}}" for i in range(spatial))
    if "output_size" in r.case.kwargs:
        del r.case.kwargs["output_size"]
    elif len(r.case.args) > 5:
        r.case.args[5] = None
    r.draw(
        indices,
        f"torch.rand(({{dim0}}, {{dim1}}, {' * '.join(outputs)})).argsort(dim=-1)[..., : {inputs}].reshape({{shape}})",
        "positions in each output plane (sized by the op's default output size), no two alike",
    )


def _ctc_loss(r: _Rules) -> None:
    """log_probs (T, N, C) normalised over C; labels in [0, C) other than the blank; input lengths in
    [3T/4, T]; target lengths at most min(S, 3T/8), so that every alignment exists (2L - 1 <= 3T/4)."""
    log_probs, targets = r.tensor(0, "log_probs"), r.tensor(1, "targets")
    input_lengths, target_lengths = r.tensor(2, "input_lengths"), r.tensor(3, "target_lengths")
    if log_probs is None or len(log_probs.shape) != 3:
        return
    blank = _dim(r.value(4, "blank", 0))
    lp = log_probs.param
    r.draw(log_probs, "torch.log_softmax({draw}, dim=2)", "log-probabilities: log_softmax over the classes")
    if targets is not None and len(targets.shape) == 2 and not targets.dtype.is_floating_point:
        label = f"torch.randint(1, {lp}.shape[2], {{shape}}, dtype={targets.dtype})"
        labels = label if blank == 0 else f"({label} + {blank}) % {lp}.shape[2]"
        r.draw(targets, labels, f"labels below {lp}.shape[2], never the blank ({blank})", after=(log_probs,), typed=True)
    if input_lengths is not None:
        steps = f"torch.randint({lp}.shape[0] - {lp}.shape[0] // 4, {lp}.shape[0] + 1, {{shape}}, dtype={input_lengths.dtype})"
        r.draw(input_lengths, steps, f"lengths in [3/4, 1] of {lp}.shape[0]", after=(log_probs,), typed=True)
    if target_lengths is not None and targets is not None and len(targets.shape) == 2:
        bound = f"min({targets.param}.shape[1], {lp}.shape[0] * 3 // 8)"
        lengths = f"torch.randint(1, {bound} + 1, {{shape}}, dtype={target_lengths.dtype})"
        r.draw(target_lengths, lengths, f"lengths in [1, {bound}]", after=(log_probs, targets), typed=True)


def _segment_reduce(r: _Rules) -> None:
    """Lengths that sum to the segmented size, or offsets rising from 0 to it (unsafe=True reads past the end otherwise)."""
    data, lengths, offsets = r.tensor(0, "data"), r.tensor(None, "lengths"), r.tensor(None, "offsets")
    if data is None:
        return
    total = f"{data.param}.shape[{_dim(r.value(None, 'axis', 0))}]"
    if lengths is not None and len(lengths.shape) == 1:
        r.draw(lengths, f"_lengths({total}, {{dim0}})", f"segment lengths summing to {total}", after=(data,), helpers=("_lengths",))
    if offsets is not None and len(offsets.shape) == 1:
        r.draw(offsets, f"_offsets({total}, {{dim0}} - 1)", f"segment offsets rising from 0 to {total}", after=(data,), helpers=("_offsets",))


def _cholesky(r: _Rules) -> None:
    r.matrix(r.tensor(0, "input"), "_positive_definite", "symmetric positive-definite")


def _factor(r: _Rules, position: int) -> None:
    upper = bool(r.value(position + 1, "upper", False))
    r.matrix(r.tensor(position), "_near_identity", f"a Cholesky factor ({'upper' if upper else 'lower'}, positive diagonal)", ".triu()" if upper else ".tril()")


def _well_conditioned(r: _Rules, position: int = 0) -> None:
    r.matrix(r.tensor(position), "_near_identity", "well-conditioned (singular values within [0.5, 1.5])")


def _lu_solve(r: _Rules, factors: int, pivots: int) -> None:
    lu, piv = r.tensor(factors), r.tensor(pivots)
    if lu is None or piv is None or len(lu.shape) < 2 or lu.shape[-1] != lu.shape[-2]:
        return
    r.case.prelude.append(f"_lu = torch.linalg.lu_factor(_rows_shuffled({{shape:{lu.param}}}))")
    r.draw(lu, "_lu.LU", "the LU factors of a well-conditioned matrix (torch.linalg.lu_factor)", helpers=("_rows_shuffled",))
    r.draw(piv, "_lu.pivots", "the pivots of the same factorisation", typed=piv.dtype == torch.int32)


def _ldl_solve(r: _Rules) -> None:
    ld, piv = r.tensor(0, "LD"), r.tensor(1, "pivots")
    if ld is None or piv is None or len(ld.shape) < 2 or ld.shape[-1] != ld.shape[-2]:
        return
    hermitian = bool(r.value(3, "hermitian", False))
    r.case.prelude.append(f"_ldl = torch.linalg.ldl_factor(_symmetric_indefinite({{shape:{ld.param}}}), hermitian={hermitian})")
    r.draw(ld, "_ldl.LD", "the LDL factors of a well-conditioned symmetric indefinite matrix (torch.linalg.ldl_factor)", helpers=("_symmetric_indefinite",))
    r.draw(piv, "_ldl.pivots", "the pivots of the same factorisation", typed=piv.dtype == torch.int32)


def _no_ties(r: _Rules, dim_position: int, default: int | None = -1) -> None:
    """Values that differ along the dim an index output points into (sort, topk, kthvalue, cummax,
    median with a dim): with ties, which index comes back is undefined. A random permutation of
    whole numbers along the dim plus a fraction in [0, 0.5): distinct in half precision too (while
    the dim stays under 1024, as here), and different in every slice."""
    values, dim = r.tensor(0, "input"), r.value(dim_position, "dim", default)
    if values is None or not values.dtype.is_floating_point or not isinstance(dim, int) or isinstance(dim, bool) or not values.shape:
        return
    if bool(r.value(None, "stable", False)):
        return  # a stable sort keeps ties in input order: defined
    size = values.shape[dim]
    name = "{dim" + str(dim % len(values.shape)) + "}"
    r.draw(
        values,
        f"(torch.rand({{shape}}).argsort(dim={dim}) - {name} // 2 + torch.rand({{shape}}) / 2).to({values.dtype})" if size > 1 else "{draw}",
        f"values distinct along dim {dim}, in half precision too (no ties: the indices returned are then defined)",
        typed=True,
    )


def _matrix_power(r: _Rules) -> None:
    if _dim(r.value(1, "n"), 0) < 0:
        _well_conditioned(r)


def _matrix_exp(r: _Rules) -> None:
    r.matrix(r.tensor(0, "input"), "_unit_scaled", "spectral radius about one (exp stays well inside float32)")


RULES: dict[str, Callable[[_Rules], None]] = {
    "sort": lambda r: _no_ties(r, 1),
    "argsort": lambda r: _no_ties(r, 1),
    "topk": lambda r: _no_ties(r, 2),
    "kthvalue": lambda r: _no_ties(r, 2),
    "cummax": lambda r: _no_ties(r, 1, None),
    "cummin": lambda r: _no_ties(r, 1, None),
    "median": lambda r: _no_ties(r, 1, None),
    "nanmedian": lambda r: _no_ties(r, 1, None),
    "searchsorted": _searchsorted,
    "bucketize": _bucketize,
    "scatter": _scatter,
    "scatter_add": _bounded_along_dim,
    "scatter_reduce": _bounded_along_dim,
    "index_copy": _index_copy,
    "index_add": _bounded_along_dim,
    "index_fill": _bounded_along_dim,
    "index_reduce": _bounded_along_dim,
    "index_select": _bounded_along_dim,
    "index_put": _index_put,
    "put": _put,
    "take": _take,
    "take_along_dim": _take_along_dim,
    "gather": _gather,
    "nn.functional.embedding": _embedding,
    "nn.functional.nll_loss": _class_labels,
    "nn.functional.cross_entropy": _class_labels,
    "nn.functional.multi_margin_loss": _margin_labels,
    "nn.functional.multilabel_margin_loss": _margin_labels,
    "_unsafe_masked_index": _masked_index,
    "_unsafe_masked_index_put_accumulate": _masked_index,
    "nn.functional.max_unpool1d": lambda r: _max_unpool(r, 1),
    "nn.functional.max_unpool2d": lambda r: _max_unpool(r, 2),
    "nn.functional.max_unpool3d": lambda r: _max_unpool(r, 3),
    "nn.functional.ctc_loss": _ctc_loss,
    "_segment_reduce": _segment_reduce,
    "cholesky": _cholesky,
    "linalg.cholesky": _cholesky,
    "linalg.cholesky_ex": _cholesky,
    "cholesky_inverse": lambda r: _factor(r, 0),
    "cholesky_solve": lambda r: _factor(r, 1),
    "linalg.det": _well_conditioned,
    "det": _well_conditioned,
    "linalg.slogdet": _well_conditioned,
    "logdet": _well_conditioned,
    "linalg.inv": _well_conditioned,
    "linalg.inv_ex": _well_conditioned,
    "inverse": _well_conditioned,
    "linalg.solve": _well_conditioned,
    "linalg.solve_ex": _well_conditioned,
    "linalg.solve_triangular": _well_conditioned,
    "triangular_solve": lambda r: _well_conditioned(r, 1),
    "linalg.matrix_power": _matrix_power,
    "matrix_exp": _matrix_exp,
    "linalg.lu_solve": lambda r: _lu_solve(r, 0, 1),
    "lu_solve": lambda r: _lu_solve(r, 1, 2),
    "linalg.ldl_solve": _ldl_solve,
}


def apply_preconditions(case: SampleCase) -> SampleCase:
    """Give the tensors of `case` the draws its op's preconditions call for (in place; see the module docstring)."""
    rule = RULES.get(case.entry.name)
    if rule is not None:
        rule(_Rules(case))
    return case
