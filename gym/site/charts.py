"""Inline SVG charts, generated in Python (no script, no external request).

- `speedup_strips`: per row, every passed task's speedup vs eager on a log
  axis, the geometric mean marked, failures counted beside it.
- `heat_map`: task x row, a cell coloured by status, passes shaded by speedup.
- `timing_chart`: per timed side (kernel, eager, torch.compile), min / p10 /
  median / mean / p90 of its per-call times.

Coordinates are printed with fixed precision so the bytes are deterministic.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

from gym.schema.result import Status, TimingSummary
from gym.site.formatting import MISSING, STATUS_LABELS, STATUS_SHORT, seconds, speedup

FAIL_COLOURS: dict[str, str] = {
    Status.wrong_answer.value: "#d7301f",
    Status.rejected.value: "#67000d",
    Status.compile_error.value: "#6a51a3",
    Status.runtime_error.value: "#9e9ac8",
    Status.timeout.value: "#fd8d3c",
    Status.infra_error.value: "#969696",
}
MISSING_COLOUR = "#eeeeee"
PASSED_UNTIMED = "#a1d99b"
DARK_TEXT = "#111111"
LIGHT_TEXT = "#ffffff"


@dataclass(frozen=True)
class Dot:
    label: str
    value: float
    url: str


@dataclass(frozen=True)
class Strip:
    label: str
    dots: list[Dot]
    geomean: float | None
    # e.g. "3 of 5 passed".
    note: str


@dataclass(frozen=True)
class Cell:
    status: str | None
    speedup: float | None
    url: str | None
    tooltip: str


def _f(value: float) -> str:
    return f"{value:.1f}"


def _text(x: float, y: float, body: str, **attrs: str) -> str:
    extra = "".join(f' {key.replace("_", "-")}="{escape(value)}"' for key, value in attrs.items())
    return f'<text x="{_f(x)}" y="{_f(y)}"{extra}>{escape(body)}</text>'


def _svg(width: float, height: float, label: str, body: list[str], css_class: str) -> str:
    return (
        f'<svg class="chart {css_class}" xmlns="http://www.w3.org/2000/svg" width="{_f(width)}" height="{_f(height)}" '
        f'viewBox="0 0 {_f(width)} {_f(height)}" role="img" aria-label="{escape(label)}"><title>{escape(label)}</title>' + "".join(body) + "</svg>"
    )


def _mix(low: str, high: str, t: float) -> str:
    t = min(1.0, max(0.0, t))
    a = [int(low[i : i + 2], 16) for i in (1, 3, 5)]
    b = [int(high[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(a, b))


def speedup_colour(value: float | None) -> str:
    """Passed cells: pale amber below 1x, greens from 1x to 8x and beyond."""
    if value is None or not math.isfinite(value) or value <= 0:
        return PASSED_UNTIMED
    position = math.log2(value)
    if position < 0:
        return _mix("#fff7bc", "#fec44f", -position / 3)
    return _mix("#c7e9c0", "#00441b", position / 3)


def cell_colour(cell: Cell) -> str:
    if cell.status is None:
        return MISSING_COLOUR
    if cell.status == Status.passed.value:
        return speedup_colour(cell.speedup)
    return FAIL_COLOURS.get(cell.status, FAIL_COLOURS[Status.infra_error.value])


def text_colour(background: str) -> str:
    r, g, b = (int(background[i : i + 2], 16) for i in (1, 3, 5))
    return DARK_TEXT if 0.299 * r + 0.587 * g + 0.114 * b > 140 else LIGHT_TEXT


def log_domain(values: list[float]) -> tuple[float, float]:
    """Powers of ten around `values`, always including 1x."""
    positive = [value for value in values if value > 0 and math.isfinite(value)] + [1.0]
    low = 10 ** math.floor(math.log10(min(positive)) - 1e-9)
    high = 10 ** math.ceil(math.log10(max(positive)) + 1e-9)
    return low, high


def _tick_label(value: float) -> str:
    return f"{value:g}×"


def speedup_strips(strips: list[Strip], title: str) -> str:
    """One horizontal strip per row; dots link to the submission pages."""
    left, right, top, row_height = 230.0, 120.0, 30.0, 28.0
    plot = 520.0
    width = left + plot + right
    height = top + row_height * max(1, len(strips)) + 30.0
    low, high = log_domain([dot.value for strip in strips for dot in strip.dots])
    span = math.log10(high) - math.log10(low)

    def x_of(value: float) -> float:
        clamped = min(high, max(low, value))
        return left + plot * (math.log10(clamped) - math.log10(low)) / span

    body = [_text(left, 16, title, class_="chart-title")]
    decade = low
    while decade <= high * 1.0001:
        x = x_of(decade)
        body.append(f'<line class="grid{" one" if decade == 1 else ""}" x1="{_f(x)}" y1="{_f(top - 6)}" x2="{_f(x)}" y2="{_f(height - 24)}"/>')
        body.append(_text(x, height - 8, _tick_label(decade), text_anchor="middle", class_="tick"))
        decade *= 10
    for index, strip in enumerate(strips):
        y = top + row_height * index + row_height / 2
        body.append(f'<line class="strip" x1="{_f(left)}" y1="{_f(y)}" x2="{_f(left + plot)}" y2="{_f(y)}"/>')
        body.append(_text(left - 8, y + 4, strip.label, text_anchor="end", class_="label"))
        for dot in strip.dots:
            body.append(
                f'<a href="{escape(dot.url)}"><circle class="dot" cx="{_f(x_of(dot.value))}" cy="{_f(y)}" r="5">'
                f"<title>{escape(f'{dot.label}: {speedup(dot.value)}')}</title></circle></a>"
            )
        if strip.geomean is not None:
            x = x_of(strip.geomean)
            body.append(
                f'<line class="geomean" x1="{_f(x)}" y1="{_f(y - 9)}" x2="{_f(x)}" y2="{_f(y + 9)}">'
                f"<title>{escape('geometric mean ' + speedup(strip.geomean))}</title></line>"
            )
        body.append(_text(left + plot + 10, y + 4, strip.note, class_="note"))
    return _svg(width, height, title, body, "strips")


def heat_map(tasks: list[tuple[str, str]], columns: list[str], cells: list[list[Cell]], title: str) -> str:
    """`tasks` are (task id, task page url); `cells[i][j]` is task i under column j."""
    left, top, cell_w, cell_h = 210.0, 130.0, 72.0, 24.0
    # Room on the right for the last rotated column label.
    width = left + cell_w * max(1, len(columns)) + 150.0
    height = top + cell_h * max(1, len(tasks)) + 10.0
    body = [_text(4, 16, title, class_="chart-title")]
    for j, column in enumerate(columns):
        x = left + cell_w * j + cell_w / 2
        short = column if len(column) <= 32 else column[:31] + "…"
        body.append(
            f'<text class="column" x="{_f(x)}" y="{_f(top - 8)}" transform="rotate(-35 {_f(x)} {_f(top - 8)})">'
            f"<title>{escape(column)}</title>{escape(short)}</text>"
        )
    for i, (task_id, task_url) in enumerate(tasks):
        y = top + cell_h * i
        body.append(f'<a href="{escape(task_url)}">{_text(left - 8, y + cell_h / 2 + 4, task_id, text_anchor="end", class_="label")}</a>')
        for j, cell in enumerate(cells[i]):
            x = left + cell_w * j
            fill = cell_colour(cell)
            if cell.status is None:
                caption = MISSING
            elif cell.status == Status.passed.value:
                caption = speedup(cell.speedup) if cell.speedup is not None else "ok"
            else:
                caption = STATUS_SHORT.get(cell.status, cell.status)
            rect = (
                f'<rect x="{_f(x + 1)}" y="{_f(y + 1)}" width="{_f(cell_w - 2)}" height="{_f(cell_h - 2)}" fill="{fill}">'
                f"<title>{escape(cell.tooltip)}</title></rect>"
                + _text(x + cell_w / 2, y + cell_h / 2 + 4, caption, text_anchor="middle", fill=text_colour(fill), class_="cell")
            )
            body.append(f'<a href="{escape(cell.url)}">{rect}</a>' if cell.url else rect)
    return _svg(width, height, title, body, "heatmap")


def heat_legend() -> list[tuple[str, str]]:
    """(colour, label) pairs for the heat map's legend."""
    items = [
        (speedup_colour(0.25), "passed, 0.25×"),
        (speedup_colour(1.0), "passed, 1×"),
        (speedup_colour(2.8), "passed, 2.8×"),
        (speedup_colour(8.0), "passed, ≥8×"),
    ]
    items += [(colour, STATUS_LABELS[status]) for status, colour in FAIL_COLOURS.items()]
    return items + [(MISSING_COLOUR, "not attempted")]


