"""Trick: writes after returning. The kernel computes the first half of the output during the call; a raw thread (torch.threading._start_new_thread: no forbidden import, invisible to threading.enumerate) finishes the second half a moment after the call has returned, so the timed call does half the work.
Under the interpreter the late launch can also land inside the next call (the warm-up's thread inside the
first real call) and crash the interpreter's shared launch state: runtime_error, still never a pass. On a GPU
the late write is caught as output_changed_after_return.

expect: rejected, wrong_answer
tasks: l1/vector_add
runtime: yes
runtime_expect: rejected, wrong_answer, runtime_error
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, start, n, BLOCK: tl.constexpr):
    offs = start + tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


def kernel(x, y):
    out = torch.empty_like(x)
    n = x.numel()
    half = n // 2
    _add[(triton.cdiv(half, 256),)](x, y, out, 0, half, BLOCK=256)

    def finish():
        torch.threading.Event().wait(0.02)
        _add[(triton.cdiv(n - half, 256),)](x, y, out, half, n, BLOCK=256)

    torch.threading._start_new_thread(finish, ())
    return out
