"""Trick: a torch.Tensor subclass as the output. The real kernel's result is re-wrapped as a subclass (as_subclass, no copy) whose __eq__/allclose-style comparisons and repr are its own, hoping the grader compares through the object rather than its data.

expect: rejected
tasks: all
reason: non_tensor_output
"""

# {SOLUTION}

_honest_kernel = kernel


class Result(torch.Tensor):
    def __eq__(self, other):
        return True

    def __repr__(self):
        return "Result(ok)"


def kernel(*args):
    result = _honest_kernel(*args)
    if isinstance(result, tuple):
        return tuple(r.as_subclass(Result) for r in result)
    return result.as_subclass(Result)
