"""`kgym import`: quiet by default (library warnings and log lines only with --verbose), and summaries
that add up (every excluded and failed entry listed under its own outcome and reason).

The importers are replaced by fakes that warn and log the way torch and transformers do (the real
imports are covered in tests/tasks/*/ and benchmarked by scripts/bench_task_import.py)."""

from __future__ import annotations

import json
import logging
import re
import warnings
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gym.cli import app
from gym.cli.imports import outcome_counts, outcome_lines, quiet_libraries
from gym.log import get_logger
from gym.tasks.models.importer import ModelOpImport, ModelsImportReport
from gym.tasks.opinfo.importer import OpImport, OpInfoImportReport


@pytest.fixture(autouse=True)
def _wide_console() -> Any:
    """The CLI's console is made at import, with the width of whatever terminal the test process had
    (80 under xdist, whatever COLUMNS a CliRunner sets later): these tests read whole lines, so wide."""
    from gym.cli.common import console

    saved = console._width
    console.width = 300
    yield
    console._width = saved


def _noise() -> None:
    warnings.warn("`past_key_values` is deprecated", FutureWarning, stacklevel=1)
    logging.getLogger("transformers.fixture").warning("`cache_params` are deprecated. Use `cache` instead.")


def test_quiet_libraries_collects_warnings_and_library_logs_but_not_the_gyms(caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]) -> None:
    with quiet_libraries(verbose=False) as captured:
        _noise()
        get_logger("fixture").warning("the gym's own warning")
    assert any("FutureWarning: `past_key_values` is deprecated" in line for line in captured)
    assert any("[transformers.fixture] `cache_params` are deprecated" in line for line in captured)
    assert not any("the gym's own" in line for line in captured)
    assert "the gym's own warning" in capsys.readouterr().err
    # Restored on the way out: a library log line reaches its handlers again.
    with caplog.at_level(logging.WARNING, logger="transformers.fixture"):
        logging.getLogger("transformers.fixture").warning("after")
    assert "after" in caplog.text


def test_verbose_lets_library_warnings_through() -> None:
    with pytest.warns(FutureWarning), quiet_libraries(verbose=True) as captured:
        _noise()
    assert captured == []


def test_outcome_lines_list_each_outcome_under_its_own_reason() -> None:
    entries = [
        ("new", None, "add"),
        ("excluded", "random", "bernoulli"),
        ("excluded", "random", "normal"),
        ("failed", "scaling", "a"),
        ("failed", "scaling", "b"),
        ("failed", "scaling", "c"),
        ("excluded", "scaling", "d"),
        ("unchanged", None, "abs"),
    ]
    lines = outcome_lines(entries, listed=2)
    assert lines == ["failed, scaling (3): a, b, ...", "excluded, random (2): bernoulli, normal", "excluded, scaling (1): d"]
    counts = outcome_counts([outcome for outcome, _, _ in entries], ("new", "updated", "unchanged", "excluded", "failed"))
    assert counts == "1 new, 0 updated, 1 unchanged, 3 excluded, 3 failed"
    with pytest.raises(AssertionError, match="not among"):
        outcome_counts(["new", "skipped"], ("new",))


def _counts(text: str) -> dict[str, int]:
    # The summary's first sentence, which a narrow console wraps over as many lines as it needs (a long
    # --out path under xdist does): every line up to the first indented one (a reason) or `next:`.
    lines = []
    for line in text.split("\n\n", 1)[0].split("\n"):
        if line.startswith((" ", "next:")):
            break
        lines.append(line)
    first = " ".join(lines)
    return {kind: int(number) for number, kind in re.findall(r"(\d+) (new|updated|unchanged|excluded|failed)\b", first.split(" - ", 1)[0])}


def _reason_totals(text: str) -> dict[str, int]:
    totals: dict[str, int] = {}
    for outcome, count in re.findall(r"^\s+(excluded|failed), .*? \((\d+)\):", text, flags=re.MULTILINE):
        totals[outcome] = totals.get(outcome, 0) + int(count)
    return totals


def _fake_opinfo(monkeypatch: pytest.MonkeyPatch) -> None:
    from gym.tasks.opinfo import importer

    ops = [
        OpImport(op="add", task_id="opinfo/add", outcome="new", version=1),
        OpImport(op="bernoulli", outcome="excluded", reason="random", detail="differs between seeds"),
        OpImport(op="t", outcome="excluded", reason="view", detail="a view"),
        *(OpImport(op=f"big{i}", task_id=f"opinfo/big{i}", outcome="failed", reason="scaling", detail="no shape fits") for i in range(3)),
    ]

    def import_opinfo(root: Path, names: Any = None, on_op: Any = None) -> OpInfoImportReport:
        _noise()
        for op in ops:
            on_op(op)
        return OpInfoImportReport(torch_version="fixture", out=str(root), ops=ops)

    monkeypatch.setattr(importer, "load_entries", lambda: [object()] * len(ops))
    monkeypatch.setattr(importer, "select_entries", lambda entries, names: entries)
    monkeypatch.setattr(importer, "import_opinfo", import_opinfo)
    monkeypatch.setattr("gym.cli.imports._record_splits", lambda root, task_ids, quiet: None)


