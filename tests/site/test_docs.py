"""The docs site: built strictly from docs/ and the code, complete, and rendered in a real browser.

The build is `scripts/build_docs.py` (what `make docs` runs) into a temporary folder. The browser
part needs Debian's chromium and the playwright package, as the leaderboard's browser test; it is
skipped without them unless KGYM_REQUIRE_BROWSER=1 (CI), where that is a failure.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.static_files import load_script, serving

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = os.environ.get("KGYM_CHROMIUM", "/usr/bin/chromium")


def _builder() -> Any:
    return load_script("build_docs")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("docs")
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "build_docs.py"), "--src", str(folder / "src"), "--site", str(folder / "site")],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return folder / "site"


def _text(page: Path) -> str:
    """The page's text, tags dropped and whitespace collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", page.read_text(encoding="utf-8")))


def test_every_cli_command_is_in_the_reference(site: Path) -> None:
    commands = _builder().cli_commands()
    assert {"grade", "run", "serve", "leaderboard build", "import kernelbench"} <= set(commands)
    text = _text(site / "reference" / "cli.html")
    missing = [command for command in commands if f"kgym {command}" not in text]
    assert not missing, f"commands missing from the CLI reference: {missing}"
    assert "--gpu-profile" in text and "--reward" in text


def test_every_environment_variable_is_in_the_reference(site: Path) -> None:
    builder = _builder()
    names = builder.variables_in_code()
    assert "KGYM_SERVE_TOKEN" in names and "KGYM_TASKS" in names
    text = _text(site / "reference" / "environment.html")
    assert all(name in text for name in names)
    # A variable the code reads but the docs do not describe fails the build.
    assert set(names) <= set(builder.VARIABLES)


def test_every_shipped_task_has_a_page_and_the_schemas_their_fields(site: Path) -> None:
    pages = sorted(path.stem for path in (site / "reference" / "tasks").glob("*.html") if path.stem != "index")
    assert "l1-vector_add" in pages and len(pages) == len(list(ROOT.glob("tasks/*/*/task.toml")))
    grade = _text(site / "reference" / "grade-result.html")
    assert "modelled_speedup_vs_eager" in grade and "modelled on a GPU profile, not measured" in grade
    assert "kernelbench-fast-p" in _text(site / "reference" / "statuses-and-rewards.html")
    # The Python API comes from the docstrings.
    api = _text(site / "reference" / "api.html")
    assert "Grade submission (a Python file defining kernel ) against task" in api and "episode_return" in api


def test_the_docs_refer_to_nothing_outside_the_repository() -> None:
    for page in (ROOT / "docs").rglob("*.md"):
        text = page.read_text(encoding="utf-8")
        assert "../shared" not in text and "DESIGN.md" not in text, page


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    builder = _builder()
    source = tmp_path / "src"
    config = builder.write_sources(source, tmp_path / "site")
    (source / "guide" / "cli.md").write_text((source / "guide" / "cli.md").read_text() + "\n[gone](no-such-page.md)\n")
    with pytest.raises(SystemExit, match="no-such-page.md"):
        builder.build(config)


def _browser_missing() -> str | None:
    if importlib.util.find_spec("playwright") is None:
        return "the playwright package is not installed"
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)) and shutil.which(CHROMIUM) is None:
        return f"no chromium at {CHROMIUM} (apt-get install chromium)"
    return None


@pytest.fixture(scope="module")
def served(site: Path) -> Iterator[str]:
    with serving(site) as url:
        yield url


@pytest.mark.parametrize("page", ["index.html", "reference/cli.html"])
@pytest.mark.browser
def test_pages_render_with_their_navigation_and_search(page: str, served: str, tmp_path: Path) -> None:
    missing = _browser_missing()
    if missing is not None:
        if os.environ.get("KGYM_REQUIRE_BROWSER") == "1":
            pytest.fail(f"KGYM_REQUIRE_BROWSER=1 but {missing}", pytrace=False)
        pytest.skip(f"browser test skipped: {missing}")
    from playwright.sync_api import sync_playwright

    problems: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            view = browser.new_page(viewport={"width": 1400, "height": 1000})
            view.on("pageerror", lambda error: problems.append(f"page error: {error}"))
            view.on("requestfailed", lambda request: problems.append(f"request failed: {request.url}"))
            view.on("response", lambda response: problems.append(f"HTTP {response.status}: {response.url}") if response.status >= 400 else None)
            view.goto(served + page, wait_until="networkidle")
            # The primary navigation lists the sections, and the search box is there.
            nav = view.locator("nav.md-nav--primary")
            assert nav.count() >= 1 and nav.first.is_visible()
            labels = " ".join(nav.first.all_inner_texts())
            assert all(section in labels for section in ("Guide", "Reference", "How it works", "Contributing"))
            assert view.locator("input.md-search__input").count() == 1
            heading = view.locator("article h1").first.inner_text().rstrip("¶").strip()
            assert heading == ("Kernel Gym" if page == "index.html" else "CLI reference")
            if page == "reference/cli.html":
                assert view.locator("article h2", has_text="kgym grade").count() == 1
                # Typing in the search box finds a command (the search index loads over HTTP).
                view.locator("input.md-search__input").click()
                view.keyboard.type("leaderboard", delay=20)
                view.wait_for_selector(".md-search-result__item", timeout=15000)
                assert "matching document" in view.locator(".md-search-result__meta").inner_text()
            view.screenshot(path=str(tmp_path / (page.replace("/", "-") + ".png")), full_page=False)
        finally:
            browser.close()
    assert not problems, problems
