"""The host-wide GPU lock is named after the physical GPU, however this process numbers it."""

from __future__ import annotations

import pytest

from gym.devices.lock import lock_file


def test_the_lock_of_a_gpu_is_the_same_under_any_cuda_visible_devices(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("KGYM_LOCK_DIR", str(tmp_path))
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    unrestricted = lock_file(2)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    assert lock_file(0) == unrestricted == tmp_path / "kgym-gpu-2.lock"
    assert lock_file(1) == tmp_path / "kgym-gpu-3.lock"


def test_a_gpu_named_by_uuid_gets_a_lock_of_its_own(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    monkeypatch.setenv("KGYM_LOCK_DIR", str(tmp_path))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "GPU-1234-abcd,MIG-ab/cd")
    assert lock_file(0) == tmp_path / "kgym-gpu-GPU-1234-abcd.lock"
    assert lock_file(1).parent == tmp_path and "/" not in lock_file(1).name
