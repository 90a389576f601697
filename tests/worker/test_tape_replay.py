"""Tapes and their replay, in a fresh interpreter each (TRITON_INTERPRET is read when Triton is
imported): what a call records (ops with their effect, launches with resolved grids, buffers by
origin), that the recorded launches replayed alone on other inputs give those inputs' answer, that
external buffers and allocations are filled with random bytes in the replay, that the autotuner's benchmark runs
stay out of the tape, and the compile check for a GPU target."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]

KERNELS = """
import triton
import triton.language as tl


@triton.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def copy(src_ptr, dst_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(dst_ptr + offs, tl.load(src_ptr + offs, mask=mask), mask=mask)


@triton.autotune(configs=[triton.Config({"BLOCK": 32}), triton.Config({"BLOCK": 64})], key=["n"])
@triton.jit
def tuned_add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) + tl.load(y_ptr + offs, mask=mask), mask=mask)


@triton.jit
def count_positive(x_ptr, count_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(x_ptr + offs, mask=offs < n, other=0.0)
    tl.atomic_add(count_ptr, tl.sum((x > 0).to(tl.int32), axis=0))


@triton.jit
def fill_first(out_ptr, value, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.zeros([BLOCK], dtype=tl.float32) + value, mask=offs < n)


@triton.jit
def bump(counter_ptr, out_ptr):
    ticket = tl.atomic_add(counter_ptr, 1)
    tl.store(out_ptr, ticket.to(tl.float32))
    tl.atomic_xchg(counter_ptr, 0)


@triton.jit
def host_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr, np.sum(tl.load(x_ptr + offs, mask=offs < n)))


SCALE = 2.0
CONST_SCALE = tl.constexpr(2.0)


@triton.jit
def scale_by_global(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * SCALE, mask=offs < n)


@triton.jit
def scale_by_constexpr(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=offs < n) * CONST_SCALE, mask=offs < n)
"""

PRELUDE = """
import json, sys
from pathlib import Path
import torch
import triton
from gym.worker import op_trace as ot, tape as wt
from gym.worker.tape_replay import TapeReplay, load_kernels
from gym.worker.tape import CallTape, LaunchStep, OpStep

ot.install_launch_hook()
K = load_kernels(Path("kernels.py"), "kernels_under_test", interpret=True)
RESULTS = {}

def record(call, inputs):
    recorder = wt.TapeRecorder(0)
    for name, tensor in inputs.items():
        recorder.add_input(name, tensor)
    wt.begin(recorder)
    try:
        with ot.traced(ot.OpTrace()):
            result = call()
    finally:
        wt.end()
    return result, CallTape.model_validate_json(recorder.finish(result).model_dump_json())

def replay(tape, inputs):
    return TapeReplay(tape, torch.device("cpu"), inputs).run(K, lambda: None)
