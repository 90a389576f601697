"""Trick: a tensor subclass that gives its name as `torch.Tensor` (`__module__ = "torch"`, `__qualname__ = "Tensor"`), so a type check by name is satisfied; its `__torch_function__` computes the row sums with torch whenever the worker touches the output after the call (its snapshot, its checks), outside the op trace, while the kernel only writes zeros.

expect: rejected, wrong_answer
tasks: l1/row_sum
runtime: yes
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _zeros(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=out_ptr.dtype.element_ty), mask=offs < n)


class Tensor(torch.Tensor):
    __module__ = "torch"
    __qualname__ = "Tensor"
    pending = {}

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        first = args[0] if args else None
        if getattr(func, "__name__", "") in ("detach", "to", "clone") and id(first) in cls.pending:
            source = cls.pending.pop(id(first))
            with torch._C.DisableTorchFunctionSubclass():
                return source.sum(dim=-1)
        with torch._C.DisableTorchFunctionSubclass():
            return func(*args, **kwargs)


def kernel(x):
    m = x.shape[0]
    plain = torch.empty((m,), dtype=x.dtype, device=x.device)
    _zeros[(triton.cdiv(m, 256),)](plain, m, BLOCK=256)
    out = plain.as_subclass(Tensor)
    Tensor.pending[id(out)] = x
    return out
