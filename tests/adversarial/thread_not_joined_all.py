"""Trick: work on a background thread, not joined. The call allocates the outputs from a dry run's shapes and returns them at once while a thread runs the real kernel and copies into them, so the timer stops before the work is done.

expect: rejected
tasks: all
reason: audit:import
runtime: yes
runtime_expect: rejected, runtime_error
"""

import threading

# {SOLUTION}

_honest_kernel = kernel
_SHAPES = {}


def kernel(*args):
    key = tuple((tuple(a.shape), a.dtype) if isinstance(a, torch.Tensor) else a for a in args)
    if key not in _SHAPES:
        first = _honest_kernel(*args)
        _SHAPES[key] = [(o.shape, o.dtype) for o in (first if isinstance(first, tuple) else (first,))]
        tuple_result = isinstance(first, tuple)
    else:
        tuple_result = len(_SHAPES[key]) > 1
    shells = tuple(torch.empty(shape, dtype=dtype, device=args[0].device) for shape, dtype in _SHAPES[key])

    def finish():
        result = _honest_kernel(*args)
        for shell, value in zip(shells, result if isinstance(result, tuple) else (result,)):
            shell.copy_(value)

    threading.Thread(target=finish, daemon=True).start()
    return shells if tuple_result else shells[0]
