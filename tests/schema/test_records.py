"""Archived records age well: unknown keys of the same schema version are ignored when read back,
a newer schema_version is refused with a message naming the file and both versions, and the
models stay strict when the gym builds them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from gym.errors import RecordVersionError, RunFolderError
from gym.harness.run_folder import MANIFEST_FILE, RESULTS_FILE, RUN_SCHEMA_VERSION, read_grade, read_manifest, read_results
from gym.schema.records import read_record
from gym.schema.result import SCHEMA_VERSION, GradeResult, Status
from gym.site.schema import (
    LEADERBOARD_SCHEMA_VERSION,
    Board,
    Leaderboard,
    read_leaderboard,
)
from tests.support.run_folders import Attempt, RunSpec, make_grade, write_run


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    grade = make_grade("l1/softmax", Status.wrong_answer, eager=2.0)
    return write_run(tmp_path / "run", RunSpec(run_id="r", agent="solutions", model=None, device="cuda", attempts=[Attempt("l1/softmax", grade)]))


def edit_json(path: Path, change) -> None:
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data, indent=2) + "\n")


def grade_path(run_dir: Path) -> Path:
    return run_dir / "attempts" / "l1" / "softmax" / "1" / "grade.json"


def edit_line(run_dir: Path, change) -> None:
    path = run_dir / RESULTS_FILE
    (line,) = path.read_text().splitlines()
    data = json.loads(line)
    change(data)
    path.write_text(json.dumps(data) + "\n")


def assert_names_versions(message: str, where: str, newer: int, understood: int) -> None:
    assert where in message, message
    assert f"schema_version {newer}" in message and f"schema_version {understood})" in message, message


# ---------------------------------------------------------------- grade.json


def test_grade_json_with_unknown_keys_reads(run_dir: Path) -> None:
    before = read_grade(run_dir, read_results(run_dir)[0])

    def add(data: dict) -> None:
        data["energy_joules"] = 1.5
        data["timings"]["candidate"]["cycles"] = 7
        data["trials"][0]["checks"][0]["diagnostics"][0]["worst"][0]["lane"] = 3
        data["environment"]["cpu_model"] = "x"

    edit_json(grade_path(run_dir), add)
    assert read_grade(run_dir, read_results(run_dir)[0]) == before


def test_newer_grade_json_is_refused_naming_both_versions(run_dir: Path) -> None:
    edit_json(grade_path(run_dir), lambda data: data.update(schema_version=99, energy_joules=1.5))
    with pytest.raises(RunFolderError) as caught:
        read_grade(run_dir, read_results(run_dir)[0])
    assert_names_versions(str(caught.value), "grade.json", 99, SCHEMA_VERSION)
    assert isinstance(caught.value.__cause__, RecordVersionError)


def test_newer_record_that_no_longer_validates_still_says_newer(run_dir: Path) -> None:
    edit_json(grade_path(run_dir), lambda data: data.update(schema_version=2, status={"renamed": True}))
    with pytest.raises(RecordVersionError) as caught:
        read_record(grade_path(run_dir), GradeResult)
    assert_names_versions(str(caught.value), str(grade_path(run_dir)), 2, SCHEMA_VERSION)
    assert (caught.value.found, caught.value.understood) == (2, SCHEMA_VERSION)


def test_a_record_without_schema_version_reads_as_version_1(run_dir: Path) -> None:
    edit_json(grade_path(run_dir), lambda data: data.pop("schema_version"))
    assert read_record(grade_path(run_dir), GradeResult).schema_version == 1


def test_malformed_record_is_still_a_validation_error(run_dir: Path) -> None:
    edit_json(grade_path(run_dir), lambda data: data.update(status="splendid"))
    with pytest.raises(ValidationError):
        read_record(grade_path(run_dir), GradeResult)


def test_models_stay_strict_outside_read_record(run_dir: Path) -> None:
    text = grade_path(run_dir).read_text()
    data = json.loads(text)
    data["energy_joules"] = 1.5
    with pytest.raises(ValidationError, match="energy_joules"):
        GradeResult.model_validate_json(json.dumps(data))
    with pytest.raises(ValidationError, match="energy_joules"):
        GradeResult(**{**GradeResult.model_validate_json(text).model_dump(), "energy_joules": 1.5})


def test_grades_serialise_as_before(run_dir: Path) -> None:
    grade = make_grade("l1/softmax", Status.passed, eager=2.0, compile=1.2, sol=0.5)
    dumped = json.loads(grade.model_dump_json())
    assert list(dumped) == [
        "schema_version",
        "task_id",
        "task_version",
        "submission_sha256",
        "status",
        "trials",
        "timings",
        "speedup_vs_eager",
        "speedup_vs_compile",
        "sol_fraction",
        "integrity_flags",
        # Added with KernelBench (defaults keep older records reading; readers drop unknown fields of version 1).
        "contract_preset",
        "torch_ops",
        "triton_launch_share",
        "triton_time_share",
        # Added with the training signal and the re-check of implausible speedups (all optional).
        "traffic",
        "traffic_ratio",
        "modelled",
        "modelled_speedup_vs_eager",
        "modelled_speedup_vs_compile",
        "profile",
        "confirmation",
        "environment",
        "feedback",
        "error",
        "graded_at",
        "duration_s",
        # Added with fail-closed payouts (issue 36): the RL adapters drop a masked sample.
        "masked",
        "degenerate_task",
        # Added with Helion submissions (issue 40): older records read as Triton.
        "dsl",
    ]
    assert dumped["schema_version"] == SCHEMA_VERSION == 1
    assert read_record(grade.model_dump_json(indent=2), GradeResult) == grade


# ---------------------------------------------------------------- run.json


def test_run_json_with_unknown_keys_reads(run_dir: Path) -> None:
    before = read_manifest(run_dir)

    def add(data: dict) -> None:
        data["host"] = "node-7"
        data["config"]["priority"] = "high"
        data["environment"]["numa"] = 2

    edit_json(run_dir / MANIFEST_FILE, add)
    assert read_manifest(run_dir) == before


def test_newer_run_json_is_refused_naming_both_versions(run_dir: Path) -> None:
    edit_json(run_dir / MANIFEST_FILE, lambda data: data.update(schema_version=99))
    with pytest.raises(RunFolderError) as caught:
        read_manifest(run_dir)
    assert_names_versions(str(caught.value), str(run_dir / MANIFEST_FILE), 99, RUN_SCHEMA_VERSION)


# ---------------------------------------------------------------- results.jsonl


def test_results_line_with_unknown_keys_reads(run_dir: Path) -> None:
    before = read_results(run_dir)
    edit_line(run_dir, lambda data: data.update(tokens_used=1234))
    problems: list[str] = []
    assert read_results(run_dir, problems) == before and not problems


def test_newer_results_line_is_reported_naming_both_versions(run_dir: Path) -> None:
    edit_line(run_dir, lambda data: data.update(schema_version=99))
    problems: list[str] = []
    assert read_results(run_dir, problems) == []
    (problem,) = problems
    assert_names_versions(problem, f"{RESULTS_FILE}:1", 99, RUN_SCHEMA_VERSION)
    with pytest.raises(RunFolderError) as caught:
        read_results(run_dir)
    assert_names_versions(str(caught.value), f"{RESULTS_FILE}:1", 99, RUN_SCHEMA_VERSION)


# ---------------------------------------------------------------- leaderboard.json


def leaderboard_file(tmp_path: Path) -> Path:
    board = Leaderboard(boards=[Board(kind="gpu", title="GPU runs", rows=[])], runs=[], tasks=[], submissions=[])
    path = tmp_path / "leaderboard.json"
    path.write_text(board.model_dump_json(indent=2) + "\n")
    return path


def test_leaderboard_json_with_unknown_keys_reads(tmp_path: Path) -> None:
    path = leaderboard_file(tmp_path)
    before = read_leaderboard(path)

    def add(data: dict) -> None:
        data["generator"] = "kgym 9"
        data["boards"][0]["subtitle"] = "new"

    edit_json(path, add)
    assert read_leaderboard(path) == before


def test_newer_leaderboard_json_is_refused_naming_both_versions(tmp_path: Path) -> None:
    path = leaderboard_file(tmp_path)
    edit_json(path, lambda data: data.update(schema_version=99))
    with pytest.raises(RecordVersionError) as caught:
        read_leaderboard(path)
    assert_names_versions(str(caught.value), str(path), 99, LEADERBOARD_SCHEMA_VERSION)
