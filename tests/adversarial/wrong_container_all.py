"""Trick: wrong return structure. The outputs of the real kernel come back in a list (and a single output as a one-element list), betting the grader indexes whatever sequence it gets.

expect: wrong_answer, rejected
tasks: all
"""

# {SOLUTION}

_honest_kernel = kernel


def kernel(*args):
    result = _honest_kernel(*args)
    return list(result) if isinstance(result, tuple) else [result]
