"""What CPU (Triton interpreter) grading cannot do like a GPU, and the error that says so.

Imports nothing heavy: the trusted side (`gym.tasks.prompt`) lists INTERPRETER_LIMITS
in the task prompt without importing Triton.
"""

from __future__ import annotations

# What torch.cuda and triton.runtime.driver.active answer inside the worker on CPU.
FAKE_DEVICE_NAME = "kgym-interpreter (fake H100-like properties)"
# What `jit_fn.warmup(...)` reports under the interpreter, which compiles nothing (positive: callers divide by them).
WARMUP_N_REGS = 32
WARMUP_SHARED = 1024

# The known gaps left after the worker's interpreter shim, one sentence each (shown by `kgym show` for CPU grading).
INTERPRETER_LIMITS: list[str] = [
    "Timings are host timings of interpreted numpy code, never comparable with a GPU's.",
    "Program instances of a launch run one at a time, in a secret random order that changes on every launch (so, as on a GPU, order-dependent float atomics are not bit-reproducible); a program that spins waiting for another can only be released by programs that have not started yet.",
    "bfloat16 arithmetic is not exact in the interpreter, so bf16 variants are graded on a GPU only.",
    "`tl.dot` on float32 rounds both operands to TF32 (to nearest even; NVIDIA tensor cores may truncate, a little less accurate) unless the kernel passes `input_precision='ieee'`, as on a GPU, but numpy/BLAS sums the products, and its rounding can depend on a row's position inside its tile.",
    "Math functions (`tl.exp`, libdevice) are numpy's accurate implementations, so errors measured on CPU understate those of a GPU's approximate instructions.",
    "`tl.inline_asm_elementwise` and the libdevice Bessel functions (j0, j1, y0, y1, jn, yn, cyl_bessel_i1) cannot run: they raise an error naming this limit.",
    f"`jit_fn.warmup(...)` compiles nothing: it returns a stand-in whose `n_regs` ({WARMUP_N_REGS}) and `metadata.shared` ({WARMUP_SHARED} bytes) are placeholders, and launching it interprets the kernel.",
    f"torch.cuda and `triton.runtime.driver.active` device queries answer for a fake device named {FAKE_DEVICE_NAME!r} (132 SMs, 227 KiB shared memory per block, compute capability 9.0); `torch.cuda.is_available()` stays False and tensors live on the CPU.",
    "libdevice's directed-rounding variants (`_rz`, `_rd`, `_ru`) are exact for float32 results but round to nearest for float64 results.",
]


class InterpreterLimitError(RuntimeError):
    """Raised where the CPU interpreter cannot do what the GPU path does (the message says which limit)."""

    def __init__(self, what: str, gpu: str = "") -> None:
        message = f"interpreter limit (CPU grading): {what}; the GPU path differs: "
        message += gpu or "this is not an error of the kernel on a GPU"
        super().__init__(message)
