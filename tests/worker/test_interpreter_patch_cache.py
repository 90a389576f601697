"""The worker's cached re-patching of triton.language (gym.worker.interpreter.patch_cache): it makes the
same changes as Triton's own `_patch_builtin`, in the same order, undone by the same restore, and a
launch whose program calls jit helpers no longer lists the language's packages. Run in a fresh
interpreter process, with the worker's interpreter fixes installed as in a grade."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = textwrap.dedent(
    """
    import inspect, json
    import torch, triton, triton.language as tl
    from triton.runtime import interpreter

    upstream = interpreter._patch_builtin
    from gym.worker.interpreter import patch_cache as interpreter_patch_cache, shim as interpreter_shim
    interpreter_shim.install()
    cached = interpreter._patch_builtin

    def state():
        # What every name of every patched package resolves to, by identity (names whose lookup makes a
        # new object each time, e.g. __dict__, left out): what a restore must give back.
        seen = {}
        for package in interpreter_patch_cache.language_packages():
            for name in dir(package):
                first, again = getattr(package, name, None), getattr(package, name, None)
                if first is again:
                    seen[f"{package.__name__}.{name}"] = id(first)
        return seen

    @triton.jit
    def _square(v):
        return v * v

    @triton.jit
    def _kernel(x, out, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        mask = offs < n
        v = tl.load(x + offs, mask=mask)
        tl.store(out + offs, _square(v) + _square(v + 1.0), mask=mask)

    at_rest = state()
    fn = _kernel.fn
    changes = {}
    for name, patch_builtin in (("upstream", upstream), ("cached", cached)):
        interpreter._patch_builtin = patch_builtin
        scope = interpreter._patch_lang(fn)
        changes[name] = [(f"{getattr(obj, '__name__', obj)}", attr) for obj, attr, _ in scope._changes]
        scope.restore()
        changes[name + "_restored"] = state() == at_rest
    interpreter._patch_builtin = cached

    listed = []
    getmembers = inspect.getmembers
    inspect.getmembers = lambda obj, *a: (listed.append(getattr(obj, "__name__", str(obj))), getmembers(obj, *a))[1]
    x = torch.linspace(-2, 2, 300)
    out = torch.empty_like(x)
    _kernel[(3,)](x, out, x.numel(), BLOCK=128)
    inspect.getmembers = getmembers
    print(json.dumps({
        "names": {package.__name__: list(interpreter_patch_cache.builtin_names(package)) == list(interpreter_patch_cache._NAMES[package]) for package in interpreter_patch_cache.language_packages()},
        "counts": {package.__name__: len(interpreter_patch_cache._NAMES[package]) for package in interpreter_patch_cache.language_packages()},
        "upstream": changes["upstream"], "cached": changes["cached"],
        "upstream_restored": changes["upstream_restored"], "cached_restored": changes["cached_restored"],
        "listed_during_launch": listed,
        "right": bool(torch.equal(out, x * x + (x + 1.0) * (x + 1.0))),
        "restored_after_launch": state() == at_rest,
    }))
    """
)


def test_cached_patching_changes_what_tritons_own_changes_and_lists_nothing_per_call() -> None:
    env = {**os.environ, "TRITON_INTERPRET": "1", "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=300, check=False, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    # The names were listed from the unpatched packages, and they are what Triton would list now.
    assert all(report["names"].values()), report["names"]
    assert report["counts"]["triton.language"] > 50 and report["counts"]["tensor"] > 20
    # The same attributes of the same objects, in the same order; each restore gives everything back.
    assert report["cached"] == report["upstream"] and len(report["cached"]) > 100
    assert report["upstream_restored"] and report["cached_restored"]
    # A launch whose programs call two jit helpers: right, restored, and no package listed again.
    assert report["right"] and report["restored_after_launch"]
    assert report["listed_during_launch"] == [], report["listed_during_launch"][:10]
