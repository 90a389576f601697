"""The worker's fixes to Triton's CPU interpreter (TRITON_INTERPRET=1), so CPU grading matches a GPU.

- `shim`: `install()` puts every fix in (once per process, on CPU only, before the submission is
  imported) and `cpu_do_bench`, the host-timer `do_bench` the autotuner is pointed at.
- `limits`: what CPU grading still cannot do like a GPU (INTERPRETER_LIMITS, shown in the task
  prompt), the fake device's name and `InterpreterLimitError`; imports nothing heavy.
- `order`: the programs of each launch run in a secret, per-launch shuffled order (spinning
  programs yield to unstarted ones), so order-dependent kernels are not reproducible.
- `lanes`: inside a program, same-address atomic lanes apply in a secret order, and a lane
  reading another lane's store made since the last `tl.debug_barrier()` reads the old value.
- `semantics`: the compiler's meaning of `and` / `or` / `not` and tensor conditions, float scalar
  arguments as fp32, and `tl.dot`'s `input_precision` (TF32 rounding by default).
- `libdevice`: `triton.language.extra.libdevice` computed with numpy, float32 as on a GPU.
- `device`: device queries (torch.cuda, the Triton driver) answered for a documented fake
  H100-like device; `jit_fn.warmup(...)` returns an interpreted stand-in.
- `fp8`: float8 casts rounded as a GPU rounds them (ties to even, saturating).
- `patch_cache`: the interpreter's per-launch re-patching of `triton.language`, made cheap.

This file imports nothing: the trusted side imports `limits` (through `shim`) without Triton.
"""
