"""Trick: crash the witness instead of being judged. torch computes the row sums (dropped from the op trace; the replay would flag aten.sum). A kernel launched beside it reads an index from a module-level workspace (zeros in the submission's process) and loads x at that index times 2^40: in the submission's process the index is 0, in the witness the workspace is an external buffer, poisoned with every bit set (-1), so the replayed load is a wild pointer and the interpreter crashes the witness. The grade then ends as a crash (`runtime_error`, a failure) rather than a rejection.

expect: rejected
tasks: l1/row_sum
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _probe(x_ptr, ws_ptr, out_ptr):
    idx = tl.load(ws_ptr)
    v = tl.load(x_ptr + idx * 1099511627776)
    tl.store(out_ptr, v * 0.0 + tl.load(out_ptr))


_WS = torch.zeros(1, dtype=torch.int64)
_G = getattr(torch.Tensor.numpy, "__glo" + "bals__")


def kernel(x):
    out = x.sum(dim=-1)
    _probe[(1,)](x, _WS.to(x.device), out)
    for trace in _G["_ACTIVE"]:
        trace.ops.pop("aten.sum", None)
    return out
