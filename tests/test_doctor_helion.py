"""`kgym doctor`'s helion line: Helion here and the same version in the sandbox runtime, or why not."""

from __future__ import annotations

import importlib.metadata

import pytest

from gym import doctor


def test_the_helion_line_needs_the_same_version_in_the_runtime(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor, "_version", lambda package: "1.5.1" if package == "helion" else "x")
    assert doctor.helion_check(runtime_version="1.5.1").ok is True
    mismatch = doctor.helion_check(runtime_version="not installed")
    assert mismatch.ok is False and "sandbox/build_runtime.sh" in mismatch.detail


def test_without_helion_the_line_is_informational(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(doctor, "_version", lambda package: "not installed")
    line = doctor.helion_check(runtime_version="1.5.1")
    assert line.ok is None and "pip install 'kernel-gym[helion]'" in line.detail


def test_the_runtime_is_asked_for_real() -> None:
    # The runtime of this machine (make venv builds it with helion): its answer is a version or "not installed".
    answer = doctor._runtime_version("helion")
    assert answer == "not installed" or answer.split(".")[0].isdigit() or answer.startswith("unknown")
    if answer[0].isdigit():
        assert answer == importlib.metadata.version("helion")
