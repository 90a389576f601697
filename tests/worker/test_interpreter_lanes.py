"""Lane-level semantics inside one program under the interpreter (gym/worker/interpreter/lanes.py).

Real jit kernels run in one fresh interpreter with the worker's fixes installed (a script in a
subprocess, as in test_interpreter_gaps.py), which records each check's outcome as JSON:

- a block float `tl.atomic_add` whose lanes hit one address sums in a different order from run
  to run (different bits), as the threads of a GPU block do; the integer sum stays exact; the old
  values an integer atomic hands back (tickets) come in a fresh order, each lane still getting the
  one its own add returned; a block `tl.atomic_cas` is won by different lanes;
- a lane reading an address another lane stored since the last `tl.debug_barrier()` reads the old
  value (a GPU race); after the barrier it reads the new one; a lane reading back its own stores,
  masked-off lanes, lanes that all stored one value, and another launch's stores are unchanged.

Then two grades: a prefix sum that carries its running total through memory passes `l1/cumsum`
with a barrier (the same kernel without one is tests/adversarial/v4_lanes_carry_through_memory_cumsum.py),
and the shipped `l1/histogram` solution (integer atomics) still passes.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.schema.result import Status
from gym.tasks.loader import find_task
from gym.worker.interpreter.lanes import StoreLog, contiguous_bits, increasing, permutation

REPO = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import json
import torch, triton, triton.language as tl
from gym.worker import op_trace
from gym.worker.interpreter import shim as interpreter_shim

interpreter_shim.install()

RESULTS = {}


def check(label, body):
    try:
        RESULTS[label] = {"ok": True, "value": body()}
    except Exception as exc:
        RESULTS[label] = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}


@triton.jit
def _sum_into_one(x_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.atomic_add(out_ptr + offs * 0, tl.load(x_ptr + offs))


def sums():
    x = torch.tensor([1e8, 1.0, -1e8, 3.5, 1e-3, -7.25, 2.0**-20, 1e7] * 32, dtype=torch.float32)
    xi = torch.arange(256, dtype=torch.int32) * 7919 - 1000
    floats, ints = set(), set()
    for _ in range(16):
        out = torch.zeros(1)
        _sum_into_one[(1,)](x, out, BLOCK=256)
        floats.add(out.view(torch.int32).item())
        outi = torch.zeros(1, dtype=torch.int32)
        _sum_into_one[(1,)](xi, outi, BLOCK=256)
        ints.add(outi.item())
    return {"float_bits": len(floats), "ints": sorted(ints), "int_exact": int(xi.sum())}


check("sums", sums)


@triton.jit
def _tickets(counter_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.atomic_add(counter_ptr + offs * 0, 1))


def tickets():
    runs = []
    for _ in range(4):
        counter = torch.zeros(1, dtype=torch.int32)
        out = torch.full((64,), -1, dtype=torch.int32)
        _tickets[(1,)](counter, out, BLOCK=64)
        runs.append({"slots": out.tolist(), "counter": counter.item()})
    return runs


check("tickets", tickets)


@triton.jit
def _add_reversed(mem_ptr, old_ptr, BLOCK: tl.constexpr):
    # Distinct addresses in decreasing order (the permuted path): each lane must get its own old value.
    offs = tl.arange(0, BLOCK)
    lanes = BLOCK - 1 - offs
    tl.store(old_ptr + offs, tl.atomic_add(mem_ptr + lanes, (offs + 1).to(tl.float32)))


def returned_olds():
    mem = torch.arange(32, dtype=torch.float32) * 10
    old = torch.zeros(32)
    _add_reversed[(1,)](mem, old, BLOCK=32)
    lanes = torch.arange(32)
    expected_old = (31 - lanes).float() * 10
    expected_mem = torch.arange(32).float() * 10 + (32 - torch.arange(32)).float()
    return {"old": bool(torch.equal(old, expected_old)), "mem": bool(torch.equal(mem, expected_mem))}


check("returned_olds", returned_olds)


@triton.jit
def _cas_race(flag_ptr, won_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    old = tl.atomic_cas(flag_ptr + offs * 0, tl.zeros_like(offs), offs + 1)
    tl.store(won_ptr + offs, (old == 0).to(tl.int32))


def cas_winners():
    winners = set()
    wins = set()
    for _ in range(8):
        flag = torch.zeros(1, dtype=torch.int32)
        won = torch.zeros(32, dtype=torch.int32)
        _cas_race[(1,)](flag, won, BLOCK=32)
        winners.add(flag.item())
        wins.add(int(won.sum()))
    return {"winners": len(winners), "wins": sorted(wins)}


check("cas", cas_winners)


@triton.jit
def _shift(x_ptr, out_ptr, n, BLOCK: tl.constexpr, BARRIER: tl.constexpr):
    # Store a block, then every lane reads its left neighbour's slot (another lane's store) and its own.
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(x_ptr + offs))
    if BARRIER:
        tl.debug_barrier()
    left = tl.load(out_ptr + offs - 1, mask=offs > 0, other=-1.0)
    own = tl.load(out_ptr + offs)
    tl.store(out_ptr + BLOCK + offs, left)
    tl.store(out_ptr + 2 * BLOCK + offs, own)


def shifts():
    found = {}
    for barrier in (False, True):
        x = torch.arange(1, 9, dtype=torch.float32)
        out = torch.full((24,), -5.0)
        _shift[(1,)](x, out, 8, BLOCK=8, BARRIER=barrier)
        found[str(barrier)] = {"left": out[8:16].tolist(), "own": out[16:].tolist()}
    return found


check("shift", shifts)


@triton.jit
def _same_value(out_ptr, BLOCK: tl.constexpr):
    # Every lane stores the same value to one address, then reads it back: each reads its own store.
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs * 0, tl.full((BLOCK,), 7.0, tl.float32))
    tl.store(out_ptr + 1 + offs, tl.load(out_ptr + offs * 0))


def same_value():
    out = torch.zeros(17)
    _same_value[(1,)](out, BLOCK=16)
    return out.tolist()


check("same_value", same_value)


@triton.jit
def _write(out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, offs.to(tl.float32) + 1)


@triton.jit
def _read_shifted(src_ptr, out_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(out_ptr + offs, tl.load(src_ptr + (offs + 1) % BLOCK))


def across_launches():
    a = torch.zeros(16)
    b = torch.zeros(16)
    _write[(1,)](a, BLOCK=16)
    _read_shifted[(1,)](a, b, BLOCK=16)
    return b.tolist()


check("across_launches", across_launches)


@triton.jit
def _carry_scan(x_ptr, out_ptr, n, BLOCK: tl.constexpr, BARRIER: tl.constexpr):
    # A prefix sum whose running total is read back from the previous block's last stored element.
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n
        x = tl.load(x_ptr + cols, mask=mask, other=0.0)
        if BARRIER:
            tl.debug_barrier()
        carry = tl.load(out_ptr + start - 1, mask=start > 0, other=0.0)
        tl.store(out_ptr + cols, tl.cumsum(x, axis=0) + carry, mask=mask)


def carry_scans():
    x = torch.ones(100)
    found = {}
    for barrier in (False, True):
        out = torch.zeros(100)
        _carry_scan[(1,)](x, out, 100, BLOCK=16, BARRIER=barrier)
        found[str(barrier)] = out.tolist()
    return found


check("carry", carry_scans)

identities = op_trace.hook_identities()
RESULTS["fingerprinted"] = sorted(name for name in identities if "interpreter" in name)
print(json.dumps(RESULTS))
"""


