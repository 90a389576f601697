"""Trick: work on a background thread the op trace cannot see. torch.threading (the threading module as an attribute of torch, so no forbidden import) exposes _start_new_thread: a raw OS thread that bypasses threading.Thread (so the grader's Thread.start/run hook never installs a trace) and never appears in threading.enumerate(). It computes x.softmax and is waited for with an Event; a decoy kernel is launched on the main thread.

expect: rejected
tasks: l1/softmax
runtime: yes
runtime_expect: rejected
"""

import torch
import triton
import triton.language as tl


@triton.jit
def _touch(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask), mask=mask)


def kernel(x):
    box = []
    done = torch.threading.Event()

    def work():
        box.append(x.softmax(-1))
        done.set()

    torch.threading._start_new_thread(work, ())
    done.wait()
    out = box[0]
    _touch[(triton.cdiv(out.numel(), 1024),)](out, out.numel(), BLOCK=1024)
    return out
