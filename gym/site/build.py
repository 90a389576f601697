"""`build_site`: run folders in, a static site out (deterministic: same inputs, same bytes)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path

from gym.errors import RunFolderError, SiteBuildError
from gym.site.board import build_site_data
from gym.site.load import LoadedRun, load_run
from gym.site.render import TEMPLATES_DIR, render_site

# The file whose presence marks a folder as a previous build (safe to replace).
MARKER = "leaderboard.json"


@dataclass(frozen=True)
class SkippedRun:
    folder: Path
    reason: str


@dataclass
class BuildReport:
    out: Path
    # index.html of the built site; None when no run folder was usable (nothing is written then).
    index: Path | None = None
    # Run folders used.
    used: list[Path] = field(default_factory=list)
    # Run folders skipped as a whole, with the reason.
    skipped: list[SkippedRun] = field(default_factory=list)
    # "folder: what was skipped inside it" for folders that were used.
    problems: list[str] = field(default_factory=list)
    # Files written.
    files: int = 0


def load_runs(run_dirs: list[Path], report: BuildReport) -> list[LoadedRun]:
    loaded: list[LoadedRun] = []
    for folder in run_dirs:
        try:
            run = load_run(folder)
        except (RunFolderError, OSError) as error:
            report.skipped.append(SkippedRun(folder=folder, reason=str(error)))
            continue
        loaded.append(run)
        report.used.append(folder)
        report.problems.extend(f"{folder}: {problem}" for problem in run.problems)
    return loaded


def prepare_out(out: Path) -> None:
    """Empty `out` when it is a previous build; refuse any other non-empty folder."""
    if out.exists() and not out.is_dir():
        raise SiteBuildError(f"{out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()):
        if not (out / MARKER).is_file():
            raise SiteBuildError(f"{out}: not empty and not a previous leaderboard build (no {MARKER}); refusing to overwrite it")
        for child in sorted(out.iterdir()):
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
    out.mkdir(parents=True, exist_ok=True)


def write_files(out: Path, files: dict[str, bytes]) -> None:
    for relative, data in files.items():
        target = out / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)


def build_site(run_dirs: list[Path], out: Path) -> BuildReport:
    """Build the site from `run_dirs` into `out`; unusable run folders are reported in the result, never raised."""
    if not TEMPLATES_DIR.is_dir():
        raise SiteBuildError(f"{TEMPLATES_DIR}: no templates (the builder needs leaderboard/: the checkout's, or the wheel's gym/_shipped/leaderboard)")
    report = BuildReport(out=out)
    loaded = load_runs([Path(folder) for folder in run_dirs], report)
    if not loaded:
        return report
    # `make docs` builds the docs site into build/docs, beside build/site: then every page links to it.
    docs = (out.resolve().parent / "docs" / "index.html").is_file()
    files = render_site(build_site_data(loaded), docs=docs)
    prepare_out(out)
    write_files(out, files)
    report.files = len(files)
    report.index = out / "index.html"
    return report
