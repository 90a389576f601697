"""Launched modules (gym.worker.launched_modules) and the compile window (op_trace.compiling), in-process:
a jit function from another file than the submission is taped under its module's key and its file
sent back; staged modules are bound on the kernels module where `kernel_named` finds them by name and
code; a compiler's fake-tensor work is not the call's, while real-tensor work still is."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import torch

from gym.worker import launched_modules
from gym.worker.launched_modules import LAUNCHED_DIR, MODULE_PREFIX, attach, launch_name, module_key, register, write_sources
from gym.worker.tape import code_identity
from gym.worker.tape_replay import ReplayError, kernel_named, load_kernels

GENERATED = textwrap.dedent(
    """
    import triton
    import triton.language as tl

    @triton.jit
    def _helion_double(x, out, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(out + offs, tl.load(x + offs, mask=offs < n) * 2, mask=offs < n)
    """
)


def _load(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def worker_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(launched_modules, "_SOURCES", {})
    monkeypatch.setattr(launched_modules, "_PREFIXES", {})


def test_a_registered_modules_functions_are_named_by_its_key_and_its_text_sent_back(tmp_path: Path, worker_state: None) -> None:
    submission = tmp_path / "submission.py"
    submission.write_text(GENERATED)
    generated = tmp_path / "cache" / "generated.py"
    generated.parent.mkdir()
    generated.write_text(GENERATED)
    own = _load(submission, "kgym_test_own")._helion_double
    other = _load(generated, "kgym_test_other")._helion_double
    assert launch_name(other, "_helion_double") == "_helion_double"  # not registered: named as always
    key = register(str(generated))
    assert key == module_key(str(generated))
    assert launch_name(own, "_helion_double") == "_helion_double"
    assert launch_name(other, "_helion_double") == f"{MODULE_PREFIX}{key}._helion_double"
    # The text is the one read when Helion loaded the module: rewriting the file afterwards changes nothing.
    generated.write_text(GENERATED.replace("* 2", "* 3"))
    assert register(str(generated)) == key
    vanished = tmp_path / "cache" / "vanished.py"
    gone_key = register(str(vanished))
    assert gone_key is not None

    written: dict[str, bytes] = {}

    def write(path: Path, data: bytes) -> None:
        written[path.relative_to(tmp_path / "out").as_posix()] = data

    (tmp_path / "out").mkdir()
    assert write_sources(tmp_path / "out", write) == sorted([key, gone_key])
    # One file per key, empty for a text that could not be read (so nothing can be planted under its name).
    assert written == {f"{LAUNCHED_DIR}/{key}.py": GENERATED.encode(), f"{LAUNCHED_DIR}/{gone_key}.py": b""}


def test_staged_modules_are_found_by_the_taped_name_and_code(tmp_path: Path) -> None:
    (tmp_path / "kernels.py").write_text("import triton\n")
    staged = tmp_path / "replay" / LAUNCHED_DIR
    staged.mkdir(parents=True)
    (staged / "0123456789abcdef.py").write_text(GENERATED)
    (staged / "junk.py").write_text("raise SystemExit('never loaded')\n")
    kernels = load_kernels(tmp_path / "kernels.py", "kgym_test_kernels", interpret=True, launched=staged)
    original = _load(staged / "0123456789abcdef.py", "kgym_test_original")._helion_double
    name = f"{MODULE_PREFIX}0123456789abcdef._helion_double"
    found = kernel_named(kernels, name, code_identity(original.fn))
    x = torch.arange(8, dtype=torch.float32)
    out = torch.empty_like(x)
    found[(1,)](x, out, 8, BLOCK=8)
    assert torch.equal(out, x * 2)
    with pytest.raises(ReplayError, match="whose source was not sent back and vetted"):
        kernel_named(kernels, f"{MODULE_PREFIX}ffffffffffffffff._helion_double")
    changed = GENERATED.replace("* 2", "* 3")
    (tmp_path / "changed.py").write_text(changed)
    other = _load(tmp_path / "changed.py", "kgym_test_changed")._helion_double
    with pytest.raises(ReplayError, match="whose code is not the file's"):
        kernel_named(kernels, name, code_identity(other.fn))


def test_attach_skips_what_is_not_a_staged_module(tmp_path: Path) -> None:
    kernels = ModuleType("kgym_test_empty")
    assert attach(kernels, tmp_path / "absent", "kgym_test_empty") == []
    (tmp_path / "launched").mkdir()
    (tmp_path / "launched" / "ABCDEF0123456789.py").write_text(GENERATED)
    assert attach(kernels, tmp_path / "launched", "kgym_test_empty") == []


def _fake_and_real_ops() -> tuple[Any, Any]:
    from torch._subclasses.fake_tensor import FakeTensorMode

    from gym.worker.op_trace import OpTrace, compiling, traced

    trace = OpTrace()
    real = torch.ones(4)
    with traced(trace):
        with compiling():
            with FakeTensorMode() as mode:
                fake = mode.from_tensor(real)
                (fake * 2).sum()
                torch.empty(3)
            real.mul(3)
    return trace, real


def test_a_compile_window_hides_fake_tensor_work_and_nothing_else() -> None:
    from gym.worker.torch_policy import DISABLED_OP

    trace, _ = _fake_and_real_ops()
    assert trace.ops.get("aten.mul", 0) == 1  # the real multiply only
    assert "aten.sum" not in trace.ops and "aten.empty" not in trace.ops
    assert DISABLED_OP not in trace.ops


def test_a_compile_window_that_leaves_the_mode_stack_changed_trips() -> None:
    from torch.utils._python_dispatch import _pop_mode

    from gym.worker import op_trace
    from gym.worker.torch_policy import DISABLED_OP

    trace = op_trace.OpTrace()
    op_trace.traced(trace).__enter__()
    try:
        with op_trace.compiling():
            assert _pop_mode() is trace  # the trace itself, popped inside the window
    finally:
        op_trace._ACTIVE.remove(trace)
    assert trace.ops[DISABLED_OP] == 1


def test_helions_nan_propagating_reductions_run_as_numpy() -> None:
    pytest.importorskip("helion")
    import helion.runtime.triton.helpers as helpers
    import numpy as np

    from gym.worker.interpreter.reductions import numpy_reduction

    assert numpy_reduction(helpers._maximum_propagate_nan) is np.max
    assert numpy_reduction(helpers._minimum_propagate_nan) is np.min
    assert numpy_reduction(helpers.max_propagate_nan) is None
    # The same name compiled from another file is not Helion's.
    fake = ModuleType("helion.runtime.triton.helpers")
    exec(compile("def _maximum_propagate_nan(a, b):\n    return a + b\n", "/tmp/elsewhere.py", "exec"), vars(fake))
    holder = type("Jit", (), {"fn": fake._maximum_propagate_nan})()
    assert numpy_reduction(holder) is None


def test_a_subclass_claiming_the_meta_device_is_real_work_inside_a_window() -> None:
    from gym.worker.op_trace import OpTrace, compiling, traced

    class Claims(torch.Tensor):
        @property
        def device(self) -> torch.device:  # type: ignore[override]
            return torch.device("meta")

    trace = OpTrace()
    x = torch.ones(4).as_subclass(Claims)
    with traced(trace), compiling():
        torch.add(x, x)
    assert trace.ops.get("aten.add", 0) == 1
