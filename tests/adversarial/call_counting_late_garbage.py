"""Trick: correct only for the first N calls. The real kernel runs for the first 200 calls of the process (more than a grade used to make), then the result is returned with its last element corrupted: a kernel that would serve garbage after warm-up in real use.

expect: wrong_answer
tasks: l1/vector_add, l1/softmax, l1/layer_norm
reason: later call(s) on this trial's own inputs
runtime: yes
late_calls: yes
runtime_expect: wrong_answer
"""

# {SOLUTION}

_honest_kernel = kernel
_CALLS = [0]


def kernel(*args):
    _CALLS[0] += 1
    result = _honest_kernel(*args)
    if _CALLS[0] > 200:
        result.view(-1)[-1:].fill_(0.0)
    return result
