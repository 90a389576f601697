"""The hardware class a grade belongs to: a GPU's name, or "interpreted (CPU)".

GPU grades and interpreted grades never share a table; a grade without timings
(a compile error, say) takes its run's class.
"""

from __future__ import annotations

from gym.harness.run_folder import RunManifest
from gym.schema.result import GradeResult
from gym.site.schema import INTERPRETED_HARDWARE, BoardKind

HardwareClass = tuple[BoardKind, str]

UNKNOWN_GPU = "GPU (unknown)"


def grade_hardware(grade: GradeResult) -> HardwareClass | None:
    """The class a grade's own timings name; None when it carries no timings."""
    if grade.timings is None:
        return None
    if grade.timings.interpreted:
        return "interpreted", INTERPRETED_HARDWARE
    name = grade.timings.device if grade.timings.device not in ("", "cpu", "cuda") else grade.environment.gpu
    return "gpu", name or UNKNOWN_GPU


def run_hardware(manifest: RunManifest, grades: list[GradeResult]) -> HardwareClass:
    """The class of a run: from its first timed grade, else from its manifest."""
    for grade in grades:
        found = grade_hardware(grade)
        if found is not None:
            return found
    environment = manifest.environment
    if manifest.config.device == "cpu" or environment.device == "cpu":
        return "interpreted", INTERPRETED_HARDWARE
    return "gpu", environment.gpu or UNKNOWN_GPU
