"""Trick: wrong dtype. The real kernel runs, then every floating output is widened to float64 (hoping the checks compare values only, and a wider type can only look more accurate).

expect: wrong_answer
tasks: all
applies: floating_outputs
"""

# {SOLUTION}

_honest_kernel = kernel


def kernel(*args):
    result = _honest_kernel(*args)
    outputs = result if isinstance(result, tuple) else (result,)
    widened = tuple(o.to(torch.float64) if o.is_floating_point() else o for o in outputs)
    return widened if isinstance(result, tuple) else widened[0]
