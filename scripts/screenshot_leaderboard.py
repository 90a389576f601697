"""Build the leaderboard site and save a screenshot of its index (docs/leaderboard.png).

    .venv/bin/python scripts/screenshot_leaderboard.py                 # the synthetic runs of tests/support/run_folders.py
    .venv/bin/python scripts/screenshot_leaderboard.py runs/demo ...   # real run folders
    .venv/bin/python scripts/screenshot_leaderboard.py --out shot.png --page tasks/l1/softmax.html

Drives Debian's chromium (/usr/bin/chromium, or $KGYM_CHROMIUM) headless through Playwright.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from gym.site import build_site  # noqa: E402 - after the sys.path entry for the checkout

CHROMIUM = os.environ.get("KGYM_CHROMIUM", "/usr/bin/chromium")


def screenshot(page_file: Path, target: Path, width: int, height: int) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            page = browser.new_page(viewport={"width": width, "height": height}, device_scale_factor=1)
            page.goto(page_file.resolve().as_uri())
            page.wait_for_load_state("load")
            target.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(target), full_page=False)
        finally:
            browser.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("run_dirs", nargs="*", type=Path, help="run folders (default: the synthetic fixture runs)")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "leaderboard.png", help="PNG to write")
    parser.add_argument("--page", default="index.html", help="page of the site to capture, relative to its root")
    parser.add_argument("--width", type=int, default=1280)
    parser.add_argument("--height", type=int, default=900)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="kgym-screenshot-") as scratch:
        run_dirs = args.run_dirs
        if not run_dirs:
            from tests.support.run_folders import standard_runs

            run_dirs = standard_runs(Path(scratch) / "runs")
        report = build_site(run_dirs, Path(scratch) / "site")
        for skipped in report.skipped:
            print(f"skipped run folder: {skipped.reason}", file=sys.stderr)
        if report.index is None:
            print("error: no usable run folder", file=sys.stderr)
            return 1
        screenshot(Path(scratch) / "site" / args.page, args.out, args.width, args.height)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
