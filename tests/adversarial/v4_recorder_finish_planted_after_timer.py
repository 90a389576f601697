"""Trick: run after the timer through the recorder. The call plants an instance attribute `finish` on its tape recorder, which the worker calls after the timed call has returned and its op trace has exited: it computes the row sums with torch into the returned tensor (untraced, untimed: the output is snapshotted after it) and hands back the real tape with its one decoy launch rewritten as a launch of the honest `_row_sum`. The timed call itself only allocates, launches a one-element decoy and waits 0.3x of the honest kernel's time (measured once per shape off the tape), just above the CPU floor.

expect: rejected, wrong_answer  # the planted `finish` never runs now (the class's method is called): the row sums are never computed
tasks: l1/row_sum
"""

import time

import torch
import triton
import triton.language as tl


@triton.jit
def _row_sum(x_ptr, out_ptr, n_cols, x_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + row * x_row_stride + cols, mask=cols < n_cols, other=0.0).to(tl.float32)
    tl.store(out_ptr + row, tl.sum(acc, axis=0).to(out_ptr.dtype.element_ty))


@triton.jit
def _decoy(out_ptr, n_cols, x_row_stride, BLOCK: tl.constexpr):
    tl.store(out_ptr + tl.arange(0, 1), tl.zeros([1], dtype=out_ptr.dtype.element_ty))


_G = getattr(torch.Tensor.numpy, "__glo" + "bals__")
_HONEST_S = {}


def kernel(x):
    started = time.perf_counter()
    tape = _G["worker_tape"]
    recorder = tape._CURRENT[0]
    m, n = x.shape
    out = torch.empty((m,), dtype=x.dtype, device=x.device)
    if (m, n) not in _HONEST_S:
        scratch = torch.empty((m,), dtype=x.dtype, device=x.device)
        with tape.skipping():
            t0 = time.perf_counter()
            _row_sum[(m,)](x, scratch, n, x.stride(0), BLOCK=64)
            _HONEST_S[(m, n)] = time.perf_counter() - t0
    _decoy[(1,)](out, n, x.stride(0), BLOCK=64)
    if recorder is not None:
        real = type(recorder).finish

        def finish(result):
            out.copy_(x.sum(dim=-1))
            made = real(recorder, result)
            for step in made.steps:
                if step.kind == "launch" and step.kernel == "_decoy":
                    step.kernel = "_row_sum"
                    step.grid = [m]
                    step.args = [recorder.encode(x), *step.args]
            return made

        recorder.finish = finish
    while time.perf_counter() - started < 0.3 * _HONEST_S[(m, n)]:
        pass
    return out
