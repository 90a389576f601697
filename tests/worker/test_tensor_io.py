"""Tensors cross the worker boundary as raw bytes plus a description that is
checked claim by claim before anything is read."""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from gym.worker.dtypes import DTYPES
from gym.worker.protocol import TensorFile
from gym.worker.tensor_io import TensorReadError, read_tensor, write_tensor


def sample(dtype: torch.dtype, shape: tuple[int, ...], seed: int = 0) -> torch.Tensor:
    """Values that use the dtype's range (and NaN, Inf, -0.0 for floats)."""
    generator = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=generator) > 0.5
    if dtype.is_floating_point:
        values = torch.randn(shape, generator=generator, dtype=torch.float64) * 100
        flat = values.reshape(-1)
        for position, special in enumerate([math.nan, math.inf, -math.inf, -0.0]):
            if position < flat.numel():
                flat[position] = special
        return values.to(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, shape, generator=generator, dtype=torch.int64).to(dtype)


def raw_bytes(tensor: torch.Tensor) -> bytes:
    flat = tensor.contiguous().reshape(-1)
    return flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b""


def assert_same(got: torch.Tensor, want: torch.Tensor) -> None:
    assert got.dtype == want.dtype
    assert got.shape == want.shape
    assert raw_bytes(got) == raw_bytes(want)


@pytest.mark.parametrize("name", sorted(DTYPES))
@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (7,), (2, 3, 4)])
def test_round_trip_every_dtype(tmp_path: Path, name: str, shape: tuple[int, ...]) -> None:
    dtype = DTYPES[name]
    tensor = sample(dtype, shape)
    meta = write_tensor(tmp_path, "t.bin", tensor)
    itemsize = torch.empty((), dtype=dtype).element_size()
    assert meta.dtype == name and meta.shape == list(shape)
    assert meta.nbytes == math.prod(shape) * itemsize == (tmp_path / "t.bin").stat().st_size
    back = read_tensor(tmp_path, meta)
    assert_same(back, tensor)
    # The description survives serialisation, as it does crossing the boundary.
    assert_same(read_tensor(tmp_path, TensorFile.model_validate_json(meta.model_dump_json())), tensor)


def test_round_trip_non_contiguous(tmp_path: Path) -> None:
    tensor = sample(torch.float32, (4, 6)).t()[1:, ::2]
    assert not tensor.is_contiguous()
    back = read_tensor(tmp_path, write_tensor(tmp_path, "t.bin", tensor))
    assert_same(back, tensor.contiguous())
    assert back.is_contiguous()


def test_read_tensor_owns_its_memory(tmp_path: Path) -> None:
    tensor = sample(torch.int32, (5,))
    meta = write_tensor(tmp_path, "t.bin", tensor)
    back = read_tensor(tmp_path, meta)
    (tmp_path / "t.bin").write_bytes(b"\0" * meta.nbytes)
    assert_same(back, tensor)
    back += 1  # writable


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(sorted(DTYPES)),
    shape=st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple),
    seed=st.integers(0, 1000),
)
def test_round_trip_property(tmp_path: Path, name: str, shape: tuple[int, ...], seed: int) -> None:
    tensor = sample(DTYPES[name], shape, seed)
    assert_same(read_tensor(tmp_path, write_tensor(tmp_path, "p.bin", tensor)), tensor)


# --------------------------------------------------------------------------- rejections


@pytest.fixture
def written(tmp_path: Path) -> TensorFile:
    return write_tensor(tmp_path, "t.bin", sample(torch.float32, (2, 3)))


def test_rejects_nbytes_not_matching_shape(tmp_path: Path, written: TensorFile) -> None:
    for nbytes in (written.nbytes - 4, written.nbytes + 4, 0):
        with pytest.raises(TensorReadError, match="needs 24 bytes"):
            read_tensor(tmp_path, written.model_copy(update={"nbytes": nbytes}))
    # A shape that disagrees with nbytes, though the file matches nbytes.
    with pytest.raises(TensorReadError, match="needs"):
        read_tensor(tmp_path, written.model_copy(update={"shape": [3, 3]}))
    # The same bytes claimed as another dtype of a different width.
    with pytest.raises(TensorReadError, match="needs"):
        read_tensor(tmp_path, written.model_copy(update={"dtype": "float16"}))


