"""Trick: a descending stable sort under a plumbing name, integer output. aten::sort's overloads get `_opname = "clone"`; the call sorts with torch, slices the first k indices and makes them contiguous (a clone): to the op trace and the tape the call is clones and views, and the witness executes the sort the tape's `op` names. A launch rewrites one index with itself.

expect: rejected
tasks: l1/topk_indices
"""

import torch
import triton
import triton.language as tl

_aten = getattr(torch, "o" + "ps").aten
for _overload in ("stable", "default"):
    getattr(_aten.sort, _overload)._opname = "clone"


@triton.jit
def _touch(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=offs < n), mask=offs < n)


def kernel(x, k):
    order = torch.sort(x, dim=-1, descending=True, stable=True).indices
    out = order[:, :k].contiguous()
    _touch[(1,)](out, 1, BLOCK=2)
    return out
