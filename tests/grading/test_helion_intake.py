"""Helion submissions on the trusted side, without a sandbox: the DSL read from the source, Helion's
generated Triton through the kernels-file rules (its library imports kept, anything else refused as
for hand-written Triton), and the staging of launched modules' sources for the witness."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from gym.errors import KernelSourceError
from gym.grading.intake.dsl import submission_dsl
from gym.grading.intake.kernel_source import extract_kernels
from gym.grading.judging.launched_sources import stage
from gym.worker.launched_modules import LAUNCHED_DIR, MAX_BYTES

GENERATED = (Path(__file__).parent / "fixtures" / "helion_generated_softmax.txt").read_text()


@pytest.mark.parametrize(
    ("source", "dsl"),
    [
        ("import helion\n", "helion"),
        ("import helion.language as hl\n", "helion"),
        ("from helion import Config\n", "helion"),
        ("import torch\ndef kernel(x):\n    import helion\n", "helion"),
        ("import triton\nimport helionx\n", "triton"),
        ("from .helion import x\n", "triton"),
        ("# import helion\nimport triton\n", "triton"),
        ("def broken(:\n", "triton"),
    ],
)
def test_the_dsl_is_read_from_the_imports(source: str, dsl: str) -> None:
    assert submission_dsl(source) == dsl


def test_generated_triton_keeps_its_library_imports_under_their_real_names() -> None:
    kernels = extract_kernels(GENERATED)
    assert kernels.kernels == ["_helion_softmax_rows"]
    lines = kernels.text.splitlines()
    assert "import triton.language.extra.libdevice as libdevice" in lines
    assert "import helion.runtime.triton.helpers as helion_triton_helpers" in lines
    # The host function, torch and Helion's launcher are not kept; every kept line is where it was.
    assert "default_launcher" not in kernels.text and "import torch" not in kernels.text
    assert "def softmax_rows" not in kernels.text
    source_lines = GENERATED.splitlines()
    start = next(index for index, line in enumerate(source_lines) if line.startswith("def _helion_softmax_rows"))
    assert lines[start] == source_lines[start]


def test_the_kept_file_loads_and_its_jit_function_is_the_generated_one(tmp_path: Path) -> None:
    from gym.worker.tape import code_identity
    from gym.worker.tape_replay import kernel_named, load_kernels

    (tmp_path / "generated.py").write_text(GENERATED)
    (tmp_path / "kept.py").write_text(extract_kernels(GENERATED).text)
    generated = load_kernels(tmp_path / "generated.py", "kgym_test_generated", interpret=True)
    kept = load_kernels(tmp_path / "kept.py", "kgym_test_kept", interpret=True)
    identity = code_identity(generated._helion_softmax_rows.fn)
    assert kernel_named(kept, "_helion_softmax_rows", identity) is kept._helion_softmax_rows


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("    x = helion_triton_helpers.torch.ones(4)", "`helion_triton_helpers.torch` is not part of the Triton language"),
        ("    x = open('/etc/passwd')", "`open` is not part of the Triton language"),
        ("    x = libdevice.__dict__", "`__dict__` is not part of the Triton language"),
    ],
)
def test_generated_triton_is_held_to_the_rules_of_hand_written_triton(line: str, message: str) -> None:
    tampered = GENERATED.replace("    v_0 = load - amax", line, 1)
    with pytest.raises(KernelSourceError, match=message):
        extract_kernels(tampered)


def test_only_library_modules_are_imported_from_outside_triton() -> None:
    # A name of those modules that is not a module of jit helpers is dropped (the witness never imports it).
    source = "from torch._inductor.runtime.triton_compat import libdevice, GPUTarget\nfrom helion.runtime import default_launcher\n"
    kept = extract_kernels(source).text
    assert kept.splitlines()[0] == "import triton.language.extra.libdevice as libdevice"
    assert "GPUTarget" not in kept and "default_launcher" not in kept


def _launched(out_dir: Path, files: dict[str, str]) -> None:
    folder = out_dir / LAUNCHED_DIR
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text)


def test_stage_vets_each_launched_module_and_stages_what_the_rules_keep(tmp_path: Path) -> None:
    out_dir, replay = tmp_path / "out", tmp_path / "replay"
    replay.mkdir()
    broken = GENERATED.replace("    v_0 = load - amax", "    v_0 = eval('load')", 1)
    _launched(
        out_dir,
        {
            "0123456789abcdef.py": GENERATED,
            "fedcba9876543210.py": broken,
            "not-a-key.py": GENERATED,
            "0123456789abcde0.txt": GENERATED,
            "aaaaaaaaaaaaaaaa.py": "def (:\n",
        },
    )
    staged = stage(out_dir, replay)
    assert staged.staged == ["0123456789abcdef"]
    assert sorted(entry.split(":")[0] for entry in staged.refused) == ["aaaaaaaaaaaaaaaa", "fedcba9876543210"]
    assert any("`eval` is not part of the Triton language" in entry for entry in staged.refused)
    assert sorted(path.name for path in (replay / LAUNCHED_DIR).iterdir()) == ["0123456789abcdef.py"]
    assert (replay / LAUNCHED_DIR / "0123456789abcdef.py").read_text() == extract_kernels(GENERATED).text


def test_stage_takes_only_files_the_worker_wrote_as_it_wrote_them(tmp_path: Path) -> None:
    import hashlib

    out_dir, replay = tmp_path / "out", tmp_path / "replay"
    replay.mkdir()
    _launched(out_dir, {"0123456789abcdef.py": GENERATED, "fedcba9876543210.py": GENERATED})
    written = {"0123456789abcdef.py": hashlib.sha256(GENERATED.encode()).hexdigest(), "fedcba9876543210.py": "0" * 64}
    staged = stage(out_dir, replay, written)
    assert (staged.staged, staged.forged) == (["0123456789abcdef"], ["fedcba9876543210"])
    assert stage(out_dir, tmp_path / "again", {}).forged == ["0123456789abcdef", "fedcba9876543210"]


def test_stage_ignores_oversized_files_links_and_a_missing_folder(tmp_path: Path) -> None:
    out_dir, replay = tmp_path / "out", tmp_path / "replay"
    replay.mkdir()
    assert stage(out_dir, replay).staged == []
    _launched(out_dir, {"1111111111111111.py": "x = 1\n" * (MAX_BYTES // 6 + 1)})
    (out_dir / LAUNCHED_DIR / "2222222222222222.py").symlink_to(tmp_path / "elsewhere.py")
    (tmp_path / "elsewhere.py").write_text(GENERATED)
    staged = stage(out_dir, replay)
    assert staged.staged == [] and staged.refused == []


def test_a_helion_grade_without_the_extra_names_it(monkeypatch: pytest.MonkeyPatch, write_submission: Callable[..., Path]) -> None:
    import sys

    from gym.grading.grader import grade
    from gym.schema.result import Status
    from gym.tasks.loader import find_task

    monkeypatch.setitem(sys.modules, "helion", None)  # `import helion` raises ImportError
    path = write_submission("import helion\n\ndef kernel(x, y):\n    return x\n")
    result = grade(find_task("l1/vector_add"), path)
    assert result.status == Status.infra_error
    assert result.dsl == "helion"
    assert "pip install 'kernel-gym[helion]'" in (result.error or "")
