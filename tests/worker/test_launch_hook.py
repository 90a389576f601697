"""The worker's launch hook and host bridge tripwire (gym/worker/op_trace.py).

Every Triton launch must count, by kernel name: `kernel[grid](...)` and, on a GPU,
a precompiled `CompiledKernel` (`kernel.warmup(...)`, then `compiled[grid](...)`,
`compiled.run(...)`); a launch on another stream or device than the timed one is
recorded (`kgym.side_stream_launch`); Triton's own reads of `data_ptr()` (argument
pointers in a launch, a host-side TMA descriptor's alignment check) do not trip
`kgym.tensor_data_to_host`, and every other one does.

The hooks patch torch and Triton for the whole process, so each test runs its
script in a fresh interpreter. There is no GPU here: the GPU path runs Triton's
real compiler, `JITFunction.run`, `CompiledKernel` and `CudaLauncher` against a
stand-in driver whose `utils.launch` plays the C launcher (it reads each pointer
argument's `data_ptr()` and calls the launch hooks, as driver.c does, with the
launcher's frame on top); only the final cuLaunchKernel is missing.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import torch

from gym.grading.judging.integrity import call_violations
from gym.worker.protocol import CallRecord
from gym.worker.torch_policy import HOST_BRIDGE_OP, SIDE_STREAM_OP

REPO = Path(__file__).resolve().parents[2]

PRELUDE = """
import json, os
import torch, triton, triton.language as tl
from gym.worker import op_trace as ot

RESULTS = {}

def traced_run(label, body):
    trace = ot.OpTrace()
    error = None
    with ot.traced(trace):
        try:
            body()
        except Exception as exc:
            error = type(exc).__name__
    RESULTS[label] = {"launches": ot.take_launches(), "ops": dict(trace.ops), "stray": ot.take_stray_stream_launches(), "error": error}

