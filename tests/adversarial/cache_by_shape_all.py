"""Trick: caching by shape. The first result for each (shape, dtype) is memoised in a module-level dict and returned for every later call of that shape (the timed calls), skipping the kernel.

expect: rejected, wrong_answer
tasks: all
reason: no_triton_launch
runtime: yes
runtime_expect: rejected, wrong_answer
"""

# {SOLUTION}

_honest_kernel = kernel
_CACHE = {}


def kernel(*args):
    key = tuple((tuple(a.shape), a.dtype) if isinstance(a, torch.Tensor) else a for a in args)
    if key not in _CACHE:
        _CACHE[key] = _honest_kernel(*args)
    return _CACHE[key]
