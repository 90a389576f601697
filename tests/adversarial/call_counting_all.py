"""Trick: call counting. A counter in a mutable module-level list (no `global` statement) lets the first three calls run the real kernel; from then on (when it is probably being timed) it returns the last result without launching anything.

expect: rejected, wrong_answer
tasks: all
reason: no_triton_launch
runtime: yes
runtime_expect: rejected, wrong_answer
"""

# {SOLUTION}

_honest_kernel = kernel
_STATE = {"calls": 0, "last": None}


def kernel(*args):
    _STATE["calls"] += 1
    if _STATE["calls"] <= 3 or _STATE["last"] is None:
        _STATE["last"] = _honest_kernel(*args)
    return _STATE["last"]
