"""The audit hooks judge by who asked: what the submission itself causes (however it
spells it) is refused and recorded, what torch, Triton or the standard library do
on their own behalf is not. Real grades in the real sandbox, static audit off
where the point is the runtime witness."""

from __future__ import annotations

from pathlib import Path

import pytest

from gym.grading.grader import grade
from gym.grading.options import GradeOptions
from gym.schema.result import GradeResult, Status
from gym.tasks.loader import find_task

KERNEL = """
import torch
import triton
import triton.language as tl


@triton.jit
def _add(x_ptr, y_ptr, o_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = offs < n
    tl.store(o_ptr + offs, tl.load(x_ptr + offs, mask=m) + tl.load(y_ptr + offs, mask=m), mask=m)


def kernel(x, y):
    PROBE
    out = torch.empty_like(x)
    _add[(triton.cdiv(x.numel(), 1024),)](x, y, out, x.numel(), BLOCK=1024)
    return out
"""


def graded(tmp_path: Path, header: str, probe: str = "pass", audit: bool = False) -> GradeResult:
    path = tmp_path / "submission.py"
    path.write_text(header + KERNEL.replace("PROBE", probe))
    return grade(find_task("l1/vector_add"), path, GradeOptions(sandbox="bwrap", include_hidden=False, timing_reps=0, audit=audit), secret=1)


@pytest.mark.parametrize(
    ("header", "probe", "flag"),
    [
        # An already-loaded module imported by a computed name: the import guard, not the audit event.
        ("import importlib\nmod = importlib.import_module('sock' + 'et')\n", "pass", "audit_hook:network"),
        # A builtin reached by a computed name; catching the error changes nothing.
        (
            "b = __builtins__\nopener = b['op' + 'en'] if isinstance(b, dict) else getattr(b, 'op' + 'en')\n",
            "try:\n        opener('/etc/hostname').read()\n    except PermissionError:\n        pass",
            "audit_hook:file_io",
        ),
        # Code run by the standard library on the submission's behalf (an eval'd annotation).
        (
            "import typing\ndef f(a: \"__import__('os').system('true')\"): pass\n",
            "typing.get_type_hints(f)",
            "audit_hook:processes",
        ),
        # A statement the static audit would refuse, proven at run time alone.
        ("import ctypes\n", "pass", "audit_hook:raw_memory"),
        ("", "exec('y = 1')", "audit_hook:dynamic_code"),
        ("import torch\n", "f = getattr(torch, 'com' + 'pile')(lambda a: a)", "audit_hook:torch_api"),
    ],
)
def test_what_the_submission_asks_for_is_refused_and_recorded(tmp_path: Path, header: str, probe: str, flag: str) -> None:
    result = graded(tmp_path, header, probe)
    assert result.status == Status.rejected, result.feedback
    assert flag in result.integrity_flags, result.integrity_flags
    assert "submission.py:" in (result.error or "")


def test_a_refused_import_at_the_top_is_rejected_not_a_compile_error(tmp_path: Path) -> None:
    result = graded(tmp_path, "import importlib\nimportlib.import_module('subprocess')\n")
    assert result.status == Status.rejected and "audit_hook:processes" in result.integrity_flags


def test_the_standard_library_working_for_an_honest_file_is_not_refused(tmp_path: Path) -> None:
    header = (
        "import dataclasses, collections, typing, warnings, functools, itertools, operator\n"
        "@dataclasses.dataclass(frozen=True)\nclass Config:\n    block: int = 1024\n"
        "Pair = collections.namedtuple('Pair', 'a b')\nT = typing.TypeVar('T')\n"
        "CONFIGS = [Config(b) for b, _ in itertools.product([1024], [4])]\n"
        "@functools.lru_cache(maxsize=None)\ndef size(n: int) -> int:\n    return functools.reduce(operator.mul, (n, 1), 1)\n"
    )
    result = graded(tmp_path, header, "warnings.warn('just a warning')", audit=True)
    assert result.status == Status.passed, result.feedback


def test_a_target_install_folder_on_the_path_is_installed_code_not_the_submission(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """`pip install --target DIR` on PYTHONPATH (the GPU check's private folder) holds installed
    packages: their frames are transparent like site-packages'. A plain folder is not, and the
    submission's own folder never is, metadata or not."""
    from gym.worker import audit_hooks

    target = tmp_path / "private"
    (target / "helper-1.0.dist-info").mkdir(parents=True)
    (target / "helper.py").write_text("")
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "other.py").write_text("")
    job = tmp_path / "job"
    (job / "fake-1.0.dist-info").mkdir(parents=True)
    (job / "submission.py").write_text("")
    (job / "sibling.py").write_text("")
    monkeypatch.setattr("sys.path", [str(target), str(plain), str(job), *__import__("sys").path])
    monkeypatch.setattr(audit_hooks._Setup, "submission", str((job / "submission.py").resolve()))
    transparent, trusted = audit_hooks._roots()
    monkeypatch.setattr(audit_hooks._Setup, "transparent", transparent)
    monkeypatch.setattr(audit_hooks._Setup, "trusted", trusted)
    monkeypatch.setattr(audit_hooks, "_KINDS", {})
    assert audit_hooks._kind(str(target / "helper.py")) == "transparent"
    assert audit_hooks._kind(str(plain / "other.py")) == "culprit"
    assert audit_hooks._kind(str(job / "sibling.py")) == "culprit"
    assert audit_hooks._kind(str(job / "submission.py")) == "culprit"