@pytest.fixture(scope="module")
def results(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("interpreter_lanes")
    path = folder / "lanes_script.py"
    path.write_text(textwrap.dedent(SCRIPT))
    env = {key: value for key, value in os.environ.items() if key not in {"PYTHONPATH", "TRITON_F32_DEFAULT"}}
    env.update(TRITON_INTERPRET="1", PYTHONPATH=str(REPO), TRITON_CACHE_DIR=str(folder / "triton-cache"))
    done = subprocess.run([sys.executable, str(path)], env=env, cwd=folder, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-6000:]
    parsed: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return parsed


def _value(results: dict[str, Any], label: str) -> Any:
    entry = results[label]
    assert entry["ok"], entry["error"]
    return entry["value"]


def test_a_block_float_atomic_sums_in_a_secret_order_and_an_integer_one_stays_exact(results: dict[str, Any]) -> None:
    sums = _value(results, "sums")
    # 256 lanes of large and tiny terms on one address: 16 runs give several different float32 sums.
    assert sums["float_bits"] > 1, sums
    assert sums["ints"] == [sums["int_exact"]], sums


def test_integer_atomic_tickets_come_in_a_fresh_order_each_lane_keeping_its_own(results: dict[str, Any]) -> None:
    runs = _value(results, "tickets")
    for run in runs:
        assert sorted(run["slots"]) == list(range(64)), run
        assert run["counter"] == 64
    assert len({tuple(run["slots"]) for run in runs}) == len(runs)
    assert all(run["slots"] != list(range(64)) for run in runs)


def test_old_values_go_back_to_the_lane_that_got_them(results: dict[str, Any]) -> None:
    assert _value(results, "returned_olds") == {"old": True, "mem": True}


def test_a_block_compare_and_swap_is_won_by_one_lane_not_always_the_first(results: dict[str, Any]) -> None:
    cas = _value(results, "cas")
    assert cas["wins"] == [1], cas
    assert cas["winners"] > 1, cas


def test_reading_another_lanes_store_without_a_barrier_reads_the_old_value(results: dict[str, Any]) -> None:
    shift = _value(results, "shift")
    # Without a barrier: the left neighbour's slot still holds what it held before the store (-5);
    # lane 0 is masked off (other=-1); each lane's own slot reads back its own store.
    assert shift["False"]["left"] == [-1.0] + [-5.0] * 7
    assert shift["False"]["own"] == [float(v) for v in range(1, 9)]
    # After tl.debug_barrier(): every lane sees every store.
    assert shift["True"]["left"] == [-1.0] + [float(v) for v in range(1, 8)]
    assert shift["True"]["own"] == [float(v) for v in range(1, 9)]


def test_honest_reads_are_unchanged(results: dict[str, Any]) -> None:
    assert _value(results, "same_value") == [7.0] * 17
    assert _value(results, "across_launches") == [float(v) for v in [*range(2, 17), 1]]


def test_a_running_total_carried_through_memory_needs_a_barrier(results: dict[str, Any]) -> None:
    carry = _value(results, "carry")
    assert carry["True"] == [float(v) for v in range(1, 101)]
    # Without one, each block starts from the stale 0 its last lane's store replaced.
    assert carry["False"] == [float(v % 16 + 1) for v in range(100)]


def test_the_lane_patches_are_in_the_tamper_fingerprint(results: dict[str, Any]) -> None:
    names = set(results["fingerprinted"])
    for method in ("create_atomic_rmw", "create_atomic_cas", "create_masked_store", "create_masked_load", "create_barrier"):
        assert f"triton.runtime.interpreter.InterpreterBuilder.{method}" in names, sorted(names)


# --- pieces that need no interpreter ------------------------------------------------------


def test_permutation_is_fresh_and_increasing_spots_distinct_addresses() -> None:
    drawn = [tuple(permutation(50)) for _ in range(4)]
    assert all(sorted(order) == list(range(50)) for order in drawn)
    assert len(set(drawn)) == 4
    assert increasing(np.array([8, 16, 24], dtype=np.uint64))
    assert not increasing(np.array([8, 8, 24], dtype=np.uint64))
    assert not increasing(np.array([16, 8], dtype=np.uint64))
    assert increasing(np.array([4], dtype=np.uint64))


def test_store_log_returns_the_value_before_the_first_store_to_other_lanes_only() -> None:
    log = StoreLog()
    addresses = np.array([100, 104, 108], dtype=np.uint64)
    log.record(addresses, None, np.array([1.0, 2.0, 3.0], dtype=np.float32).view(np.uint32), 100, 111)
    # A second store to 104 by lane 0: the stale value stays the one before the first store.
    log.record(np.array([104], dtype=np.uint64), np.array([0]), np.array([9.0], dtype=np.float32).view(np.uint32), 104, 107)
    assert (log.low, log.high) == (100, 111)
    found = log.stale(np.array([104, 108, 112, 100], dtype=np.uint64), np.array([2, 2, 0, 1]), 4)
    assert found is not None
    positions, bits = found
    assert positions.tolist() == [0, 3]
    assert bits.view(np.float32).tolist() == [2.0, 1.0]
    # Lanes reading back what they stored, and loads of another width, read memory as it is.
    assert log.stale(np.array([100, 104, 108], dtype=np.uint64), np.arange(3), 4) is None
    assert log.stale(np.array([104], dtype=np.uint64), np.array([2]), 8) is None
    log.clear()
    assert log.stale(np.array([104], dtype=np.uint64), np.array([2]), 4) is None


def test_contiguous_bits_reads_consecutive_elements_only() -> None:
    held = np.array([1.5, -2.0, 3.25, 7.0], dtype=np.float32)
    base = held.ctypes.data
    consecutive = np.array([base + 4, base + 8, base + 12], dtype=np.uint64)
    bits = contiguous_bits(consecutive, 4)
    assert bits is not None
    assert bits.view(np.float32).tolist() == [-2.0, 3.25, 7.0]
    assert contiguous_bits(np.array([base, base + 8], dtype=np.uint64), 4) is None
    assert contiguous_bits(np.array([base + 4, base], dtype=np.uint64), 4) is None


# --- grades -------------------------------------------------------------------------------

CARRY_WITH_BARRIER = """
import torch
import triton
import triton.language as tl


@triton.jit
def _cumsum_rows(x_ptr, out_ptr, n_cols, stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    base = out_ptr + row * stride
    for start in range(0, n_cols, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n_cols
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
        tl.debug_barrier()  # the previous block's stores are visible to every lane from here
        carry = tl.load(base + start - 1, mask=start > 0, other=0.0).to(tl.float32)
        tl.store(base + cols, (tl.cumsum(x, axis=0) + carry).to(out_ptr.dtype.element_ty), mask=mask)


def kernel(x):
    x = x.contiguous()
    m, n = x.shape
    out = torch.zeros_like(x)
    _cumsum_rows[(m,)](x, out, n, x.stride(0), BLOCK=512)
    return out
"""


def test_a_running_total_read_back_after_a_barrier_passes_a_grade(write_submission: Any) -> None:
    result = grade(find_task("l1/cumsum"), write_submission(CARRY_WITH_BARRIER), GradeOptions(timing_reps=1), secret=17)
    assert result.status == Status.passed, result.feedback


def test_the_shipped_integer_atomic_histogram_still_passes() -> None:
    task = find_task("l1/histogram")
    result = grade(task, task.solution_path, GradeOptions(timing_reps=1), secret=23)
    assert result.status == Status.passed, result.feedback


# --- cost (opt-in: KGYM_BENCH_LANES=1 .venv/bin/pytest -q -s tests/worker/test_interpreter_lanes.py -k cost) ---

BENCH = r"""
import importlib.util, os, sys, time
import torch
from gym.worker.interpreter import lanes, shim

shim.install()
from gym.tasks.inputs import generate_inputs
from gym.tasks.loader import discover
from gym.tasks.references import call_args

tracking = lanes.begin_program


def untracked():  # the same programs with no store log: stores and loads pass straight through
    saved = lanes.STATE.log
    lanes.STATE.log = None
    return saved


only = [name for name in os.environ.get("KGYM_BENCH_TASKS", "").split(",") if name]
total = {"off": 0.0, "on": 0.0}
for task in discover().tasks:
    if (only and task.id not in only) or not task.has_solution:
        continue
    spec = importlib.util.spec_from_file_location("solution_" + task.id.replace("/", "_"), task.solution_path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    dtype = getattr(torch, task.spec.dtypes[0])
    calls = [call_args(generate_inputs(task, shape, dtype, 1234, torch.device("cpu")), task.spec.params) for shape in [*task.spec.shapes.public, *task.spec.shapes.hidden]]
    for args in calls:
        module.kernel(*args)
    best = {"off": 1e9, "on": 1e9}
    for _ in range(4):
        for mode in ("off", "on"):
            lanes.begin_program = tracking if mode == "on" else untracked
            start = time.perf_counter()
            for args in calls:
                module.kernel(*args)
            best[mode] = min(best[mode], time.perf_counter() - start)
    for mode in total:
        total[mode] += best[mode]
    print(f"{task.id:32s} untracked {best['off'] * 1e3:8.1f} ms  tracked {best['on'] * 1e3:8.1f} ms  x{best['on'] / best['off']:.3f}", flush=True)
print(f"TOTAL untracked {total['off']:.2f} s  tracked {total['on']:.2f} s  x{total['on'] / total['off']:.3f}")
"""


@pytest.mark.skipif(os.environ.get("KGYM_BENCH_LANES") != "1", reason="a benchmark: KGYM_BENCH_LANES=1 (KGYM_BENCH_TASKS=l1/softmax,... to pick tasks)")
def test_cost_of_the_store_log_on_the_shipped_solutions(tmp_path: Path) -> None:
    """Each shipped solution on its public and hidden shapes, store log on and off alternately in one process (best of 4)."""
    path = tmp_path / "bench_lanes.py"
    path.write_text(BENCH)
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(TRITON_INTERPRET="1", PYTHONPATH=str(REPO), TRITON_CACHE_DIR=str(tmp_path / "triton-cache"))
    done = subprocess.run([sys.executable, str(path)], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-6000:]
    print(done.stdout)
