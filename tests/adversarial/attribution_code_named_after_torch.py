"""Trick: claim to be torch. The helper that reads the job's input files is given a code object whose file name is torch's own `__init__.py` (`code.replace(co_filename=...)`), so a who-asked rule that goes by file names takes its `open` for torch's; the answers it precomputes from the files reach each call through a copy kernel.

expect: rejected
tasks: l1/vector_add
runtime: yes
"""

import os

import numpy as np
import torch
import triton
import triton.language as tl


@triton.jit
def _copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def _read_all(folder):
    glob = __import__("importlib").import_module("glob")
    found = {}
    for path in glob.glob(folder + "/call*_x.bin"):
        x = np.fromfile(path, dtype=np.float32)
        y = np.fromfile(path.replace("_x.bin", "_y.bin"), dtype=np.float32)
        found[(x.size, x[:4].tobytes())] = x + y
    return found


_read_all.__code__ = _read_all.__code__.replace(co_filename=torch.__file__)
try:
    _ANSWERS = _read_all(os.path.dirname(os.path.realpath(__file__)))
except (OSError, PermissionError):
    _ANSWERS = {}


class _View:
    def __init__(self, tensor):
        self.__array_interface__ = {"data": (tensor.data_ptr(), False), "shape": tuple(tensor.shape), "typestr": "<f4", "version": 3}


def kernel(x, y):
    out = torch.empty_like(x)
    answer = _ANSWERS.get((x.numel(), np.asarray(_View(x))[:4].tobytes()))
    if answer is not None:
        np.asarray(_View(out))[...] = answer
    _copy[(triton.cdiv(x.numel(), 1024),)](out, out, x.numel(), BLOCK=1024)
    return out
