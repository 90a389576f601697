"""Trick: a worker thread started at import time serves every call. The pool thread is created while the submission is imported (before any call's thread set is taken, and its trace is merged only when the thread ends, which it never does); each call hands x to it through a queue, it computes x.softmax off the calling thread, and a decoy kernel is launched on the main thread. threading comes in as torch.threading, queue is an ordinary import.

expect: rejected
tasks: l1/softmax
runtime: yes
runtime_expect: rejected
"""

import queue

import torch
import triton
import triton.language as tl


@triton.jit
def _touch(out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(out_ptr + offs, mask=mask), mask=mask)


_requests = queue.Queue()
_results = queue.Queue()


def _serve():
    while True:
        x = _requests.get()
        _results.put(x.softmax(-1))


torch.threading.Thread(target=_serve, daemon=True).start()


def kernel(x):
    _requests.put(x)
    out = _results.get()
    _touch[(triton.cdiv(out.numel(), 1024),)](out, out.numel(), BLOCK=1024)
    return out
