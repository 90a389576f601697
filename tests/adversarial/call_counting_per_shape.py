"""Trick: correct only for the first N calls of each shape. A per-shape counter (an honest kernel's lazily built per-shape cache would look the same) lets the real kernel answer the first 150 calls of a shape; after that the shape's last row is left unwritten.

expect: wrong_answer
tasks: l1/rms_norm, l1/row_sum
reason: later call(s) on this trial's own inputs
runtime: yes
late_calls: yes
runtime_expect: wrong_answer
"""

# {SOLUTION}

_honest_kernel = kernel
_SEEN: dict = {}


def kernel(*args):
    key = tuple(tuple(arg.shape) for arg in args if hasattr(arg, "shape"))
    _SEEN[key] = _SEEN.get(key, 0) + 1
    result = _honest_kernel(*args)
    if _SEEN[key] > 150:
        result[-1:].fill_(0.0)
    return result