def test_the_opinfo_summary_adds_up_and_is_quiet(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _fake_opinfo(monkeypatch)
    result = CliRunner().invoke(app, ["import", "opinfo", "--out", str(tmp_path)], env={"COLUMNS": "300"})
    assert result.exit_code == 1, result.output  # an op failed
    counts = _counts(result.stdout)
    assert result.stdout.startswith("6 OpInfo entries") and sum(counts.values()) == 6, result.stdout
    assert _reason_totals(result.stdout) == {"excluded": counts["excluded"], "failed": counts["failed"]} == {"excluded": 2, "failed": 3}
    assert "failed, scaling (3): big0, big1, big2" in result.stdout and "left out" not in result.stdout
    assert "deprecated" not in result.output
    assert "2 library warning(s) and log line(s) (2 distinct) hidden: --verbose shows them" in result.stderr
    # --verbose: the warnings go where they would without the gym (pytest's capture here, stderr in a shell).
    with pytest.warns(FutureWarning, match="past_key_values"):
        verbose = CliRunner().invoke(app, ["import", "opinfo", "--out", str(tmp_path), "--verbose"], env={"COLUMNS": "300"})
    assert verbose.exit_code == 1 and "hidden" not in verbose.stderr


def test_the_models_summary_counts_op_groups_and_lists_exclusions(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gym.tasks.models import importer

    ops = [
        ModelOpImport(model="gpt2", op="aten.mm.default", share=0.5, task_id="models/gpt2/mm_1", outcome="new", version=1),
        ModelOpImport(model="gpt2_decode", op="aten.mm.default", share=0.5, outcome="excluded", reason="the same op and shapes as an earlier model's task"),
        ModelOpImport(model="gpt2", op="aten.arange.start", share=0.01, outcome="excluded", reason="no tensor input (a factory)"),
        ModelOpImport(
            model="gpt2", op="mm_add_gelu", kind="fusion", share=0.2, outcome="excluded", reason="the same ops and shapes as an earlier model's task"
        ),
    ]

    def import_models(root: Path, names: Any, layers: Any, on_op: Any = None) -> ModelsImportReport:
        _noise()
        return ModelsImportReport(out=str(root), models={"gpt2": 0.99, "gpt2_decode": 0.98}, ops=ops)

    monkeypatch.setattr(importer, "import_models", import_models)
    monkeypatch.setattr("gym.cli.imports._record_splits", lambda root, task_ids, quiet: None)
    result = CliRunner().invoke(app, ["import", "models", "gpt2", "--out", str(tmp_path)], env={"COLUMNS": "300"})
    assert result.exit_code == 0, result.output
    assert " ".join(result.stdout.split()).startswith("4 candidates (3 op groups, 1 fusion) of 2 traced models and decode steps (gpt2, gpt2_decode)")
    counts = _counts(result.stdout)
    assert sum(counts.values()) == 4 and _reason_totals(result.stdout) == {"excluded": 3}
    assert "excluded, no tensor input (a factory) (1): gpt2 aten.arange.start" in result.stdout
    assert "deprecated" not in result.output and "hidden: --verbose shows them" in result.stderr


def test_report_prints_the_roots_diversity_after_the_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    diversity = pytest.importorskip("gym.tasks.diversity")

    class Fake:
        def lines(self) -> list[str]:
            return ["7 valid tasks (0 degenerate); 5 distinct ops and patterns"]

        def model_dump(self, mode: str = "python") -> dict[str, int]:
            return {"tasks": 7}

    seen: list[Path] = []

    def fake_report(root: Path, measure: bool = True) -> Fake:
        seen.append(root)
        return Fake()

    _fake_opinfo(monkeypatch)
    monkeypatch.setattr(diversity, "diversity_report", fake_report)
    text = CliRunner().invoke(app, ["import", "opinfo", "--out", str(tmp_path), "--report"], env={"COLUMNS": "300"})
    assert seen == [tmp_path.resolve()]
    assert text.stdout.index("6 OpInfo entries") < text.stdout.index("7 valid tasks (0 degenerate); 5 distinct ops and patterns")
    as_json = CliRunner().invoke(app, ["import", "opinfo", "--out", str(tmp_path), "--report", "--json"])
    document = json.loads(as_json.stdout)
    assert document["diversity"] == {"tasks": 7} and len(document["import"]["ops"]) == 6
