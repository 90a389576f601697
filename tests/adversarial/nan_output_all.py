"""Trick: NaN output. The real kernel runs, then the first element of every floating output is set to NaN (hoping NaN compares as "not worse than the tolerance").

expect: wrong_answer
tasks: all
applies: floating_outputs
"""

# {SOLUTION}

_honest_kernel = kernel


def kernel(*args):
    result = _honest_kernel(*args)
    for output in result if isinstance(result, tuple) else (result,):
        if output.is_floating_point() and output.numel():
            output.view(-1)[:1].fill_(float("nan"))
    return result
