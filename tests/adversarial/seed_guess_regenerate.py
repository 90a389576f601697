"""Trick: regenerating inputs from a guessed seed. At import the submission seeds torch with common seeds, regenerates candidate inputs for every public shape the way a reference generator probably does (randn * 3), and precomputes their softmax with torch; each call looks up the candidate whose first values match and returns it (launching a decoy kernel), else the nearest-shaped precomputed answer.

expect: rejected
tasks: l1/softmax
reason: audit:seeding
runtime: yes
runtime_expect: rejected, wrong_answer
"""

import torch
import triton
import triton.language as tl

_TABLE = []
for _seed in (0, 1, 42, 1234, 2024):
    for _m, _n in ((32, 200), (16, 1024)):
        torch.manual_seed(_seed)
        _x = torch.randn(_m, _n) * 3.0
        _TABLE.append((_x, torch.softmax(_x, dim=-1)))


@triton.jit
def _copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


def kernel(x):
    best = _TABLE[0][1]
    for guess, answer in _TABLE:
        if guess.shape == x.shape:
            best = answer
            if torch.equal(guess[:1, :4].to(x.dtype), x[:1, :4]):
                break
    out = torch.empty_like(x)
    n = min(out.numel(), best.numel())
    _copy[(triton.cdiv(n, 1024),)](best.to(x.dtype).contiguous(), out, n, BLOCK=1024)
    return out
