"""Trick: tell the audit hooks the submission is torch. Their verdict per file is cached in a plain dict of the hooks' module (reached through the globals of the guarded `__import__`); marking the submission's own file "trusted" there lets it open every input file of the job at import, compute all the answers with numpy, and write each call's answer straight into its output (a numpy view of its address) before a copy kernel launches for show.

expect: rejected
tasks: l1/vector_add
runtime: yes
"""

import importlib
import os

import numpy as np
import torch
import triton
import triton.language as tl

_hooks = getattr(__builtins__["__import__"] if isinstance(__builtins__, dict) else __builtins__.__import__, "__glo" + "bals__", {})
if "_KINDS" in _hooks:
    _hooks["_KINDS"][os.path.realpath(__file__)] = "trusted"
glob = importlib.import_module("glob")


@triton.jit
def _copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


class _View:
    def __init__(self, tensor):
        self.__array_interface__ = {"data": (tensor.data_ptr(), False), "shape": tuple(tensor.shape), "typestr": "<f4", "version": 3}


_ANSWERS = {}
try:
    folder = os.path.dirname(os.path.realpath(__file__))
    for path in glob.glob(os.path.join(folder, "call*_x.bin")):
        x = np.fromfile(path, dtype=np.float32)
        y = np.fromfile(path.replace("_x.bin", "_y.bin"), dtype=np.float32)
        _ANSWERS[(x.size, x[:4].tobytes())] = x + y
except (OSError, PermissionError, NameError):
    pass


def kernel(x, y):
    out = torch.empty_like(x)
    answer = _ANSWERS.get((x.numel(), np.asarray(_View(x))[:4].tobytes()))
    if answer is not None:
        np.asarray(_View(out))[...] = answer
    _copy[(triton.cdiv(x.numel(), 1024),)](out, out, x.numel(), BLOCK=1024)
    return out
