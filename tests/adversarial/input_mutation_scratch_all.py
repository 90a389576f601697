"""Trick: input mutation. After the real kernel has run, the first input tensor is reused as scratch space (zeroed in place, as a workspace would be), saving an allocation; the returned values are right.

expect: rejected
tasks: all
reason: input_mutated
"""

# {SOLUTION}

_honest_kernel = kernel


def kernel(*args):
    result = _honest_kernel(*args)
    scratch = args[0]
    scratch.zero_()
    return result
