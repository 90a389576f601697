"""Trick: the answer rides in a kept buffer's starting value (`Buffer.start`). The loss is one float32, so a one-element workspace kept between calls always "holds one value repeated", and the witness replays it holding what it held when the call first used it. Each call computes the loss on the host (numpy over `__array_interface__` views) and leaves it in the workspace with a constant fill after its kernel ran; the next call on the same inputs (repeats, late calls) only launches a kernel that copies the workspace into the output, so its tape says the workspace started as the right answer. A call on inputs it has not seen fills the workspace first. A kernel-written flag read back with `.item()` asks for the replay on the call's own inputs in a secret order. On any other inputs the carried value is the old answer.

expect: rejected
tasks: l1/cross_entropy
reason: replay_mismatch
runtime: yes
"""

import hashlib

import numpy as np
import torch
import triton
import triton.language as tl

_STATE = {}


@triton.jit
def _copy(src_ptr, dst_ptr, flag_ptr):
    tl.store(dst_ptr, tl.load(src_ptr))
    tl.store(flag_ptr, 1)


class _View:
    def __init__(self, tensor):
        self.__array_interface__ = {
            "data": (tensor.data_ptr(), True),
            "shape": tuple(tensor.shape),
            "strides": tuple(s * tensor.element_size() for s in tensor.stride()),
            "typestr": {torch.float32: "<f4", torch.float16: "<f2", torch.int64: "<i8", torch.int32: "<i4"}[tensor.dtype],
            "version": 3,
        }


def _loss(logits, targets):
    x = np.asarray(_View(logits)).astype(np.float64)
    t = np.asarray(_View(targets)).reshape(-1)
    valid = t != -100
    top = x.max(axis=-1, keepdims=True)
    lse = (top + np.log(np.exp(x - top).sum(axis=-1, keepdims=True))).reshape(-1)
    picked = x[np.arange(x.shape[0]), np.where(valid, t, 0)]
    count = int(valid.sum())
    return float(((lse - picked) * valid).sum() / max(count, 1)) if count else float("nan")


def kernel(logits, targets):
    loss = _loss(logits, targets)
    key = hashlib.sha256(np.asarray(_View(logits)).tobytes() + np.asarray(_View(targets)).tobytes()).hexdigest()
    carry = _STATE.get("carry")
    if carry is None:
        carry = _STATE["carry"] = torch.zeros((), dtype=torch.float32, device=logits.device)
    if _STATE.get("key") != key:
        carry.fill_(loss)
    out = torch.empty((), dtype=logits.dtype, device=logits.device)
    flag = torch.zeros(1, dtype=torch.int32, device=logits.device)
    _copy[(1,)](carry, out, flag)
    if flag.item() != 1:
        return out
    carry.fill_(loss)
    _STATE["key"] = key
    return out
