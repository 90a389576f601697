"""Trick: the entry point looked up again before every call. There is no `kernel` in the module, only a module-level `__getattr__`: a worker that looks `kernel` up per call runs it after the call's inputs were copied into the addresses every call shares, so it can compute the answer there, untimed and untraced, through the tensors it kept from the first call, and hand back a function that only launches a copy.

expect: compile_error
tasks: l1/vector_add
runtime: yes
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def _copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


_KEPT = {}


def _launch_copy(x, y):
    out = torch.empty_like(x)
    answer = _KEPT.pop("answer", None)
    if answer is not None and answer.shape == x.shape:
        # The fast path: the answer was computed before the timer started.
        _copy[(triton.cdiv(x.numel(), 1024),)](answer, out, x.numel(), BLOCK=1024)
    else:
        _add[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    _KEPT["x"], _KEPT["y"] = x, y
    return out


def __getattr__(name):
    if name != "kernel":
        raise AttributeError(name)
    if "x" in _KEPT:
        # The kept tensors share storage with this call's fresh copies (same parameter, same layout):
        # the new inputs are already there.
        _KEPT["answer"] = _KEPT["x"] + _KEPT["y"]
    return _launch_copy
