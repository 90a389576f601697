"""Vector add through a 64 MiB scratch workspace allocated in every call (split-K and multi-pass kernels size theirs to the device, not to the input): under the grader's couple of hundred calls per grade the workspaces must not accumulate, and the replay must not charge the kernel for filling memory the call never touched.

Style: FlagGems
Task: l1/vector_add
Idioms: per-call workspace
"""

import torch
import triton
import triton.language as tl

WORKSPACE_ELEMENTS = 16 << 20  # 64 MiB of float32


@triton.jit
def _add_through(x_ptr, y_ptr, ws_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(ws_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
    tl.store(out_ptr + offs, tl.load(ws_ptr + offs, mask=mask), mask=mask)


def kernel(x, y):
    out = torch.empty_like(x)
    workspace = torch.empty(WORKSPACE_ELEMENTS, dtype=torch.float32, device=x.device)
    n = x.numel()
    _add_through[(triton.cdiv(n, 1024),)](x, y, workspace, out, n, BLOCK=1024)
    return out
