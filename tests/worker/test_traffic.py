"""gym.worker.traffic on real jit kernels under the interpreter, against hand-computed figures.

The kernels run in one fresh interpreter (TRITON_INTERPRET is read when Triton is imported), each
launch inside a TrafficCounter whose buffers are the tensors' storages, as the witness's counted
replay registers them; the script prints every count as JSON.
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

from gym.worker.traffic import TrafficCounter, named_buffers, op_cost

REPO = Path(__file__).resolve().parents[2]

SCRIPT = """
import json
import torch
import triton
import triton.language as tl
from gym.worker.traffic import TrafficCounter, named_buffers


@triton.jit
def copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def softmax_two_pass(x_ptr, out_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    # Pass 1 reads the row for its max and sum; pass 2 reads it again to normalise.
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=-float("inf"))
    top = tl.max(x, axis=0)
    total = tl.sum(tl.exp(x - top), axis=0)
    again = tl.load(x_ptr + row * cols + offs, mask=mask, other=-float("inf"))
    tl.store(out_ptr + row * cols + offs, tl.exp(again - top) / total, mask=mask)


@triton.jit
def naive_matmul(a_ptr, b_ptr, c_ptr, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        rk = k + tl.arange(0, BK)
        a = tl.load(a_ptr + rm[:, None] * K + rk[None, :])
        b = tl.load(b_ptr + rk[:, None] * N + rn[None, :])
        acc += tl.dot(a, b)
    tl.store(c_ptr + rm[:, None] * N + rn[None, :], acc)


@triton.jit
def atomic_sum(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.atomic_add(out_ptr + offs % 4, tl.load(x_ptr + offs, mask=mask), mask=mask)


@triton.jit
def broadcast_scale(x_ptr, s_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    scale = tl.load(s_ptr + offs * 0, mask=mask)  # every lane reads the same element
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * scale, mask=mask)


@triton.jit
def descriptor_copy(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # Tensor descriptors: the interpreter loads them with keyword arguments (cache_modifier=...).
    src = tl.make_tensor_descriptor(x_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
    dst = tl.make_tensor_descriptor(out_ptr, shape=[n], strides=[1], block_shape=[BLOCK])
    offset = tl.program_id(0) * BLOCK
    dst.store([offset], src.load([offset]))


def counted(launches, **tensors):
    counter = TrafficCounter(named_buffers((name, tensor.untyped_storage()) for name, tensor in tensors.items()))
    with counter:
        for kernel, launch in launches:
            counter.begin(kernel)
            launch()
    return counter.counts().model_dump()


RESULTS = {}
torch.manual_seed(0)
for dtype in (torch.float32, torch.float16):
    x = torch.randn(256, dtype=dtype)
    out = torch.empty_like(x)
    RESULTS[f"copy {dtype}"] = counted([("copy", lambda: copy[(4,)](x, out, 256, BLOCK=64))], x=x, out=out)

x = torch.randn(1000)
out = torch.empty_like(x)
RESULTS["masked copy"] = counted([("copy", lambda: copy[(4,)](x, out, 1000, BLOCK=256))], x=x, out=out)
RESULTS["two copies"] = counted(
    [("copy", lambda: copy[(4,)](x, out, 1000, BLOCK=256)), ("copy", lambda: copy[(2,)](out, x, 1000, BLOCK=512))], x=x, out=out
)

rows = torch.randn(4, 100)
soft = torch.empty_like(rows)
RESULTS["softmax"] = counted([("softmax_two_pass", lambda: softmax_two_pass[(4,)](rows, soft, 100, BLOCK=128))], x=rows, out=soft)

a, b = torch.randn(64, 64), torch.randn(64, 64)
c = torch.empty(64, 64)
RESULTS["matmul"] = counted([("naive_matmul", lambda: naive_matmul[(4, 4)](a, b, c, 64, 64, 64, BM=16, BN=16, BK=16))], a=a, b=b, c=c)

values = torch.randn(100)
sums = torch.zeros(4)
RESULTS["atomic"] = counted([("atomic_sum", lambda: atomic_sum[(2,)](values, sums, 100, BLOCK=64))], x=values, out=sums)

scale = torch.randn(1)
scaled = torch.empty_like(values)
RESULTS["broadcast"] = counted(
    [("broadcast_scale", lambda: broadcast_scale[(2,)](values, scale, scaled, 100, BLOCK=64))], x=values, s=scale, out=scaled
)
x = torch.randn(256)
out = torch.empty_like(x)
RESULTS["descriptor copy"] = counted([("descriptor_copy", lambda: descriptor_copy[(4,)](x, out, 256, BLOCK=64))], x=x, out=out)
print(json.dumps(RESULTS))
"""


@pytest.fixture(scope="module")
def counts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("traffic")
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(TRITON_INTERPRET="1", TRITON_CACHE_DIR=str(folder / "cache"), PYTHONPATH=str(REPO))
    path = folder / "script.py"
    path.write_text(textwrap.dedent(SCRIPT))
    done = subprocess.run([sys.executable, str(path)], env=env, cwd=folder, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-6000:]
    results: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return results


def _buffers(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {row["name"]: row for row in result["buffers"]}


@pytest.mark.parametrize(("dtype", "size"), [("torch.float32", 4), ("torch.float16", 2)])
def test_a_copy_moves_2n_elements_of_its_dtype(counts: dict[str, Any], dtype: str, size: int) -> None:
    result = counts[f"copy {dtype}"]
    assert (result["bytes_read"], result["bytes_written"]) == (256 * size, 256 * size)
    assert result["launch_total"] == 1 and result["programs"] == 4 and result["flops"] == 0
    assert result["unattributed_bytes"] == 0
    buffers = _buffers(result)
    assert (buffers["x"]["bytes_read"], buffers["x"]["bytes_written"]) == (256 * size, 0)
    assert (buffers["out"]["bytes_read"], buffers["out"]["bytes_written"]) == (0, 256 * size)


def test_tensor_descriptor_loads_and_stores_are_counted(counts: dict[str, Any]) -> None:
    result = counts["descriptor copy"]
    assert (result["bytes_read"], result["bytes_written"]) == (256 * 4, 256 * 4)
    buffers = _buffers(result)
    assert (buffers["x"]["bytes_read"], buffers["out"]["bytes_written"]) == (256 * 4, 256 * 4)


def test_masked_lanes_move_nothing(counts: dict[str, Any]) -> None:
    # 4 programs of 256 lanes cover 1024; only the 1000 unmasked lanes load and store.
    result = counts["masked copy"]
    assert (result["bytes_read"], result["bytes_written"]) == (1000 * 4, 1000 * 4)


def test_each_launch_is_a_row_of_its_own(counts: dict[str, Any]) -> None:
    result = counts["two copies"]
    assert result["launch_total"] == 2 and result["programs"] == 4 + 2
    assert [(row["kernel"], row["programs"], row["bytes_read"], row["bytes_written"]) for row in result["launches"]] == [
        ("copy", 4, 4000, 4000),
        ("copy", 2, 4000, 4000),
    ]
    # x: read by the first launch, written by the second; out the other way round.
    buffers = _buffers(result)
    assert (buffers["x"]["bytes_read"], buffers["x"]["bytes_written"]) == (4000, 4000)
    assert (buffers["out"]["bytes_read"], buffers["out"]["bytes_written"]) == (4000, 4000)


def test_a_softmax_that_reads_its_row_twice_moves_3n(counts: dict[str, Any]) -> None:
    result = counts["softmax"]
    n = 4 * 100
    assert (result["bytes_read"], result["bytes_written"]) == (2 * n * 4, n * 4)
    assert _buffers(result)["x"]["bytes_read"] == 2 * _buffers(result)["x"]["bytes"]
    # Per row of 128 lanes: sub + exp (pass 1), sub + exp + div (pass 2) = 5 x 128, plus
    # 127 for the max and 127 for the sum: 894 per row.
    assert result["flops"] == 4 * (5 * 128 + 2 * 127)


def test_a_naive_matmul_rereads_its_tiles(counts: dict[str, Any]) -> None:
    result = counts["matmul"]
    # 16 programs x 4 k-steps, each loading a 16x16 tile of a and of b: every element of a
    # and of b is read 4 times (once per program column / row): 2 x 4 x 64 x 64 x 4 bytes.
    assert result["bytes_read"] == 2 * 4 * 64 * 64 * 4 == 131072
    assert result["bytes_written"] == 64 * 64 * 4
    buffers = _buffers(result)
    assert buffers["a"]["bytes_read"] == buffers["b"]["bytes_read"] == 4 * 64 * 64 * 4
    # tl.dot: 2 x 16 x 16 x 16 per step, 64 steps; acc += one add per lane of the 16x16 tile.
    assert result["flops"] == 64 * (2 * 16 * 16 * 16 + 16 * 16) == 540672
    assert result["programs"] == 16


def test_an_atomic_reads_and_writes_each_unmasked_lane(counts: dict[str, Any]) -> None:
    result = counts["atomic"]
    # 100 lanes load x (400 bytes); each of the 100 unmasked atomic lanes reads and writes its
    # 4 bytes, even where lanes share an address (atomics serialise: none is coalesced away).
    buffers = _buffers(result)
    assert buffers["x"]["bytes_read"] == 400
    assert (buffers["out"]["bytes_read"], buffers["out"]["bytes_written"]) == (400, 400)
    assert (result["bytes_read"], result["bytes_written"]) == (800, 400)


def test_lanes_of_one_load_on_one_address_move_it_once(counts: dict[str, Any]) -> None:
    result = counts["broadcast"]
    buffers = _buffers(result)
    # Two programs each load the one scale element once: 2 x 4 bytes, not 100 x 4.
    assert buffers["s"]["bytes_read"] == 2 * 4
    assert buffers["x"]["bytes_read"] == 100 * 4 and buffers["out"]["bytes_written"] == 100 * 4


def test_op_cost_of_torch_ops() -> None:
    a, b = torch.randn(8, 16), torch.randn(16, 4)
    out = torch.mm(a, b)
    # Reads both operands, writes the product; 2 M N K FLOPs from torch's own flop counter.
    assert op_cost(torch.ops.aten.mm.default, (a, b), {}, out) == ((8 * 16 + 16 * 4) * 4, 8 * 4 * 4, 2 * 8 * 4 * 16)
    x, y = torch.randn(100), torch.randn(100)
    assert op_cost(torch.ops.aten.add.Tensor, (x, y), {}, x + y) == (800, 400, 100)
    # The same tensor passed twice is read once.
    assert op_cost(torch.ops.aten.mul.Tensor, (x, x), {}, x * x) == (400, 400, 100)
    # A view moves nothing.
    assert op_cost(torch.ops.aten.view.default, (x, [10, 10]), {}, x.view(10, 10)) is None


def test_torch_op_rows_stay_out_of_the_kernel_totals() -> None:
    counter = TrafficCounter()
    a, b = torch.randn(8, 16), torch.randn(16, 4)
    counter.torch_op(torch.ops.aten.mm.default, (a, b), {}, torch.mm(a, b))
    counts = counter.counts(torch_ops=1)
    assert counts.launch_total == 0 and counts.bytes_read == 0 and counts.flops == 0 and counts.torch_ops == 1
    (row,) = counts.launches
    assert row.torch_op and row.kernel == "aten.mm" and row.flops == 2 * 8 * 4 * 16


def test_buffers_are_named_once_per_storage() -> None:
    x = torch.randn(10)
    view = x[2:]
    buffers = named_buffers([("x", x.untyped_storage()), ("alias", view.untyped_storage()), ("y", torch.randn(3).untyped_storage())])
    assert [(name, size) for name, _, size in buffers] == [("x", 40), ("y", 12)]
