"""Every launched jit function must be real Triton: compile it for a GPU target without a GPU.

Under Triton's CPU interpreter a `@triton.jit` body is plain Python: it could call
numpy on its arguments' host data and never compile for a GPU. The witness compiles
each specialization a replayed tape launches (the arguments as the launch bound them,
so constexprs, int specialisation and pointer alignment are what a GPU would see) for
a CUDA target such as sm_90, through Triton's own front end and lowering (to LLVM IR;
no driver, no ptxas, nothing launched). A construct Triton cannot compile fails the
grade as a compile error with Triton's message, which names the construct and line.

This uses Triton's internals as 3.x lays them out (`create_function_from_signature`,
`JITFunction._pack_args`, the backend's stages); where they differ the check says so
(`CompileCheckUnavailable`) instead of guessing.
"""

from __future__ import annotations

import contextlib
import functools
import sys
from collections.abc import Iterator
from typing import Any

# The last stage run: the Triton front end (TTIR), GPU layouts (TTGIR), then LLVM IR.
LAST_STAGE = "llir"


class CompileCheckUnavailable(Exception):
    """This Triton build does not expose what the check needs."""


# Compiled twins of the Triton language's own jit functions, by the interpreted function's id.
_TWINS: dict[int, Any] = {}


@contextlib.contextmanager
def compiled_language() -> Iterator[None]:
    """The Triton language as the compiler needs it, for the duration.

    Under TRITON_INTERPRET=1 Triton builds its own library functions (`tl.sum`, `tl.max`,
    `tl.cumsum`, ...) as interpreted functions when it is imported, and the compiler cannot
    call those. Inside this context every such function in `triton.language`'s modules (and
    the tensor methods that forward to one) is a compiled twin, a `JITFunction` of the same
    Python function; everything is put back on exit."""
    try:
        import triton.language as tl
        from triton.runtime.interpreter import InterpretedFunction
        from triton.runtime.jit import JITFunction
    except ImportError:  # pragma: no cover
        yield
        return
    swapped: list[tuple[Any, str, Any]] = []

    def twin(function: Any) -> Any:
        known = _TWINS.get(id(function))
        if known is None:
            options = {key: value for key, value in getattr(function, "kwargs", {}).items() if key in ("do_not_specialize", "debug", "noinline")}
            known = _TWINS[id(function)] = (function, JITFunction(function.fn, **options))
        return known[1]

    try:
        for name, module in list(sys.modules.items()):
            if not name.startswith("triton.language") or module is None:
                continue
            for key, value in list(vars(module).items()):
                if isinstance(value, InterpretedFunction):
                    swapped.append((module, key, value))
                    setattr(module, key, twin(value))
        for key, value in list(vars(tl.tensor).items()):
            cells = getattr(value, "__closure__", None) or ()
            inner = [cell.cell_contents for cell in cells if isinstance(cell.cell_contents, InterpretedFunction)]
            if inner:
                swapped.append((tl.tensor, key, value))
                setattr(tl.tensor, key, twin(inner[0]))
        yield
    finally:
        for owner, key, value in reversed(swapped):
            setattr(owner, key, value)


@functools.cache
def _backend(target: str) -> tuple[Any, Any]:
    """(GPUTarget, backend) for "cuda:<capability>"."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import make_backend

    kind, _, capability = target.partition(":")
    if kind != "cuda" or not capability.isdigit():
        raise CompileCheckUnavailable(f"unknown compile target {target!r}")
    gpu = GPUTarget("cuda", int(capability), 32)
    return gpu, make_backend(gpu)


def _binder(jit: Any, target: str) -> Any:
    cache = jit.__dict__.setdefault("_kgym_binders", {})
    binder = cache.get(target)
    if binder is None:
        try:
            from triton.runtime.jit import create_function_from_signature
        except ImportError as error:  # pragma: no cover - a Triton without it
            raise CompileCheckUnavailable(str(error)) from None
        binder = cache[target] = create_function_from_signature(jit.signature, jit.params, _backend(target)[1])
    return binder


def compile_for_gpu(jit: Any, target: str, args: list[Any], kwargs: dict[str, Any], seen: set[str] | None = None) -> None:
    """Compile `jit` (a JITFunction) as launched with `args`/`kwargs` for `target`; raises Triton's
    error when it does not compile, CompileCheckUnavailable when the check cannot run here.
    Specializations already in `seen` are not compiled again (and new ones are added to it)."""
    try:
        from triton import knobs
        from triton.compiler import ASTSource
    except ImportError as error:  # pragma: no cover
        raise CompileCheckUnavailable(str(error)) from None
    gpu, backend = _backend(target)
    launch = {key: value for key, value in kwargs.items() if key not in ("grid", "warmup")}
    launch["debug"] = launch.get("debug", jit.debug) or knobs.runtime.debug
    launch["instrumentation_mode"] = knobs.compilation.instrumentation_mode
    bound_args, specialization, options = _binder(jit, target)(*args, **launch)
    key = repr((jit.fn.__qualname__, specialization, sorted((name, repr(value)) for name, value in launch.items())))
    if seen is not None:
        if key in seen:
            return
        seen.add(key)
    options, signature, constexprs, attrs = jit._pack_args(backend, launch, bound_args, specialization, options)
    source = ASTSource(jit, signature, constexprs, attrs)
    with compiled_language():
        _lower(source, gpu, backend, options)


def _lower(source: Any, gpu: Any, backend: Any, options: Any) -> None:
    from triton._C.libtriton import ir

    context = ir.context()
    ir.load_dialects(context)
    backend.load_dialects(context)
    module = source.make_ir(gpu, options, backend.get_codegen_implementation(options), backend.get_module_map(), context)
    stages: dict[str, Any] = {}
    backend.add_stages(stages, options, source.language)
    metadata: dict[str, Any] = {"target": gpu, **options.__dict__}
    for name, stage in stages.items():
        module = stage(module, metadata)
        if name == LAST_STAGE:
            break