def timing_chart(sides: list[tuple[str, TimingSummary]]) -> str:
    """Per side: whisker min..p90, box p10..p90, median bar, mean dot, on a log time axis."""
    left, right, top, row_height, plot = 150.0, 150.0, 10.0, 30.0, 480.0
    width = left + plot + right
    height = top + row_height * max(1, len(sides)) + 30.0
    values = [value for _, s in sides for value in (s.min_s, s.p10_s, s.median_s, s.mean_s, s.p90_s) if value > 0 and math.isfinite(value)]
    if not values:
        return ""
    lo, hi = math.log10(min(values)) - 0.15, math.log10(max(values)) + 0.15

    def x_of(value: float) -> float:
        value = max(value, 10**lo)
        return left + plot * (math.log10(value) - lo) / (hi - lo)

    body: list[str] = []
    for decade in range(math.floor(lo), math.ceil(hi) + 1):
        for step in (1, 2, 5) if hi - lo <= 2 else (1,):
            tick = step * 10.0**decade
            if not lo <= math.log10(tick) <= hi:
                continue
            x = x_of(tick)
            body.append(f'<line class="grid" x1="{_f(x)}" y1="{_f(top)}" x2="{_f(x)}" y2="{_f(height - 24)}"/>')
            body.append(_text(x, height - 8, seconds(tick), text_anchor="middle", class_="tick"))
    for index, (label, s) in enumerate(sides):
        y = top + row_height * index + row_height / 2
        body.append(_text(left - 8, y + 4, label, text_anchor="end", class_="label"))
        body.append(f'<line class="whisker" x1="{_f(x_of(s.min_s))}" y1="{_f(y)}" x2="{_f(x_of(s.p90_s))}" y2="{_f(y)}"/>')
        box_x = x_of(s.p10_s)
        body.append(f'<rect class="box" x="{_f(box_x)}" y="{_f(y - 8)}" width="{_f(max(1.0, x_of(s.p90_s) - box_x))}" height="16"/>')
        body.append(f'<line class="median" x1="{_f(x_of(s.median_s))}" y1="{_f(y - 10)}" x2="{_f(x_of(s.median_s))}" y2="{_f(y + 10)}"/>')
        body.append(f'<circle class="mean" cx="{_f(x_of(s.mean_s))}" cy="{_f(y)}" r="3"/>')
        body.append(_text(left + plot + 8, y + 4, f"{seconds(s.median_s)} ({s.reps} reps)", class_="note"))
    return _svg(width, height, "timing distribution (log scale): min–p90 whisker, p10–p90 box, median bar, mean dot", body, "timing")