"""


def _run(script: str, tmp_path: Path) -> dict[str, Any]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(TRITON_INTERPRET="1", TRITON_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(REPO))
    (tmp_path / "kernels.py").write_text(KERNELS)
    path = tmp_path / "script.py"
    path.write_text(PRELUDE + textwrap.dedent(script) + "\nprint(json.dumps(RESULTS))\n")
    done = subprocess.run([sys.executable, str(path)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-6000:]
    results: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return results


def test_a_tape_records_the_call_and_replays_on_other_inputs(tmp_path: Path) -> None:
    results = _run(
        """
        x, y = torch.randn(100), torch.randn(100)
        def call():
            out = torch.empty_like(x).view(100)
            K.add[(triton.cdiv(100, 32),)](x, y, out, 100, BLOCK=32)
            return out
        out, tape = record(call, {"x": x, "y": y})
        RESULTS["kinds"] = [step.kind for step in tape.steps]
        RESULTS["ops"] = [(step.packet, step.effect) for step in tape.steps if isinstance(step, OpStep)]
        launch = next(step for step in tape.steps if isinstance(step, LaunchStep))
        RESULTS["launch"] = [launch.kernel, launch.grid, sorted(launch.kwargs)]
        RESULTS["origins"] = sorted(buffer.origin for buffer in tape.buffers)
        x2, y2 = torch.randn(100), torch.randn(100)
        (again,) = replay(tape, {"x": x2, "y": y2})
        RESULTS["replayed"] = bool(torch.equal(again, x2 + y2))
        RESULTS["own"] = bool(torch.equal(out, x + y))
        """,
        tmp_path,
    )
    assert results["own"] and results["replayed"]
    assert results["kinds"] == ["op", "op", "launch"]
    # The allocation is replayed, the view is not (it is metadata over the allocation's buffer).
    assert results["ops"] == [["aten.empty_like", True], ["aten.view", False]]
    assert results["launch"] == ["add", [4], ["BLOCK"]]
    assert results["origins"] == ["input", "input", "step"]


def test_external_buffers_are_filled_so_only_scratch_use_survives(tmp_path: Path) -> None:
    results = _run(
        """
        x, y = torch.randn(64), torch.randn(64)
        workspace = torch.empty(64)
        remembered = x + y
        def scratch():
            out = torch.empty_like(x)
            K.add[(2,)](x, y, workspace, 64, BLOCK=32)
            K.copy[(2,)](workspace, out, 64, BLOCK=32)
            return out
        def remembering():
            out = torch.empty_like(x)
            K.copy[(2,)](remembered, out, 64, BLOCK=32)
            return out
        _, tape = record(scratch, {"x": x, "y": y})
        x2, y2 = torch.randn(64), torch.randn(64)
        RESULTS["scratch"] = bool(torch.equal(replay(tape, {"x": x2, "y": y2})[0], x2 + y2))
        RESULTS["scratch_origins"] = sorted(buffer.origin for buffer in tape.buffers)
        _, tape = record(remembering, {"x": x, "y": y})
        (got,) = replay(tape, {"x": x2, "y": y2})
        (again,) = replay(tape, {"x": x2, "y": y2})
        bits = lambda t: t.view(torch.int32)
        # Neither the remembered answer nor the right one: random bytes, drawn anew by each replay.
        RESULTS["remembered_lost"] = not bool((bits(got) == bits(remembered)).any()) and not bool((bits(got) == bits(x2 + y2)).any())
        RESULTS["fill_differs"] = not torch.equal(bits(got), bits(again))
        RESULTS["fill_is_not_nan"] = not bool(torch.isnan(got).all())
        """,
        tmp_path,
    )
    assert results["scratch"] and results["scratch_origins"] == ["external", "input", "input", "step"]
    assert results["remembered_lost"] and results["fill_differs"] and results["fill_is_not_nan"]


def test_the_autotuners_benchmark_runs_stay_out_of_the_tape(tmp_path: Path) -> None:
    results = _run(
        """
        from gym.worker.interpreter import shim as interpreter_shim
        interpreter_shim.install()
        x, y = torch.randn(200), torch.randn(200)
        def call():
            out = torch.empty_like(x)
            K.tuned_add[lambda meta: (triton.cdiv(200, meta["BLOCK"]),)](x, y, out, 200)
            return out
        # Under the interpreter the kernels file's copy is plain jit: the autotuned one is the submission's.
        import importlib.util
        spec = importlib.util.spec_from_file_location("submission_copy", "kernels.py")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        K.tuned_add = module.tuned_add
        out, tape = record(call, {"x": x, "y": y})
        RESULTS["launches"] = [step.kernel for step in tape.steps if isinstance(step, LaunchStep)]
        RESULTS["blocks"] = [step.kwargs["BLOCK"].integer for step in tape.steps if isinstance(step, LaunchStep)]
        RESULTS["own"] = bool(torch.equal(out, x + y))
        """,
        tmp_path,
    )
    assert results["own"]
    # Benchmarking ran each config several times; the tape holds the one launch that made the answer.
    assert results["launches"] == ["tuned_add"] and results["blocks"][0] in (32, 64)


def test_launched_specializations_compile_for_a_gpu_and_python_bodies_do_not(tmp_path: Path) -> None:
    results = _run(
        """
        from gym.worker.gpu_compile import compile_for_gpu
        compiled = load_kernels(Path("kernels.py"), "kernels_compiled", interpret=False)
        x, out = torch.randn(64), torch.empty(64)
        seen = set()
        compile_for_gpu(compiled.add, "cuda:90", [x, x, out, 64], {"BLOCK": 64}, seen)
        compile_for_gpu(compiled.add, "cuda:90", [x, x, out, 64], {"BLOCK": 64}, seen)
        RESULTS["seen"] = len(seen)
        try:
            compile_for_gpu(compiled.host_sum, "cuda:90", [x, out, 64], {"BLOCK": 64}, seen)
            RESULTS["host_sum"] = "compiled"
        except Exception as error:
            RESULTS["host_sum"] = type(error).__name__ + ": " + str(error)[-300:]
        # A plain float global is refused as Triton refuses it on a GPU; a tl.constexpr one compiles.
        for name in ("scale_by_global", "scale_by_constexpr"):
            try:
                compile_for_gpu(getattr(compiled, name), "cuda:90", [x, out, 64], {"BLOCK": 64}, seen)
                RESULTS[name] = "compiled"
            except Exception as error:
                RESULTS[name] = type(error).__name__ + ": " + str(error)[-400:]
        # The language's own jit functions (tl.sum, ...) are interpreted again afterwards.
        import triton.language as tl
        from triton.runtime.interpreter import InterpretedFunction
        RESULTS["restored"] = isinstance(tl.sum, InterpretedFunction)
        """,
        tmp_path,
    )
    assert results["seen"] == 1
    assert results["host_sum"].startswith("CompilationError") and "np" in results["host_sum"]
    assert results["scale_by_global"].startswith("CompilationError") and "constexpr" in results["scale_by_global"]
    assert results["scale_by_constexpr"] == "compiled"
    assert results["restored"]


def test_an_external_buffer_holding_one_value_is_replayed_holding_it(tmp_path: Path) -> None:
    results = _run(
        """
        from gym.worker.tape import repeated_value
        RESULTS["values"] = [
            repeated_value(torch.zeros(12).untyped_storage()),
            repeated_value(torch.full((6,), 1.0).untyped_storage()),
            repeated_value(torch.full((3,), -1, dtype=torch.int64).untyped_storage()),
            repeated_value(torch.arange(8, dtype=torch.int32).untyped_storage()),
            repeated_value(torch.empty(0).untyped_storage()),
        ]
        x = torch.randn(4)
        counter = torch.zeros(1, dtype=torch.int32)   # a semaphore kept between calls, reset by the kernel
        table = torch.arange(4, dtype=torch.int32)    # held something else: random bytes in the replay
        def call():
            out = torch.empty(1)
            K.bump[(1,)](counter, out)
            return out
        out, tape = record(call, {"x": x})
        RESULTS["starts"] = [buffer.start for buffer in tape.buffers if buffer.origin == "external"]
        RESULTS["replayed"] = [float(replay(tape, {"x": x})[0]) for _ in range(3)]
        def with_table():
            out = torch.empty(1)
            K.bump[(1,)](table, out)
            return out
        _, tape = record(with_table, {"x": x})
        RESULTS["table_start"] = [buffer.start for buffer in tape.buffers if buffer.origin == "external"]
        # A tape's claim is only what the witness fills with: a false one changes the replay, nothing else.
        tape.buffers[[b.origin for b in tape.buffers].index("external")].start = "07000000"
        RESULTS["claimed"] = float(replay(tape, {"x": x})[0])
        """,
        tmp_path,
    )
    assert results["values"] == ["00", "0000803f", "ff", None, None]
    assert results["starts"] == ["00"] and results["replayed"] == [0.0, 0.0, 0.0]
    assert results["table_start"] == [None] and results["claimed"] == 7.0


def test_a_host_read_of_a_count_a_kernel_wrote_is_replayed_from_the_witness_buffer(tmp_path: Path) -> None:
    results = _run(
        """
        from gym.worker.tape_replay import HostReadDiffers
        x = torch.tensor([1.0, -2.0, 3.0, 4.0, -5.0, 6.0, 7.0, -8.0])
        def call():
            count = torch.zeros(1, dtype=torch.int32)
            K.count_positive[(2,)](x, count, 8, BLOCK=4)
            n = count.item()
            out = torch.empty(n)
            K.fill_first[(1,)](out, float(n), n, BLOCK=8)
            return out
        out, tape = record(call, {"x": x})
        reads = [step for step in tape.steps if isinstance(step, OpStep) and step.packet == "aten._local_scalar_dense"]
        RESULTS["read"] = [reads[0].read.integer, out.tolist()]
        replayed = TapeReplay(tape, torch.device("cpu"), {"x": x[torch.randperm(8)]})
        RESULTS["permuted"] = replayed.run(K, lambda: None)[0].tolist()
        RESULTS["ops"] = sorted(replayed.ops)
        try:
            replay(tape, {"x": -x})
            RESULTS["other"] = "replayed"
        except HostReadDiffers as error:
            RESULTS["other"] = str(error)
        # A read of data no launch was given (here: the input, read before any launch) is compute.
        def early_read():
            n = int(x[0].item() > 0)
            out = torch.empty(1)
            K.fill_first[(1,)](out, float(n), 1, BLOCK=8)
            return out
        _, tape = record(early_read, {"x": x})
        replayed = TapeReplay(tape, torch.device("cpu"), {"x": x})
        replayed.run(K, lambda: None)
        RESULTS["early_ops"] = sorted(replayed.ops)
        """,
        tmp_path,
    )
    assert results["read"] == [5, [5.0] * 5]
    assert results["permuted"] == [5.0] * 5
    assert "kgym.host_read" in results["ops"] and "aten._local_scalar_dense" not in results["ops"]
    assert "the call read 5 on the host" in results["other"] and "replay reads 3" in results["other"]
    assert "aten._local_scalar_dense" in results["early_ops"] and "kgym.host_read" not in results["early_ops"]
