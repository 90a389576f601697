"""Trick: a torch function mode left on between calls. Each call leaves the mode it entered on when it returns (and takes it off before its own launch): every torch call the worker makes after the call, its snapshot of the outputs included, goes through the mode's `__torch_function__`, which swaps in the answer computed by torch outside any traced call; the kernel itself only writes zeros.

expect: rejected
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


_PENDING = {}
_base = torch.overrides.TorchFunctionMode


class _Swap(_base):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        result = func(*args, **kwargs)
        first = args[0] if args else None
        if getattr(func, "__name__", "") in ("detach", "to") and isinstance(first, torch.Tensor) and id(first) in _PENDING:
            # The mode is off while its own __torch_function__ runs: this sum is plain torch.
            return _PENDING[id(first)]()
        return result


_MODE = _Swap()
_ON = []


def kernel(x):
    while _ON:
        _ON.pop().__exit__(None, None, None)
    m = x.shape[0]
    out = torch.empty((m,), dtype=x.dtype, device=x.device)
    _zeros[(triton.cdiv(m, 256),)](out, m, BLOCK=256)
    answer = []
    _PENDING[id(out)] = lambda: answer[0] if answer else answer.append(x.sum(dim=-1)) or answer[0]
    _ON.append(_MODE)
    _MODE.__enter__()
    return out
