"""Render the site's files from `SiteData` with Jinja templates from leaderboard/templates (the checkout's, or the wheel's copy).

Every page gets `root`, the relative way back to the site root, so links work
from file:// and from any folder of any static host. Returns {relative path: bytes}.
"""

from __future__ import annotations

import json
from typing import Any

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from gym.schema.result import Status
from gym.site import charts, formatting
from gym.site.board import Graded, SiteData
from gym.site.highlight import json_html, python_html, stylesheet
from gym.site.schema import Board, Row, SubmissionInfo
from gym.site.urls import root_prefix, submission_base, submission_page, task_page
from gym.tasks.paths import shipped_root

# The checkout's leaderboard/ folder, or the copy an installed wheel carries (gym.tasks.paths.shipped_root).
ASSETS_DIR = shipped_root() / "leaderboard"
TEMPLATES_DIR = ASSETS_DIR / "templates"
STATIC_DIR = ASSETS_DIR / "static"
FASTEST_SHOWN = 10


def row_label(row: Row) -> str:
    return f"{row.agent} · {row.model}" if row.model else row.agent


def inline_code(text: str) -> Markup:
    """Escape `text`, then show `backticked` spans as <code>."""
    parts = str(escape(text)).split("`")
    return Markup("".join(f"<code>{part}</code>" if index % 2 else part for index, part in enumerate(parts)))


def environment() -> Environment:
    env = Environment(
        loader=FileSystemLoader(str(TEMPLATES_DIR)),
        autoescape=select_autoescape(["html"]),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        speedup=formatting.speedup,
        percent=formatting.percent,
        number=formatting.number,
        seconds=formatting.seconds,
        sort_value=formatting.sort_value,
        status_label=formatting.status_label,
        status_value=formatting.status_value,
        inline_code=inline_code,
        row_label=row_label,
    )
    return env


def board_charts(board: Board) -> dict[str, Markup]:
    strips = []
    for row in board.rows:
        dots = [
            charts.Dot(label=result.task_id, value=result.speedup_vs_eager, url=result.url)
            for result in row.results
            if result.status == Status.passed and result.speedup_vs_eager is not None and result.speedup_vs_eager > 0
        ]
        figures = row.aggregate
        note = f"{figures.passed} of {figures.tasks} passed"
        strips.append(charts.Strip(label=row_label(row) + f" ({row.hardware})", dots=dots, geomean=figures.eager.geomean_speedup, note=note))
    task_ids = sorted({result.task_id for row in board.rows for result in row.results} | {task_id for row in board.rows for task_id in row.unconfirmed})
    by_row = [{result.task_id: result for result in row.results} for row in board.rows]
    cells: list[list[charts.Cell]] = []
    for task_id in task_ids:
        line = []
        for row, results in zip(board.rows, by_row):
            result = results.get(task_id)
            if result is None:
                what = "a pass awaiting confirmation (not ranked)" if task_id in row.unconfirmed else "not attempted"
                line.append(charts.Cell(status=None, speedup=None, url=None, tooltip=f"{task_id} × {row_label(row)}: {what}"))
                continue
            tooltip = f"{task_id} × {row_label(row)}: {formatting.status_label(result.status)}, {formatting.speedup(result.speedup_vs_eager)} vs eager"
            if result.confirmation == "confirmed":
                tooltip += ", confirmed"
            line.append(charts.Cell(status=result.status.value, speedup=result.speedup_vs_eager, url=result.url, tooltip=tooltip))
        cells.append(line)
    columns = [f"{row_label(row)} ({row.hardware})" for row in board.rows]
    return {
        "strips": Markup(charts.speedup_strips(strips, "Speedup vs eager PyTorch of each passed task (log scale; bar: geometric mean)")),
        "heatmap": Markup(charts.heat_map([(task_id, task_page(task_id)) for task_id in task_ids], columns, cells, "Best result per task and row")),
    }


def _page(env: Environment, template: str, path: str, **context: Any) -> tuple[str, bytes]:
    html = env.get_template(template).render(root=root_prefix(path), page=path, **context)
    return path, html.encode("utf-8")


def index_page(env: Environment, data: SiteData) -> tuple[str, bytes]:
    boards = [(board, board_charts(board)) for board in data.leaderboard.boards]
    return _page(env, "index.html", "index.html", lb=data.leaderboard, boards=boards, legend=charts.heat_legend())


