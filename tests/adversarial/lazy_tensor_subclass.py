"""Trick: lazy tensor subclass. kernel() returns a torch.Tensor subclass wrapping an unwritten buffer; nothing is computed during the (timed) call, and the Triton kernel only runs when the value is first materialised (any torch function touching it, such as the copy the grader makes).

expect: rejected
tasks: l1/softmax
reason: audit:introspection
runtime: yes
runtime_expect: rejected
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _softmax_rows(x_ptr, out_ptr, n_cols, x_stride, out_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_stride + cols, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * out_stride + cols, (e / tl.sum(e, axis=0)).to(out_ptr.dtype.element_ty), mask=mask)


class LazySoftmax(torch.Tensor):
    @staticmethod
    def __new__(cls, x):
        buffer = torch.empty_like(x)
        self = torch.Tensor._make_subclass(cls, buffer)
        self._pending = x.contiguous()
        return self

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        for arg in args:
            if isinstance(arg, LazySoftmax) and arg._pending is not None:
                x, arg._pending = arg._pending, None
                m, n = x.shape
                plain = arg.as_subclass(torch.Tensor)
                _softmax_rows[(m,)](x, plain, n, x.stride(0), plain.stride(0), BLOCK=triton.next_power_of_2(n))
        return super().__torch_function__(func, types, args, kwargs or {})


def kernel(x):
    return LazySoftmax(x)
