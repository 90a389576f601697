"""How figures read on the site (also the Jinja filters)."""

from __future__ import annotations

import math

from gym.schema.result import Status

STATUS_LABELS: dict[str, str] = {
    Status.passed.value: "passed",
    Status.wrong_answer.value: "wrong answer",
    Status.compile_error.value: "compile error",
    Status.runtime_error.value: "runtime error",
    Status.timeout.value: "timeout",
    Status.rejected.value: "rejected",
    Status.infra_error.value: "infra error",
}

# Short labels for heat-map cells.
STATUS_SHORT: dict[str, str] = {
    Status.passed.value: "ok",
    Status.wrong_answer.value: "WA",
    Status.compile_error.value: "CE",
    Status.runtime_error.value: "RE",
    Status.timeout.value: "TO",
    Status.rejected.value: "REJ",
    Status.infra_error.value: "INF",
}

MISSING = "–"


def status_value(status: Status | str) -> str:
    return status.value if isinstance(status, Status) else str(status)


def status_label(status: Status | str) -> str:
    value = status_value(status)
    return STATUS_LABELS.get(value, value)


def speedup(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return MISSING
    if value < 0.1:
        return f"{value:.2g}×"
    return f"{value:.2f}×" if value < 100 else f"{value:.0f}×"


def percent(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return MISSING
    return f"{100 * value:.0f}%" if value >= 0.1 or value == 0 else f"{100 * value:.1f}%"


def number(value: float | None, digits: int = 3) -> str:
    """A figure in a short, stable form (g-format, NaN/Inf spelled out)."""
    if value is None:
        return MISSING
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return f"{value:.{digits}g}"


def seconds(value: float | None) -> str:
    if value is None or not math.isfinite(value):
        return MISSING
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(value) >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value / 1e-9:.3g} ns"


def sort_value(value: float | None) -> str:
    """The data-value a sortable cell carries: a plain number, or "" for missing (sorted last)."""
    if value is None or not math.isfinite(value):
        return ""
    return repr(round(value, 9))