@triton.jit
def _add(x, y, out, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(out + offs, tl.load(x + offs, mask=m) + tl.load(y + offs, mask=m), mask=m)

@triton.jit
def _copy_desc(in_desc, out_desc, BLOCK: tl.constexpr):
    off = tl.program_id(0) * BLOCK
    out_desc.store([off], in_desc.load([off]))

x, y, out = torch.arange(128.0), torch.ones(128), torch.empty(128)
"""

# A stand-in for the CUDA driver: Triton compiles for real (sm_90), launches go to `launch`.
FAKE_DRIVER = """
from collections import namedtuple
from triton.backends.compiler import GPUTarget
import triton.backends.nvidia.driver as nvd
from triton.runtime.driver import driver

# The stream Triton picks (torch.cuda.current_stream in real life) and the current device.
STREAM, DEVICE = [0], [0]
# What CudaUtils loads from its compiled module.
nvd.PyKernelArg = namedtuple("PyKernelArg", "nested_tuple type")
nvd.ARG_CONSTEXPR, nvd.ARG_KERNEL, nvd.ARG_TUPLE = 0, 1, 2
LAUNCHED = []
# driver.c's launchKernel: enter hook, data_ptr() of every pointer argument, launch, exit hook.
# C has no frame of its own: the innermost Python frame while it runs is the launcher's, in
# triton/backends/nvidia/driver.py, so the stand-in's code carries that file name.
C_LAUNCH = '''
def launch(gx, gy, gz, stream, function, coop, pdl, kmeta, lmeta, enter, exit_, gs, ps, annotations, signature, args):
    if enter is not None:
        enter(lmeta)
    pointers = [arg.data_ptr() if hasattr(arg, "data_ptr") else arg for arg in args]
    LAUNCHED.append([gx, gy, gz, stream, len(pointers)])
    if exit_ is not None:
        exit_(lmeta)
'''
namespace = {"LAUNCHED": LAUNCHED}
exec(compile(C_LAUNCH, nvd.__file__, "exec"), namespace)

class Utils:
    launch = staticmethod(namespace["launch"])
    def get_device_properties(self, device):
        return {"max_shared_mem": 228 * 1024, "multiprocessor_count": 132}
    def build_signature_metadata(self, signature):
        return bytes(len(signature))
    def load_binary(self, name, kernel, shared, device):
        return 1, 2, 32, 0, 1024
    def fill_tma_descriptor_tiled(self, *args):
        return object()

class FakeCudaDriver:
    def __init__(self):
        self.utils = Utils()
        self.launcher_cls = nvd.CudaLauncher
    def get_current_target(self):
        return GPUTarget("cuda", 90, 32)
    def get_current_device(self):
        return DEVICE[0]
    def get_current_stream(self, device):
        return STREAM[0]
    def get_active_torch_device(self):
        return torch.device("cpu")

driver.set_active(FakeCudaDriver())
"""


def _run(script: str, tmp_path: Path, interpret: bool, fake_gpu: bool = False) -> dict[str, Any]:
    """Run PRELUDE (+ the fake driver) + script from a file (Triton's compiler reads kernels'
    source) in a fresh interpreter; the JSON it prints last."""
    env = {key: value for key, value in os.environ.items() if key not in {"TRITON_INTERPRET", "PYTHONPATH"}}
    if interpret:
        env["TRITON_INTERPRET"] = "1"
    env["TRITON_CACHE_DIR"] = str(tmp_path / "triton-cache")
    env["PYTHONPATH"] = str(REPO)
    source = PRELUDE + (FAKE_DRIVER if fake_gpu else "") + textwrap.dedent(script) + "\nprint(json.dumps(RESULTS))\n"
    path = tmp_path / "launch_script.py"
    path.write_text(source)
    done = subprocess.run([sys.executable, str(path)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-6000:]
    results: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return results


def test_interpreter_counts_launches_by_kernel_name_and_exempts_its_own_host_copies(tmp_path: Path) -> None:
    results = _run(
        """
        ot.install_launch_hook()
        ot.install_host_bridge_tripwire()
        traced_run("twice", lambda: [_add[(1,)](x, y, out, 128, BLOCK=128) for _ in range(2)])
        RESULTS["sum_ok"] = bool(torch.equal(out, x + y))
        traced_run("warmup", lambda: RESULTS.__setitem__("warmup_returns", repr(_add.warmup(x, y, out, 128, BLOCK=128, grid=(1,)))))
        traced_run("raises", lambda: _add[(1,)](x, y, out))
        # The grid function is the submission's code, even though Triton calls it mid-launch.
        traced_run("grid_reads_host", lambda: _add[lambda meta: (len(x.tolist()) // 128,)](x, y, out, 128, BLOCK=128))
        """,
        tmp_path,
        interpret=True,
    )
    assert results["twice"]["launches"] == {"_add": 2}
    assert HOST_BRIDGE_OP not in results["twice"]["ops"]
    assert results["sum_ok"]
    # Under the interpreter a warm-up compiles and launches nothing (and returns no CompiledKernel).
    assert results["warmup"]["launches"] == {} and results["warmup_returns"] == "None"
    assert results["raises"]["error"] and results["raises"]["launches"] == {}
    # The submission's grid function reads the host: recorded, and the tripwire stops the launch.
    assert results["grid_reads_host"]["ops"][HOST_BRIDGE_OP] == 1
    assert results["grid_reads_host"]["error"] == "PermissionError" and results["grid_reads_host"]["launches"] == {}
    # No CUDA here: nothing to compare streams against.
    assert all(not entry["stray"] for entry in results.values() if isinstance(entry, dict))


def test_tensor_descriptor_and_data_ptr_do_not_trip_but_host_reads_do(tmp_path: Path) -> None:
    results = _run(
        """
        ot.install_launch_hook()
        ot.install_host_bridge_tripwire()
        from triton.tools.tensor_descriptor import TensorDescriptor

        def with_descriptors():
            src = TensorDescriptor.from_tensor(x, [32])
            dst = TensorDescriptor(out, list(out.shape), list(out.stride()), [32])
            _copy_desc[(4,)](src, dst, BLOCK=32)

        traced_run("descriptors", with_descriptors)
        RESULTS["copy_ok"] = bool(torch.equal(out, x))
        traced_run("bare_data_ptr", lambda: x.data_ptr())
        traced_run("descriptor_then_data_ptr", lambda: TensorDescriptor.from_tensor(x, [32]).base.data_ptr())
        traced_run("numpy", lambda: x.numpy())

        class Sneaky:
            # A descriptor base of the submission's own: its data_ptr() is not Triton's.
            dtype = torch.float32
            def data_ptr(self):
                x.numpy()
                return 0

        traced_run("sneaky_base", lambda: TensorDescriptor(Sneaky(), [128], [1], [32]))
        RESULTS["wrapped"] = bool(getattr(TensorDescriptor.__post_init__, "_kgym_wrapped", False))
        """,
        tmp_path,
        interpret=True,
    )
    assert results["wrapped"]
    assert results["descriptors"]["error"] is None
    assert results["descriptors"]["launches"] == {"_copy_desc": 1}
    assert HOST_BRIDGE_OP not in results["descriptors"]["ops"]
    assert results["copy_ok"]
    for label in ("numpy", "sneaky_base"):
        assert results[label]["ops"].get(HOST_BRIDGE_OP) == 1, (label, results[label])
    # An address is not data: data_ptr() is no host bridge, wherever it is called.
    for label in ("bare_data_ptr", "descriptor_then_data_ptr"):
        assert HOST_BRIDGE_OP not in results[label]["ops"], (label, results[label])


def test_gpu_launches_count_through_jit_warmup_and_precompiled_kernels(tmp_path: Path) -> None:
    results = _run(
        """
        ot.install_launch_hook(ot.CudaLookups(lambda: DEVICE[0], lambda device: 0))
        ot.install_host_bridge_tripwire()
        from triton import knobs
        from triton.compiler.compiler import CompiledKernel
        from triton.tools.tensor_descriptor import TensorDescriptor

        traced_run("jit", lambda: _add[(1,)](x, y, out, 128, BLOCK=128))
        compiled = []
        traced_run("warmup", lambda: compiled.append(_add.warmup(x, y, out, 128, BLOCK=128, grid=(1,))))
        kernel = compiled[0]
        RESULTS["compiled_type"] = type(kernel).__name__
        traced_run("compiled_getitem", lambda: kernel[(2, 1, 1)](x, y, out, 128))
        traced_run("compiled_run", lambda: kernel.run(1, 1, 1, 0, kernel.function, kernel.packed_metadata, None, None, None, x, y, out, 128))
        traced_run("compiled_private_run", lambda: kernel._run(1, 1, 1, 0, kernel.function, kernel.packed_metadata, None, None, None, x, y, out, 128))
        returned = []
        traced_run("jit_returns_compiled", lambda: returned.append(_add[(1,)](x, y, out, 128, BLOCK=128)))
        traced_run("relaunch_returned", lambda: returned[0][(1, 1, 1)](x, y, out, 128))
        # A launch hook is the submission's code, even though the launcher calls it.
        knobs.runtime.launch_enter_hook.add(lambda metadata: x.numpy())
        traced_run("enter_hook_reads_host", lambda: _add[(1,)](x, y, out, 128, BLOCK=128))
        knobs.runtime.launch_enter_hook.calls.clear()
        # Host-side TMA descriptors: the alignment check when built, and the launcher's
        # make_tensordesc_arg (real Triton code reading base.data_ptr()) when launched.
        traced_run("tma", lambda: _copy_desc[(4,)](TensorDescriptor.from_tensor(x, [32]), TensorDescriptor.from_tensor(out, [32]), BLOCK=32))
        RESULTS["launched"] = LAUNCHED
        RESULTS["is_compiled"] = isinstance(kernel, CompiledKernel) and isinstance(returned[0], CompiledKernel)
        """,
        tmp_path,
        interpret=False,
        fake_gpu=True,
    )
    assert results["is_compiled"] and results["compiled_type"] == "CompiledKernel"
    assert results["warmup"]["launches"] == {}
    for label in ("jit", "compiled_getitem", "compiled_run", "compiled_private_run", "jit_returns_compiled", "relaunch_returned"):
        assert results[label]["error"] is None, (label, results[label])
        assert results[label]["launches"] == {"_add": 1}, (label, results[label])
    assert results["tma"]["error"] is None and results["tma"]["launches"] == {"_copy_desc": 1}
    # Triton's own pointer reads (the binder's alignment check, the launcher's arguments,
    # the descriptors) never trip; the submission's launch hook does.
    for label in ("jit", "warmup", "compiled_getitem", "compiled_run", "compiled_private_run", "tma"):
        assert HOST_BRIDGE_OP not in results[label]["ops"], (label, results[label])
    # The submission's launch hook reads the host: recorded, and the tripwire stops that launch.
    assert results["enter_hook_reads_host"]["ops"][HOST_BRIDGE_OP] == 1
    assert results["enter_hook_reads_host"]["error"] == "PermissionError" and results["enter_hook_reads_host"]["launches"] == {}
    # Every counted launch reached the (stand-in) C launcher, the warm-up none.
    assert len(results["launched"]) == 7
    assert all(not results[label]["stray"] for label in ("jit", "compiled_getitem", "compiled_run", "tma"))


def test_launches_on_another_stream_or_device_are_recorded(tmp_path: Path) -> None:
    results = _run(
        """
        # The current device and each device's default stream, as torch.cuda would say.
        ot.install_launch_hook(ot.CudaLookups(lambda: DEVICE[0], lambda device: 0x100 + device))
        RESULTS["expected_at_install"] = ot.expected_stream()
        STREAM[0] = 0x100
        traced_run("timed_stream", lambda: _add[(1,)](x, y, out, 128, BLOCK=128))
        STREAM[0] = 0x7
        traced_run("side_stream", lambda: _add[(1,)](x, y, out, 128, BLOCK=128))
        STREAM[0], DEVICE[0] = 0x101, 1
        traced_run("other_device", lambda: _add[(1,)](x, y, out, 128, BLOCK=128))
        STREAM[0], DEVICE[0] = 0x100, 0
        kernel = _add.warmup(x, y, out, 128, BLOCK=128, grid=(1,))
        traced_run("explicit_stream", lambda: kernel[(1, 1, 1)](x, y, out, 128, stream=0x9))
        traced_run("raw_run_stream", lambda: kernel.run(1, 1, 1, 0x9, kernel.function, kernel.packed_metadata, None, None, None, x, y, out, 128))
        # Between calls: counted in the stray trace.
        STREAM[0] = 0x7
        _add[(1,)](x, y, out, 128, BLOCK=128)
        RESULTS["stray_trace"] = dict(ot.STRAY.ops)
        RESULTS["between_calls"] = ot.take_stray_stream_launches()
        ot.take_launches()
        # The worker may say which stream it times.
        ot.set_expected_stream(0x7, 0)
        RESULTS["expected_after_set"] = ot.expected_stream()
        traced_run("after_set", lambda: _add[(1,)](x, y, out, 128, BLOCK=128))
        STREAM[0] = 0x100
        traced_run("default_after_set", lambda: _add[(1,)](x, y, out, 128, BLOCK=128))
        """,
        tmp_path,
        interpret=False,
        fake_gpu=True,
    )
    assert results["expected_at_install"] == [0x100, 0]
    assert results["timed_stream"]["stray"] == [] and SIDE_STREAM_OP not in results["timed_stream"]["ops"]
    for label in ("side_stream", "other_device", "explicit_stream", "raw_run_stream", "default_after_set"):
        entry = results[label]
        assert entry["launches"] == {"_add": 1}, (label, entry)
        assert entry["ops"][SIDE_STREAM_OP] == 1, (label, entry)
        assert len(entry["stray"]) == 1 and entry["stray"][0].startswith("_add: "), (label, entry)
    assert "stream 0x7 on device 0" in results["side_stream"]["stray"][0]
    assert "stream 0x101 on device 1 (timed: stream 0x100 on device 0)" in results["other_device"]["stray"][0]
    assert "stream 0x9 on device 0" in results["explicit_stream"]["stray"][0]
    assert results["stray_trace"][SIDE_STREAM_OP] == 1 and len(results["between_calls"]) == 1
    assert results["expected_after_set"] == [0x7, 0]
    assert results["after_set"]["stray"] == [] and SIDE_STREAM_OP not in results["after_set"]["ops"]

    # The grader flags it like every tripwire, with no further plumbing.
    def flags(label: str) -> list[str]:
        record = CallRecord(id=0, ok=True, container="tensor", torch_ops=results[label]["ops"], launches=results[label]["launches"])
        return [violation.flag for violation in call_violations(record, [])]

    assert flags("side_stream") == ["tripwire:side_stream_launch"]
    assert flags("timed_stream") == []


def test_every_patched_hook_is_in_the_fingerprint_identities(tmp_path: Path) -> None:
    results = _run(
        """
        ot.install_launch_hook()
        ot.install_host_bridge_tripwire()
        ot.install_thread_hook()
        ot.install_mode_tripwire()
        before = ot.hook_identities()
        RESULTS["names"] = sorted(before)
        import triton.backends.nvidia.driver as nvd
        from triton.runtime.interpreter import InterpretedFunction
        nvd.CudaLauncher.__call__ = lambda self, *args: None
        InterpretedFunction.run = lambda self, *args, **kwargs: None
        torch.Tensor.numpy = torch._C.TensorBase.numpy
        ot.set_expected_stream(5, 1)
        after = ot.hook_identities()
        RESULTS["changed"] = sorted(name for name, identity in before.items() if after.get(name) != identity)
        """,
        tmp_path,
        interpret=True,
    )
    names = set(results["names"])
    for name in (
        "triton.backends.nvidia.driver.CudaLauncher.__call__",
        "triton.backends.nvidia.driver.CudaLauncher.__init__",
        "triton.backends.amd.driver.HIPLauncher.__call__",
        "triton.runtime.jit.JITFunction.run",
        "triton.runtime.interpreter.InterpretedFunction.run",
        "triton.tools.tensor_descriptor.TensorDescriptor.__post_init__",
        "torch.Tensor.numpy",
        "torch.Tensor.tolist",
        "_thread.start_new_thread",
        "kgym.expected_stream",
    ):
        assert name in names, name
    assert results["changed"] == [
        "kgym.expected_stream",
        "torch.Tensor.numpy",
        "triton.backends.nvidia.driver.CudaLauncher.__call__",
        "triton.runtime.interpreter.InterpretedFunction.run",
    ]


@pytest.mark.gpu
@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU (the rest of this file covers the same paths without one)")
def test_real_gpu_launches_count_and_a_side_stream_is_recorded(tmp_path: Path) -> None:
    results = _run(
        """
        torch.cuda.get_device_name()  # CUDA initialised before the hook, as in the worker
        ot.install_launch_hook()
        ot.install_host_bridge_tripwire()
        RESULTS["expected"] = ot.expected_stream()
        from triton.tools.tensor_descriptor import TensorDescriptor

        x, y, out = torch.arange(128.0, device="cuda"), torch.ones(128, device="cuda"), torch.empty(128, device="cuda")
        traced_run("jit", lambda: _add[(1,)](x, y, out, 128, BLOCK=128))
        compiled = _add.warmup(x, y, out, 128, BLOCK=128, grid=(1,))
        traced_run("compiled", lambda: compiled[(1, 1, 1)](x, y, out, 128))
        side = torch.cuda.Stream()

        def on_side():
            with torch.cuda.stream(side):
                _add[(1,)](x, y, out, 128, BLOCK=128)

        traced_run("side_stream", on_side)
        if torch.cuda.get_device_capability()[0] >= 9:
            traced_run("tma", lambda: _copy_desc[(4,)](TensorDescriptor.from_tensor(x, [32]), TensorDescriptor.from_tensor(out, [32]), BLOCK=32))
        torch.cuda.synchronize()
        RESULTS["copy_ok"] = bool(torch.equal(out, x)) if "tma" in RESULTS else None
        """,
        tmp_path,
        interpret=False,
    )
    assert results["expected"] == [torch.cuda.default_stream().cuda_stream, torch.cuda.current_device()]
    for label in ("jit", "compiled", "side_stream", "tma"):
        if label not in results:
            continue
        assert results[label]["error"] is None, (label, results[label])
        assert sum(results[label]["launches"].values()) == 1, (label, results[label])
        assert HOST_BRIDGE_OP not in results[label]["ops"], (label, results[label])
    assert results["jit"]["stray"] == [] and results["compiled"]["stray"] == []
    assert results["side_stream"]["ops"][SIDE_STREAM_OP] == 1 and len(results["side_stream"]["stray"]) == 1
    assert results["copy_ok"] in (None, True)
