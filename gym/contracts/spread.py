"""The spread of honest float32 evaluations: the reference re-run in other, equally valid orders.

An `oracle` check's allowance was `factor x the reference's own error + floor`: a multiple of
*one draw* of a random variable. When that draw is lucky (a scalar loss whose per-row rounding
errors cancel, a max over few elements, heavy-tailed inputs where one element decides the max), an
honest kernel that sums in another order lands outside it. Here the reference is evaluated again in
several honest ways on the trusted side, and the check's allowance covers the worst of them.

`HonestOrder` is a TorchDispatchMode that runs the reference's reductions the way an honest kernel
may run them, every choice drawn from its own seeded generator, each reduction in the *noisiest*
order of its family that a kernel may use (so an honest kernel's error is, in distribution, at most
a variant's):

- sums and means: one running float32 total over the elements in a random permutation, element
  by element (each element rounds at the size of the running total, the most roundings any order
  gives it); a tree, split, blocked, persistent or atomic reduction rounds each element fewer
  times. Past SEQUENTIAL_STEPS elements, lanes of a running vector each add at most that many;
- matmuls (`mm`, `bmm`, `addmm`, `baddbmm`): a K loop in blocks of 1, 4 or 16 (an FMA chain or a
  Triton K loop with a small BLOCK_K), partial products accumulated in float32 block after block,
  forward or reversed; float16 operands accumulate in float32 and round once at the end;
- softmax / log-softmax / logsumexp: an online (streaming) evaluation over blocks of the axis, with
  the running maximum and rescaled running sum, in `exp` or in `exp2` with log2(e) folded in;
- cumsum: a blocked scan (per-block scan plus the carried totals);
- index_add / scatter_add / index_put(accumulate): the contributions applied in a permuted order
  (float atomics in any order);
- SDPA and the other composite ops the reference may call are decomposed, so their matmuls and
  softmax take the paths above.

Half of the variants also perturb every float32 input by a random relative 2**-24 (one rounding
of an intermediate the reference keeps exact: a scale applied before or after a product, log2(e)
folded into the exponent), so the spread covers conditioning that a reordering alone does not show.

A trial gets VARIANTS (16) of them, so the allowance is `factor` x the largest of 17 draws (with the
reference's own): where one scalar decides the error (a loss, a peaked row, the element a
heavy-tailed input makes largest), a kernel whose error is distributed like a variant's exceeds
4 x the largest of 17 Gaussian draws with probability 8e-7 per trial (of 5 draws: 1.5e-3).
Large inputs (the bench shapes on a GPU) get fewer: their many output elements concentrate the
largest error, and each evaluation costs more.

Nothing here loosens a check below what it was: the allowance is `factor x max(reference's own
error, each variant's error) + floors`. A float16 evaluation, TF32 products or partial work have
errors 2**13 times a float32 rounding or more; a sequential order rounds at most sqrt(n) times more
than a tree, so they stay far outside `factor` x any float32 variant (docs/guide/contracts.md).
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Callable, Iterator
from typing import Any

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten

# How many honest variants an allowance covers (each is one more reference evaluation). With the
# reference's own, the allowance is `factor` x the largest of VARIANTS + 1 draws: where one element
# (or one scalar) decides the error, a kernel exchangeable with them exceeds 4x the largest of 17
# Gaussian draws with probability 8e-7 (4x the largest of 5: 1.5e-3); see docs/guide/contracts.md.
VARIANTS = 16
# Inputs larger than this get MEDIUM_VARIANTS, larger than LARGE_ELEMENTS LARGE_VARIANTS (the bench
# shapes on a GPU: many output elements, whose largest error concentrates, and costly evaluations).
# An oracle check evaluates the first EARLY_VARIANTS, and the rest only when a candidate exceeds the
# allowance they give: the allowance only grows with more variants, so every verdict is the one all
# of them give, and a passing kernel costs EARLY_VARIANTS evaluations.
EARLY_VARIANTS = 4
MEDIUM_ELEMENTS = 1 << 20
MEDIUM_VARIANTS = 8
LARGE_ELEMENTS = 1 << 22
LARGE_VARIANTS = 2
# A variant's loops (online softmax blocks, scan blocks, K blocks) take at most this many steps:
# a longer axis gets larger blocks (an honest kernel with a larger BLOCK), keeping a variant cheap.
MAX_STEPS = 256
# Sums run sequentially (one element per step) up to this many elements per lane; matmuls' K loops
# take at most MATMUL_STEPS steps.
SEQUENTIAL_STEPS = 4096
MATMUL_STEPS = 1024

_LOG2E = 1.4426950408889634
_LN2 = 0.6931471805599453

# Set by `disabled()`: the allowance as it was, `factor x the reference's own error + floors` (the sweep's "before").
_DISABLED = False


@contextlib.contextmanager
def disabled() -> Iterator[None]:
    """Within the block, oracle checks ignore the honest spread (one draw of the reference's error, as before)."""
    global _DISABLED
    previous, _DISABLED = _DISABLED, True
    try:
        yield
    finally:
        _DISABLED = previous


def is_disabled() -> bool:
    return _DISABLED


def variant_count(elements: int) -> int:
    """How many honest variants calibrate a trial whose inputs hold `elements` elements."""
    if elements > LARGE_ELEMENTS:
        return LARGE_VARIANTS
    return MEDIUM_VARIANTS if elements > MEDIUM_ELEMENTS else VARIANTS


def _min_block(n: int, steps_allowed: int = 0) -> int:
    """The smallest power-of-two block that covers `n` in at most `steps_allowed` (MAX_STEPS) steps."""
    steps = -(-n // (steps_allowed or MAX_STEPS))
    return 1 << max(steps - 1, 0).bit_length()


def _floating(tensor: Any) -> bool:
    return isinstance(tensor, torch.Tensor) and tensor.dtype in (torch.float32, torch.float16, torch.bfloat16)


def _acc(tensor: torch.Tensor) -> torch.Tensor:
    return tensor.to(torch.float32) if tensor.dtype in (torch.float16, torch.bfloat16) else tensor


class HonestOrder(TorchDispatchMode):
    """Run the ops inside the block in another honest float32 order (see the module docstring)."""

    def __init__(self, generator: torch.Generator) -> None:
        super().__init__()
        self.rng = generator

    # --- choices -------------------------------------------------------------------------
    def _pick(self, options: tuple[int, ...]) -> int:
        return options[int(torch.randint(len(options), (1,), generator=self.rng))]

    def _coin(self) -> bool:
        return bool(torch.randint(2, (1,), generator=self.rng))

    def _perm(self, n: int, device: torch.device) -> torch.Tensor:
        return torch.randperm(n, generator=self.rng).to(device)

    # --- matmuls -------------------------------------------------------------------------
    def _mm(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        """a @ b (2-D or batched 3-D) with K split in blocks, accumulated in float32 block by block."""
        k = a.shape[-1]
        block = max(self._pick((1, 4, 16)), _min_block(k, MATMUL_STEPS))
        starts = list(range(0, k, block))
        if self._coin():
            starts.reverse()
        x, y = _acc(a), _acc(b)
        out: torch.Tensor | None = None
        for start in starts:
            part = torch.matmul(x[..., start : start + block], y[..., start : start + block, :])
            out = part if out is None else out + part
        if out is None:
            out = torch.zeros((*a.shape[:-1], b.shape[-1]), dtype=x.dtype, device=a.device)
        return out.to(a.dtype)

    # --- reductions ----------------------------------------------------------------------
    def _sum_last(self, x: torch.Tensor) -> torch.Tensor:
        """Sum over the last dim in the noisiest honest order: one running float32 accumulator that
        adds the elements one by one, in a random permutation (each element rounds at the size of
        the running total, the most roundings any order gives it). Past SEQUENTIAL_STEPS elements,
        lanes of a running vector (`acc += chunk` ... `tl.sum(acc)`) that each add at most
        SEQUENTIAL_STEPS elements. A tree, split, blocked or atomic reduction rounds each element
        fewer times, so its error is, in distribution, at most this one's."""
        n = x.shape[-1]
        if n <= 1:
            return x.sum(-1)
        x = x.index_select(-1, self._perm(n, x.device))
        block = _min_block(n, SEQUENTIAL_STEPS)
        pad = (-n) % block
        if pad:
            x = torch.nn.functional.pad(x, (0, pad))
        chunks = x.reshape(*x.shape[:-1], -1, block)
        lanes = chunks[..., 0, :]
        for step in range(1, chunks.shape[-2]):
            lanes = lanes + chunks[..., step, :]
        return lanes.sum(-1) if block > 1 else lanes[..., 0]

    def _sum(self, x: torch.Tensor, dims: list[int] | None, keepdim: bool, dtype: torch.dtype | None) -> torch.Tensor:
        out_dtype = dtype or x.dtype
        if x.dim() == 0:
            return x.to(out_dtype)
        reduced = sorted({d % x.dim() for d in dims}) if dims else list(range(x.dim()))
        kept = [d for d in range(x.dim()) if d not in reduced]
        moved = _acc(x).permute(*kept, *reduced)
        flat = moved.reshape(*[x.shape[d] for d in kept], -1)
        result = self._sum_last(flat)
        if keepdim:
            for d in reduced:
                result = result.unsqueeze(d)
        return result.to(out_dtype)

    def _online_lse(self, x: torch.Tensor, dim: int) -> tuple[torch.Tensor, torch.Tensor]:
        """Running max m and log-sum-exp over `dim` by blocks (online softmax); returns (m, lse)."""
        x = _acc(x).movedim(dim, -1)
        n = x.shape[-1]
        block = max(self._pick((8, 32, 128)), _min_block(n))
        base2 = self._coin()
        m = torch.full(x.shape[:-1], float("-inf"), dtype=x.dtype, device=x.device)
        total = torch.zeros_like(m)
        for start in range(0, n, block):
            chunk = x[..., start : start + block]
            new = torch.maximum(m, chunk.amax(-1))
            safe = torch.where(torch.isinf(new), torch.zeros_like(new), new)
            if base2:
                scale = torch.exp2(m * _LOG2E - safe * _LOG2E)
                part = torch.exp2(chunk * _LOG2E - (safe * _LOG2E)[..., None]).sum(-1)
            else:
                scale = torch.exp(m - safe)
                part = torch.exp(chunk - safe[..., None]).sum(-1)
            total = total * scale + part
            m = new
        safe = torch.where(torch.isinf(m), torch.zeros_like(m), m)
        lse = safe + (torch.log2(total) * _LN2 if base2 else torch.log(total))
        return m.movedim(-1, dim) if m.dim() else m, lse

    def _softmax(self, x: torch.Tensor, dim: int, log: bool, out_dtype: torch.dtype) -> torch.Tensor:
        dim = dim % max(x.dim(), 1)
        if x.dim() == 0:
            return (torch.zeros_like(x) if log else torch.ones_like(x)).to(out_dtype)
        moved = _acc(x).movedim(dim, -1)
        _, lse = self._online_lse(moved, -1)
        shifted = moved - lse[..., None]
        out = shifted if log else torch.exp(shifted)
        return out.movedim(-1, dim).to(out_dtype)

    def _logsumexp(self, x: torch.Tensor, dims: list[int], keepdim: bool) -> torch.Tensor:
        if x.dim() == 0:
            return x.clone()
        reduced = sorted({d % x.dim() for d in dims}) if dims else list(range(x.dim()))
        kept = [d for d in range(x.dim()) if d not in reduced]
        flat = _acc(x).permute(*kept, *reduced).reshape(*[x.shape[d] for d in kept], -1)
        _, lse = self._online_lse(flat, -1)
        if keepdim:
            for d in reduced:
                lse = lse.unsqueeze(d)
        return lse.to(x.dtype)

    def _cumsum(self, x: torch.Tensor, dim: int, dtype: torch.dtype | None) -> torch.Tensor:
        out_dtype = dtype or x.dtype
        if x.dim() == 0:
            return x.to(out_dtype)
        moved = _acc(x).movedim(dim, -1)
        n = moved.shape[-1]
        block = max(self._pick((4, 16, 64, 256)), _min_block(n))
        pieces, carry = [], None
        for start in range(0, n, block):
            scan = moved[..., start : start + block].cumsum(-1)
            if carry is not None:
                scan = scan + carry[..., None]
            carry = scan[..., -1]
            pieces.append(scan)
        out = torch.cat(pieces, -1) if pieces else moved
        return out.movedim(-1, dim).to(out_dtype)

    # --- accumulations in any order ------------------------------------------------------
    def _index_add(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        target, dim, index, source = args[:4]
        if index.numel() > 1:
            perm = self._perm(index.numel(), index.device)
            index = index.index_select(0, perm)
            source = source.index_select(dim, perm) if source.dim() else source
        return func(target, dim, index, source, *args[4:], **kwargs)

    def _scatter_add(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        target, dim, index, source = args[:4]
        n = index.shape[dim] if index.dim() else 0
        if n > 1:
            perm = self._perm(n, index.device)
            index = index.index_select(dim, perm)
            source = source.narrow(dim, 0, index.shape[dim]).index_select(dim, perm)
        return func(target, dim, index, source, *args[4:], **kwargs)

    def _index_put(self, func: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        target, indices, values = args[:3]
        accumulate = args[3] if len(args) > 3 else kwargs.get("accumulate", False)
        usable = [i for i in indices if i is not None]
        if accumulate and len(usable) == len(indices) == 1 and indices[0].dim() == 1 and indices[0].dtype != torch.bool and indices[0].numel() > 1:
            n = indices[0].numel()
            if values.dim() and values.shape[0] == n:
                perm = self._perm(n, values.device)
                return func(target, [indices[0].index_select(0, perm)], values.index_select(0, perm), *args[3:], **kwargs)
        return func(*args, **kwargs)

    # --- dispatch ------------------------------------------------------------------------
    def __torch_dispatch__(self, func: Any, types: Any, args: tuple[Any, ...] = (), kwargs: dict[str, Any] | None = None) -> Any:
        kwargs = kwargs or {}
        packet = func.overloadpacket
        first: Any = args[0] if args else None
        if packet in (aten.mm, aten.bmm) and _floating(first) and _floating(args[1]):
            return self._mm(args[0], args[1])
        if packet in (aten.addmm, aten.baddbmm) and _floating(args[1]):
            beta, alpha = kwargs.get("beta", 1), kwargs.get("alpha", 1)
            product = self._mm(args[1], args[2])
            bias = args[0]
            out = _acc(product) * alpha + (_acc(bias) * beta if beta else 0)
            return out.to(args[1].dtype)
        if func in (aten.sum.dim_IntList, aten.sum.default) and _floating(first):
            dims = args[1] if len(args) > 1 and func is aten.sum.dim_IntList else kwargs.get("dim")
            keepdim = bool(args[2]) if len(args) > 2 else bool(kwargs.get("keepdim", False))
            return self._sum(first, list(dims) if dims else None, keepdim, kwargs.get("dtype"))
        if func is aten.mean.dim and _floating(first):
            dims = list(args[1]) if len(args) > 1 and args[1] else list(range(first.dim()))
            keepdim = bool(args[2]) if len(args) > 2 else bool(kwargs.get("keepdim", False))
            count = math.prod(first.shape[d % max(first.dim(), 1)] for d in dims) if first.dim() else 1
            total = self._sum(first, dims, keepdim, torch.float32)
            return (total / max(count, 1)).to(kwargs.get("dtype") or first.dtype)
        if func is aten.mean.default and _floating(first):
            return (self._sum(first, None, False, torch.float32) / max(first.numel(), 1)).to(kwargs.get("dtype") or first.dtype)
        if func in (aten._softmax.default, aten._log_softmax.default) and _floating(first):
            out_dtype = torch.float32 if args[2] else first.dtype
            return self._softmax(first, args[1], func is aten._log_softmax.default, out_dtype)
        if func is aten.logsumexp.default and _floating(first):
            return self._logsumexp(first, list(args[1]), bool(args[2]) if len(args) > 2 else bool(kwargs.get("keepdim", False)))
        if func is aten.cumsum.default and _floating(first):
            return self._cumsum(first, args[1], kwargs.get("dtype"))
        if packet in (aten.index_add, aten.index_add_) and _floating(first):
            return self._index_add(func, args, kwargs)
        if packet in (aten.scatter_add, aten.scatter_add_) and _floating(first):
            return self._scatter_add(func, args, kwargs)
        if packet in (aten.index_put, aten.index_put_, aten._index_put_impl_) and _floating(first):
            return self._index_put(func, args, kwargs)
        decomposition = _decomposition(func)
        if decomposition is not None:
            with self:
                return decomposition(*args, **kwargs)
        return func(*args, **kwargs)


# Composite ops whose float32 kernels fuse a reduction: decomposed, so the reduction takes a path above.
_DECOMPOSED = (
    "_scaled_dot_product_flash_attention_for_cpu",
    "_scaled_dot_product_efficient_attention",
    "_scaled_dot_product_flash_attention",
    "_scaled_dot_product_cudnn_attention",
    "native_layer_norm",
    "native_group_norm",
    "_fused_rms_norm",
    "nll_loss_forward",
    "nll_loss2d_forward",
    "embedding_dense_backward",
    "var_mean",
    "var",
    "std",
    "linalg_vector_norm",
    "_log_softmax_backward_data",
    "_softmax_backward_data",
    "native_batch_norm",
    "_native_batch_norm_legit_functional",
    "_native_batch_norm_legit_no_training",
)


def _decomposition(func: Any) -> Callable[..., Any] | None:
    if func.overloadpacket.__name__ not in _DECOMPOSED:
        return None
    from torch._decomp import decomposition_table

    return decomposition_table.get(func)


def perturbed(inputs: dict[str, Any], generator: torch.Generator) -> dict[str, Any]:
    """Clones of `inputs` with every float32 tensor scaled by (1 + r * 2**-24), r uniform in [-1, 1]."""
    out: dict[str, Any] = {}
    for name, value in inputs.items():
        if isinstance(value, torch.Tensor) and value.dtype == torch.float32:
            noise = torch.rand(value.shape, generator=generator, dtype=torch.float64) * 2 - 1
            out[name] = (value.to(torch.float64) * (1 + noise.to(value.device) * 2.0**-24)).to(torch.float32)
        elif isinstance(value, torch.Tensor):
            out[name] = value.clone()
        else:
            out[name] = value
    return out


def honest_evaluations(
    evaluate: Callable[[dict[str, Any]], list[torch.Tensor]],
    inputs: dict[str, Any],
    count: int = VARIANTS,
    seed: int = 0,
    start: int = 0,
) -> list[list[torch.Tensor]]:
    """Honest float32 evaluations number `start` .. `count - 1` of `evaluate` (the reference) on
    `inputs`: each under HonestOrder with its own generator (variant k is the same whichever call
    makes it); the odd ones on perturbed float32 inputs."""
    results: list[list[torch.Tensor]] = []
    for variant in range(start, count):
        generator = torch.Generator().manual_seed(0x5EED + 7919 * seed + variant)
        args = perturbed(inputs, generator) if variant % 2 else inputs
        with torch.no_grad(), HonestOrder(generator):
            outputs = evaluate(args)
        results.append([output.detach() for output in outputs])
    return results