def task_pages(env: Environment, data: SiteData) -> list[tuple[str, bytes]]:
    """One page per task, with a section per board that has a result on it.

    Several boards can share a hardware kind (one per scope: suites and contract), so a
    board's fastest kernels are the passed submissions of its own rows' runs on its kind: a
    run has one scope, so each of its submissions falls in exactly one board."""
    lb = data.leaderboard
    pages = []
    for task in lb.tasks:
        sections: list[dict[str, Any]] = []
        for board in lb.boards:
            best = [(row, result) for row in board.rows for result in row.results if result.task_id == task.id]
            board_runs = {run for row in board.rows for run in row.runs}
            passed = [
                sub
                for sub in lb.submissions
                if sub.task_id == task.id
                and sub.kind == board.kind
                and sub.run in board_runs
                and sub.status == Status.passed
                and sub.confirmation not in ("unconfirmed", "not_reproduced")  # held back: not ranked (gym.site.board.held_back)
            ]
            passed.sort(key=lambda sub: (-(sub.speedup_vs_eager or 0.0), sub.id))
            sections.append({"board": board, "best": best, "fastest": passed[:FASTEST_SHOWN]})
        runs = {run.slug: run for run in lb.runs}
        pages.append(_page(env, "task.html", task_page(task.id), task=task, sections=sections, runs=runs))
    return pages


def _timing_sides(item: Graded) -> list[tuple[str, Any]]:
    timings = item.grade.timings
    if timings is None:
        return []
    sides = [("kernel", timings.candidate), ("eager PyTorch", timings.reference), ("torch.compile", timings.compiled)]
    return [(label, summary) for label, summary in sides if summary is not None]


def submission_pages(env: Environment, data: SiteData) -> list[tuple[str, bytes]]:
    lb = data.leaderboard
    runs = {run.slug: run for run in lb.runs}
    tasks = {task.id: task for task in lb.tasks}
    files: list[tuple[str, bytes]] = []
    for sub in lb.submissions:
        item = data.attempts[sub.id]
        sides = _timing_sides(item)
        source_html = Markup(python_html(item.attempt.source)) if item.attempt.source is not None else None
        files.append(
            _page(
                env,
                "submission.html",
                submission_page(sub.id),
                sub=sub,
                grade=item.grade,
                run=runs[sub.run],
                task=tasks[sub.task_id],
                source_html=source_html,
                timing_svg=Markup(charts.timing_chart(sides)) if sides else None,
                sides=sides,
            )
        )
        files.extend(raw_files(sub, item))
        if item.attempt.transcript is not None and sub.transcript is not None:
            entries = [transcript_entry(entry) for entry in item.attempt.transcript]
            files.append(_page(env, "transcript.html", sub.transcript, sub=sub, entries=entries))
    return files


def transcript_entry(entry: Any) -> dict[str, Any]:
    """A transcript message as (role, text) when it looks like one, else highlighted JSON."""
    if isinstance(entry, dict) and isinstance(entry.get("content"), str) and set(entry) <= {"role", "content", "name"}:
        return {"role": str(entry.get("role", "")), "text": entry["content"], "json": None}
    role = str(entry.get("role", "")) if isinstance(entry, dict) else ""
    return {"role": role, "text": None, "json": Markup(json_html(entry))}


def raw_files(sub: SubmissionInfo, item: Graded) -> list[tuple[str, bytes]]:
    base = submission_base(sub.id)
    files = [(base + ".grade.json", (item.grade.model_dump_json(indent=2) + "\n").encode("utf-8"))]
    if item.attempt.source is not None:
        files.append((base + ".py", item.attempt.source.encode("utf-8")))
    if item.attempt.transcript is not None:
        files.append((base + ".transcript.json", (json.dumps(item.attempt.transcript, indent=2, default=str) + "\n").encode("utf-8")))
    return files


def static_files() -> list[tuple[str, bytes]]:
    files = [(f"static/{path.name}", path.read_bytes()) for path in sorted(STATIC_DIR.iterdir()) if path.is_file()]
    return files + [("static/highlight.css", stylesheet().encode("utf-8"))]


def render_site(data: SiteData, docs: bool = False) -> dict[str, bytes]:
    """Every file of the site; `docs`: link every page to the docs site built beside it (`../docs/index.html`)."""
    env = environment()
    env.globals["docs"] = docs
    files: list[tuple[str, bytes]] = [index_page(env, data)]
    files += task_pages(env, data)
    files += submission_pages(env, data)
    files += static_files()
    files.append(("leaderboard.json", (data.leaderboard.model_dump_json(indent=2) + "\n").encode("utf-8")))
    return dict(sorted(files))
