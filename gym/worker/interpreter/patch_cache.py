"""The interpreter's re-patching of `triton.language`, made cheap.

Triton's interpreter maps the language's builtins onto its own implementations
on every launch, and again on every call of one `@triton.jit` function from
another (`interpreter._patch_lang`): for each package (`tl`, `tl.core`,
`tl.tensor`, `tl.math`, `tl.core.tensor_descriptor_base`) it lists every member
with `inspect.getmembers` and wraps those marked builtin. That listing is most
of the cost: about 0.9 ms a call here, so a kernel whose programs call two jit
helpers spent half its interpreted time re-listing the language (l1/softmax: 1.8
of 3.6 s per grade).

`install()` lists each package's builtin names once, before any launch (the
packages are unpatched then), and replaces `interpreter._patch_builtin` with a
loop over those names that wraps each member that is still a builtin, exactly as
the original does, recording every change in the same scope (so the launch's
restore undoes it as before). A package outside that list takes the original
path. The one difference: a builtin added to a listed package after the worker
started would not be wrapped (nothing in Triton or the worker adds one; a
submission that did would only break its own kernel). A speed patch only: plain
setattr, outside the tamper fingerprint (restoring the original only costs the
submission time).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any

# The builtin names of each package `_patch_lang` patches, listed at install (unpatched).
_NAMES: dict[Any, tuple[str, ...]] = {}


def language_packages() -> list[Any]:
    """What `interpreter._patch_lang` hands `_patch_builtin` (tl.tensor is tl.core.tensor)."""
    import triton.language as tl

    return [tl, tl.core, tl.tensor, tl.math, tl.core.tensor_descriptor_base]


def builtin_names(package: Any) -> tuple[str, ...]:
    """Names of the members `_patch_builtin` would wrap now, in its order (inspect.getmembers: by name)."""
    import triton.language as tl

    return tuple(name for name, member in inspect.getmembers(package) if tl.core.is_builtin(member))


def install(patch: Callable[[Any, str, Any], None]) -> None:
    """List the packages' builtins now and route `_patch_builtin` through that list."""
    import triton.language as tl
    from triton.runtime import interpreter

    for package in language_packages():
        _NAMES[package] = builtin_names(package)
    original = interpreter._patch_builtin
    is_builtin = tl.core.is_builtin

    def _patch_builtin(package: Any, builder: Any, scope: Any) -> None:
        names = _NAMES.get(package)
        if names is None:
            original(package, builder, scope)
            return
        patch_attr = interpreter._patch_attr
        for name in names:
            member = getattr(package, name, None)
            if is_builtin(member):
                patch_attr(package, name, member, builder, scope)

    patch(interpreter, "_patch_builtin", _patch_builtin)