@pytest.mark.parametrize("change", [b"\0\0\0\0", -4])
def test_rejects_file_size_not_matching(tmp_path: Path, written: TensorFile, change: bytes | int) -> None:
    path = tmp_path / "t.bin"
    data = path.read_bytes()
    path.write_bytes(data + change if isinstance(change, bytes) else data[:change])
    with pytest.raises(TensorReadError, match="file holds"):
        read_tensor(tmp_path, written)


def test_rejects_missing_file(tmp_path: Path, written: TensorFile) -> None:
    (tmp_path / "t.bin").unlink()
    with pytest.raises(TensorReadError, match="missing or not a regular file"):
        read_tensor(tmp_path, written)


def test_rejects_zero_byte_tensor_without_its_file(tmp_path: Path) -> None:
    meta = TensorFile(file="empty.bin", dtype="float32", shape=[0, 3], nbytes=0)
    with pytest.raises(TensorReadError, match="missing"):
        read_tensor(tmp_path, meta)


def test_rejects_symlinked_file(tmp_path: Path, written: TensorFile) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "t.bin").rename(elsewhere / "real.bin")
    os.symlink(elsewhere / "real.bin", tmp_path / "t.bin")
    assert (tmp_path / "t.bin").is_file()  # it would read fine if followed
    with pytest.raises(TensorReadError, match="not a regular file"):
        read_tensor(tmp_path, written)


def test_rejects_a_directory(tmp_path: Path) -> None:
    (tmp_path / "d.bin").mkdir()
    with pytest.raises(TensorReadError, match="not a regular file"):
        read_tensor(tmp_path, TensorFile(file="d.bin", dtype="uint8", shape=[0], nbytes=0))


@pytest.mark.parametrize("dtype", ["complex64", "float8", "torch.float32", "", "object"])
def test_rejects_unknown_dtype(tmp_path: Path, written: TensorFile, dtype: str) -> None:
    with pytest.raises(TensorReadError, match="unknown dtype"):
        read_tensor(tmp_path, written.model_copy(update={"dtype": dtype}))


@pytest.mark.parametrize("shape", [[-1, 24], [-2, -3], [-6, -1]])
def test_rejects_negative_shape(tmp_path: Path, written: TensorFile, shape: list[int]) -> None:
    # Some of these multiply out to the right element count; they must still be refused.
    with pytest.raises(TensorReadError, match="invalid shape"):
        read_tensor(tmp_path, written.model_copy(update={"shape": shape}))


def test_rejects_too_many_dimensions(tmp_path: Path) -> None:
    meta = write_tensor(tmp_path, "one.bin", torch.ones(1, dtype=torch.uint8))
    with pytest.raises(TensorReadError, match="invalid shape"):
        read_tensor(tmp_path, meta.model_copy(update={"shape": [1] * 17}))
    assert read_tensor(tmp_path, meta.model_copy(update={"shape": [1] * 16})).shape == (1,) * 16


def test_rejects_over_the_size_limit(tmp_path: Path, written: TensorFile) -> None:
    assert read_tensor(tmp_path, written, max_bytes=24).shape == (2, 3)
    with pytest.raises(TensorReadError, match="exceeds the limit of 23"):
        read_tensor(tmp_path, written, max_bytes=23)


def test_rejects_huge_claims_before_touching_the_file(tmp_path: Path) -> None:
    # 2**40 float32 elements: refused on the description alone (no such file exists).
    meta = TensorFile(file="huge.bin", dtype="float32", shape=[1 << 20, 1 << 20], nbytes=4 << 40)
    with pytest.raises(TensorReadError, match="exceeds the limit"):
        read_tensor(tmp_path, meta)


@pytest.mark.parametrize("file", ["../t.bin", "a/b.bin", "", "x" * 101, "t bin"])
def test_file_names_cannot_leave_the_folder(file: str) -> None:
    with pytest.raises(ValidationError):
        TensorFile(file=file, dtype="float32", shape=[1], nbytes=4)
