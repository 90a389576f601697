"""Trick: compile code under torch's file name through a library trampoline. `torch.utils._pytree.tree_map` calls `functools.partial(compile, filename=<torch/__init__.py>)` on the source from torch's own frame (so compile's immediate caller is torch), and the code it returns, run through another trampoline, opens the job's input files as "torch".

expect: rejected
tasks: l1/vector_add

runtime: yes
"""

import functools
import os

import torch
import triton
import triton.language as tl


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


_pytree = getattr(getattr(torch, "ut" + "ils"), "_py" + "tree")
_FOLDER = os.path.dirname(os.path.realpath(__file__))
_SOURCE = f"import glob\nKGYM_DATA = [open(p, 'rb').read(16) for p in sorted(glob.glob({_FOLDER!r} + '/call*.bin'))]\n"
try:
    (_code,) = _pytree.tree_map(functools.partial(compile, filename=torch.__file__, mode="exec"), [_SOURCE])
    _pytree.tree_map(exec, [_code])
except PermissionError:
    pass


def kernel(x, y):
    out = torch.empty_like(x)
    _add[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out
