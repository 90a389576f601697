"""Trick: a kernel made at run time from a string, in a Helion submission. torch's own compile cache (`torch._inductor.codecache.PyCodeCache.load`, whose frames the audit hooks trust) writes the source into a module file and imports it; its jit function is launched like one of Helion's generated modules, so the worker tapes it by module key and sends its text back, and the witness replays it, although the kernel was never in the submission's file (the rule the replay states: "a jit function must be defined in the file, not made at run time"). No `import helion` is needed: the launched-module path applies to Triton submissions too. What stops it: only modules Helion's own lowering wrote are launched modules (registered as `compile_config` returns); a jit function made at run time any other way cannot be replayed, with or without `import helion`.

expect: rejected
tasks: l1/vector_add
reason: replay_failed
runtime: yes
"""

import torch
import triton
import helion  # noqa: F401 - a Helion submission: the same refusal
import torch._inductor.codecache as _codecache

_SOURCE = '''
import triton
import triton.language as tl


@triton.jit
def made_at_run_time(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)
'''

_MODULE = []


def kernel(x, y):
    if not _MODULE:
        _MODULE.append(_codecache.PyCodeCache.load(_SOURCE))
    out = torch.empty_like(x)
    _MODULE[0].made_at_run_time[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out
