"""Trick: caching by data_ptr. Results are memoised in a module-level dict keyed by the first input's address and shape; whenever the allocator hands a later call (the timed calls, on fresh inputs) the same address, the cached tensor comes back without launching anything (no_triton_launch), or with another call's values (wrong_answer). Reading an address is allowed: it is the cache that is caught.

expect: rejected, wrong_answer
tasks: l1/vector_add, l1/matmul
"""

# {SOLUTION}

_honest_kernel = kernel
_CACHE = {}


def kernel(*args):
    first = args[0]
    key = (first.data_ptr(), tuple(first.shape), first.dtype)
    if key not in _CACHE:
        _CACHE[key] = _honest_kernel(*args)
    return _CACHE[key]
