"""Trick: work on a background thread, joined. torch.softmax runs on a threading.Thread (the dispatch-mode op trace is per thread); the thread is joined before returning and a decoy kernel is launched on the main thread.

expect: rejected
tasks: l1/softmax
reason: audit:import
runtime: yes
runtime_expect: rejected
"""

import threading

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
    worker = threading.Thread(target=lambda: box.append(x.softmax(dim=-1)))
    worker.start()
    worker.join()
    out = box[0]
    _touch[(triton.cdiv(out.numel(), 1024),)](out, out.numel(), BLOCK=1024)
    return out
