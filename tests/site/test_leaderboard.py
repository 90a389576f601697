"""The leaderboard site builder: aggregation, board separation, malformed inputs, determinism."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from pydantic import BaseModel
from typer.testing import CliRunner

from gym.cli import app
from gym.schema.aggregates import aggregate
from gym.schema.result import GradeResult, Status
from gym.site import (
    LEADERBOARD_SCHEMA_VERSION,
    Leaderboard,
    SiteBuildError,
    build_site,
    schema,
)
from tests.support.run_folders import (
    Attempt,
    RunSpec,
    cpu_solutions_spec,
    gpu_openai_spec,
    make_grade,
    standard_runs,
    write_run,
)

LEADERBOARD_README = Path(__file__).resolve().parents[2] / "leaderboard" / "README.md"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Path], Path]:
    root = tmp_path_factory.mktemp("leaderboard")
    runs = standard_runs(root / "runs")
    report = build_site(runs, root / "site")
    assert report.index == root / "site" / "index.html" and not report.skipped and not report.problems
    return runs, root / "site"


def load_board(site: Path) -> Leaderboard:
    return Leaderboard.model_validate_json((site / "leaderboard.json").read_bytes())


def grade_file(run: Path, task_id: str, attempt: int) -> GradeResult:
    return GradeResult.model_validate_json((run / "attempts" / task_id / str(attempt) / "grade.json").read_bytes())


def tree(site: Path) -> dict[str, bytes]:
    return {str(path.relative_to(site)): path.read_bytes() for path in sorted(site.rglob("*")) if path.is_file()}


# ---------------------------------------------------------------- aggregation


def test_row_figures_come_from_gym_aggregates_over_each_tasks_best_attempt(built: tuple[list[Path], Path]) -> None:
    runs, site = built
    board = load_board(site)
    assert board.schema_version == LEADERBOARD_SCHEMA_VERSION == 1
    gpu = next(b for b in board.boards if b.kind == "gpu")
    row = next(r for r in gpu.rows if r.agent == "openai")
    assert (row.model, row.hardware) == ("gpt-kernel-1", "NVIDIA H200")
    results = {result.task_id: result for result in row.results}
    # Attempt 1 was a wrong answer with a 5x "speedup"; the pass of attempt 2 is what counts.
    assert results["l1/softmax"].status == Status.passed and results["l1/softmax"].submission == "gpu-openai/l1/softmax/2"
    assert results["l1/softmax"].attempts == 2
    assert results["l1/rms_norm"].status == Status.rejected and results["l1/rms_norm"].integrity_flags == ["input_mutated:x"]
    openai = runs[0]
    best = [
        grade_file(openai, "l1/rms_norm", 1),
        grade_file(openai, "l1/softmax", 2),
        grade_file(openai, "l1/vector_add", 1),
        grade_file(openai, "l1/retired_op", 1),
    ]
    assert row.aggregate == aggregate(best)
    assert row.aggregate.correct_rate == pytest.approx(0.75)
    assert row.aggregate.eager.fast["fast_1"] == pytest.approx(0.75)
    assert row.aggregate.eager.fast["fast_2"] == pytest.approx(0.5)
    assert row.aggregate.eager.geomean_count == 3
    assert row.date == "2026-11-20" and row.gym_versions == ["0.1.0"] and row.complete
    # Rows rank by correct rate: the all-passing solutions row comes first.
    assert [r.agent for r in gpu.rows] == ["solutions", "openai"]


def test_gpu_and_interpreted_runs_land_in_separate_tables(built: tuple[list[Path], Path]) -> None:
    _, site = built
    board = load_board(site)
    assert [b.kind for b in board.boards] == ["gpu", "interpreted"]
    gpu, interpreted = board.boards
    assert all(row.hardware == "NVIDIA H200" and row.kind == "gpu" for row in gpu.rows)
    assert [(row.agent, row.hardware) for row in interpreted.rows] == [("solutions", "interpreted (CPU)")]
    assert interpreted.rows[0].aggregate.interpreted and not gpu.rows[0].aggregate.interpreted
    # The untimed compile error of the CPU run stays with its run's class.
    assert {r.task_id: r.status for r in interpreted.rows[0].results} == {"l1/softmax": Status.passed, "l1/vector_add": Status.compile_error}
    assert [(b.id, b.suites, b.contract) for b in board.boards] == [("board-gpu--l1", ["l1"], None), ("board-interpreted--l1", ["l1"], None)]
    index = (site / "index.html").read_text()
    gpu_table = index[index.index('id="board-gpu--l1"') : index.index('id="board-interpreted--l1"')]
    cpu_table = index[index.index('id="board-interpreted--l1"') : index.index('id="tasks"')]
    assert "interpreted (CPU)" not in gpu_table and "NVIDIA H200" not in cpu_table


def test_runs_of_one_row_merge_per_task_and_mixed_hardware_splits(tmp_path: Path) -> None:
    first = write_run(
        tmp_path / "a",
        RunSpec(
            run_id="a",
            agent="openai",
            model="m",
            device="cuda",
            attempts=[
                Attempt("l1/softmax", make_grade("l1/softmax", Status.passed, eager=1.5)),
                Attempt("l1/vector_add", make_grade("l1/vector_add", Status.wrong_answer, eager=9.0)),
            ],
        ),
    )
    second = write_run(
        tmp_path / "b",
        RunSpec(
            run_id="b",
            agent="openai",
            model="m",
            device="cuda",
            started_at="2026-11-21T00:00:00+00:00",
            attempts=[
                Attempt("l1/softmax", make_grade("l1/softmax", Status.passed, eager=1.2)),
                Attempt("l1/vector_add", make_grade("l1/vector_add", Status.passed, eager=0.8)),
            ],
        ),
    )
    other_model = write_run(
        tmp_path / "c",
        RunSpec(
            run_id="c",
            agent="openai",
            model="other",
            device="cpu",
            attempts=[
                Attempt("l1/softmax", make_grade("l1/softmax", Status.passed, interpreted=True, eager=0.1)),
            ],
        ),
    )
    build_site([first, second, other_model], tmp_path / "site")
    board = load_board(tmp_path / "site")
    (row,) = board.boards[0].rows
    assert row.runs == ["a", "b"] and row.date == "2026-11-21"
    assert {r.task_id: (r.status, r.speedup_vs_eager, r.submission) for r in row.results} == {
        "l1/softmax": (Status.passed, 1.5, "a/l1/softmax/1"),
        "l1/vector_add": (Status.passed, 0.8, "b/l1/vector_add/1"),
    }
    assert row.aggregate.correct_rate == 1.0
    assert [(r.model, r.kind) for r in board.boards[1].rows] == [("other", "interpreted")]


def test_configured_tasks_without_a_graded_attempt_count_as_neither_correct_nor_fast(tmp_path: Path) -> None:
    run = write_run(
        tmp_path / "run",
        RunSpec(
            run_id="r",
            agent="openai",
            model="m",
            device="cuda",
            tasks=["l1/softmax", "l1/silu"],
            attempts=[
                Attempt("l1/softmax", make_grade("l1/softmax", Status.passed, eager=3.0)),
            ],
        ),
    )
    build_site([run], tmp_path / "site")
    (row,) = load_board(tmp_path / "site").boards[0].rows
    assert row.unattempted == ["l1/silu"] and not row.complete
    assert row.aggregate == aggregate([grade_file(run, "l1/softmax", 1)], unattempted=1)
    assert row.aggregate.tasks == 2 and row.aggregate.correct_rate == 0.5 and row.aggregate.eager.fast["fast_2"] == 0.5
    assert "1 ungraded" in (tmp_path / "site/index.html").read_text()


def test_each_result_and_submission_carries_its_kernel_language(tmp_path: Path) -> None:
    helion = make_grade("l1/softmax", Status.passed, eager=3.0).model_copy(update={"dsl": "helion"})
    run = write_run(
        tmp_path / "run",
        RunSpec(
            run_id="r",
            agent="openai",
            model="m",
            device="cuda",
            tasks=["l1/softmax", "l1/silu"],
            attempts=[Attempt("l1/softmax", helion), Attempt("l1/silu", make_grade("l1/silu", Status.passed, eager=2.0))],
        ),
    )
    build_site([run], tmp_path / "site")
    board = load_board(tmp_path / "site")
    (row,) = board.boards[0].rows
    assert {result.task_id: result.dsl for result in row.results} == {"l1/silu": "triton", "l1/softmax": "helion"}
    assert row.dsls == ["helion", "triton"] and row.aggregate.dsls == {"helion": 1, "triton": 1}
    assert {sub.task_id: sub.dsl for sub in board.submissions} == {"l1/silu": "triton", "l1/softmax": "helion"}
    assert "helion + triton" in (tmp_path / "site/index.html").read_text()
    page = next(sub.url for sub in board.submissions if sub.task_id == "l1/softmax")
    assert "Helion (lowered to Triton" in (tmp_path / "site" / page).read_text()


def test_task_pages_show_the_task_or_say_it_is_gone(built: tuple[list[Path], Path]) -> None:
    _, site = built
    softmax = (site / "tasks/l1/softmax.html").read_text()
    assert "Row softmax" in softmax and "<code>allclose(rtol=1e-05, atol=1e-07)</code>" in softmax
    assert "Fastest correct kernels" in softmax and "2.40× vs eager" in softmax
    retired = (site / "tasks/l1/retired_op.html").read_text()
    assert "not in this checkout" in retired and "3.00×" in retired
    tasks = {task.id: task for task in load_board(site).tasks}
    assert not tasks["l1/retired_op"].present and tasks["l1/softmax"].present and tasks["l1/softmax"].contract


def test_submission_pages_carry_source_grade_timing_environment_and_transcript(built: tuple[list[Path], Path]) -> None:
    _, site = built
    failed = (site / "submissions/gpu-openai/l1/softmax/1.html").read_text()
    assert 'class="highlight"' in failed and "_softmax" in failed
    assert "1792 of 6400 elements mismatched" in failed and "last 56 column(s)" in failed
    assert "570.86.15" in failed and "no transcript" in failed and "<svg" in failed
    passed = (site / "submissions/gpu-openai/l1/softmax/2.html").read_text()
    assert 'href="../../../../submissions/gpu-openai/l1/softmax/2.transcript.html"' in passed
    assert "wrong_answer: the last 56" in (site / "submissions/gpu-openai/l1/softmax/2.transcript.html").read_text()
    rejected = (site / "submissions/gpu-openai/l1/rms_norm/1.html").read_text()
    assert "input_mutated:x" in rejected
    copied = GradeResult.model_validate_json((site / "submissions/gpu-openai/l1/softmax/1.grade.json").read_bytes())
    assert copied.status == Status.wrong_answer
    assert ".highlight .k " in (site / "static/highlight.css").read_text()


def test_every_local_link_resolves_and_nothing_is_fetched_from_the_network(built: tuple[list[Path], Path]) -> None:
    _, site = built
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 10
    for page in pages:
        html = page.read_text()
        assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in html, page
        for link in re.findall(r'(?:href|src)="([^"]+)"', html):
            if link.startswith(("#", "data:")):
                continue
            assert (page.parent / link.split("#")[0]).resolve().is_file(), f"{page}: broken link {link}"


# ---------------------------------------------------------------- malformed inputs


def test_malformed_run_json_and_a_folder_that_is_not_a_run_are_reported_and_skipped(tmp_path: Path) -> None:
    good = write_run(tmp_path / "good", gpu_openai_spec())
    broken = write_run(tmp_path / "broken", cpu_solutions_spec())
    (broken / "run.json").write_text('{"schema_version": 1, "run_id": 7')
    invalid = write_run(tmp_path / "invalid", cpu_solutions_spec())
    manifest = json.loads((invalid / "run.json").read_text())
    del manifest["config"]["agent"]
    (invalid / "run.json").write_text(json.dumps(manifest))
    stranger = tmp_path / "stranger"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("hello")
    report = build_site([good, broken, invalid, stranger, tmp_path / "absent"], tmp_path / "site")
    assert report.used == [good]
    reasons = {skipped.folder.name: skipped.reason for skipped in report.skipped}
    assert set(reasons) == {"broken", "invalid", "stranger", "absent"}
    assert "run.json" in reasons["broken"] and "Invalid JSON" in reasons["broken"]
    assert "config.agent" in reasons["invalid"]
    assert "not a run folder" in reasons["stranger"]
    assert "not a folder" in reasons["absent"]
    assert [run.run_id for run in load_board(tmp_path / "site").runs] == ["gpu-openai"]


def test_torn_and_malformed_result_lines_and_missing_grades_cost_only_their_attempt(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", gpu_openai_spec())
    results = run / "results.jsonl"
    lines = results.read_bytes().splitlines(keepends=True)
    lines[2] = b'{"task_id": "l1/vector_add", "attempt": "many"}\n'  # malformed line (vector_add)
    results.write_bytes(b"".join(lines) + b'{"task_id": "l1/soft')  # torn last line
    (run / "attempts/l1/rms_norm/1/grade.json").unlink()
    report = build_site([run], tmp_path / "site")
    assert report.used == [run] and not report.skipped
    problems = "\n".join(report.problems)
    assert "results.jsonl:3:" in problems
    assert "torn last line" in problems
    assert "attempts/l1/rms_norm/1/grade.json: missing; attempt skipped" in problems
    board = load_board(tmp_path / "site")
    (row,) = board.boards[0].rows
    assert [r.task_id for r in row.results] == ["l1/retired_op", "l1/softmax"]
    # What was skipped is shown without the build machine's paths.
    assert board.runs[0].problems and all(str(tmp_path) not in problem for problem in board.runs[0].problems)


def test_a_line_pointing_outside_its_run_folder_is_skipped(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", gpu_openai_spec())
    results = run / "results.jsonl"
    text = results.read_text().replace('"path":"attempts/l1/vector_add/1"', '"path":"../../etc"')
    results.write_text(text)
    report = build_site([run], tmp_path / "site")
    assert any("leaves the run folder" in problem for problem in report.problems)


def test_a_run_without_any_usable_attempt_is_skipped_and_the_cli_exits_1(tmp_path: Path) -> None:
    run = write_run(tmp_path / "empty", cpu_solutions_spec())
    (run / "results.jsonl").write_text("")
    report = build_site([run], tmp_path / "site")
    assert report.index is None and not (tmp_path / "site").exists()
    assert "no usable attempt" in report.skipped[0].reason
    result = CliRunner().invoke(app, ["leaderboard", "build", str(run), "--out", str(tmp_path / "site")])
    assert result.exit_code == 1
    assert "no usable attempt" in result.output and "nothing was built" in result.output


def test_cli_builds_reports_skipped_folders_and_prints_the_index_path(tmp_path: Path) -> None:
    runs = standard_runs(tmp_path / "runs")
    out = tmp_path / "out"
    result = CliRunner().invoke(app, ["leaderboard", "build", *map(str, runs), str(tmp_path / "nope"), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "skipped run folder" in result.output and "nope" in result.output
    assert str((out / "index.html").resolve()) in result.output


def test_refuses_to_overwrite_a_folder_that_is_not_a_previous_build(tmp_path: Path) -> None:
    runs = standard_runs(tmp_path / "runs")
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("keep me")
    with pytest.raises(SiteBuildError, match="refusing to overwrite"):
        build_site(runs, precious)
    assert (precious / "thesis.tex").read_text() == "keep me"
    # A previous build is replaced, stale files included.
    out = tmp_path / "site"
    build_site(runs, out)
    (out / "stale.html").write_text("old")
    build_site(runs[:1], out)
    assert not (out / "stale.html").exists() and not (out / "submissions/cpu-solutions").exists()


# ---------------------------------------------------------------- determinism


def test_building_twice_gives_identical_bytes_whatever_the_folder_or_order(built: tuple[list[Path], Path], tmp_path: Path) -> None:
    runs, site = built
    copies = []
    for run in reversed(runs):
        copy = tmp_path / "elsewhere" / ("copy-" + run.name)
        shutil.copytree(run, copy)
        copies.append(copy)
    build_site(copies, tmp_path / "again")
    first, second = tree(site), tree(tmp_path / "again")
    assert sorted(first) == sorted(second)
    for name in first:
        assert first[name] == second[name], f"{name} differs between builds"


def test_no_build_machine_paths_or_build_dates_in_the_output(built: tuple[list[Path], Path]) -> None:
    runs, site = built
    fixture_dates = {"2026-11-18", "2026-11-19", "2026-11-20"}
    for name, data in tree(site).items():
        text = data.decode("utf-8")
        assert str(runs[0].parent) not in text and str(site) not in text and str(Path.home()) + "/" not in text, name
        assert set(re.findall(r"\b20\d\d-\d\d-\d\d\b", text)) <= fixture_dates, name


# ---------------------------------------------------------------- schema documentation


def test_every_leaderboard_json_field_is_documented() -> None:
    readme = LEADERBOARD_README.read_text()
    assert "`schema_version`" in readme and f"`{LEADERBOARD_SCHEMA_VERSION}`" in readme
    models: list[type[BaseModel]] = [
        schema.Leaderboard,
        schema.Board,
        schema.Row,
        schema.TaskResult,
        schema.RunInfo,
        schema.TaskPageInfo,
        schema.SubmissionInfo,
    ]
    missing = [f"{model.__name__}.{field}" for model in models for field in model.model_fields if f"`{field}`" not in readme]
    assert not missing, f"undocumented in leaderboard/README.md: {missing}"


def test_the_site_links_to_the_docs_built_beside_it(tmp_path: Path) -> None:
    run = write_run(tmp_path / "runs" / "gpu-openai", gpu_openai_spec())
    alone = tmp_path / "alone" / "site"
    build_site([run], alone)
    assert "../docs/index.html" not in (alone / "index.html").read_text()
    # `make docs` puts the docs in build/docs, beside build/site.
    (tmp_path / "build" / "docs").mkdir(parents=True)
    (tmp_path / "build" / "docs" / "index.html").write_text("<h1>docs</h1>")
    beside = tmp_path / "build" / "site"
    build_site([run], beside)
    for page in (beside / "index.html", next(beside.glob("tasks/**/*.html"))):
        link = re.search(r'href="([^"]*\.\./docs/index\.html)"', page.read_text())
        assert link is not None, page
        assert (page.parent / link.group(1)).resolve() == (tmp_path / "build" / "docs" / "index.html").resolve()
