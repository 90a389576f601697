"""The built leaderboard in a real browser: Debian's chromium, headless, through Playwright.

Served from a local HTTP server on 127.0.0.1 and opened from file://: no
console error, no failed request; a column sorts, the filter narrows, links
lead to a task page and a submission page. Screenshots go to pytest's tmp_path.

Skipped when /usr/bin/chromium or the playwright package is missing, unless
KGYM_REQUIRE_BROWSER=1 (CI), where that is a failure.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from gym.schema.result import Status
from gym.site import build_site
from tests.support.run_folders import Attempt, RunSpec, make_grade, standard_runs, write_run
from tests.support.static_files import serving

CHROMIUM = os.environ.get("KGYM_CHROMIUM", "/usr/bin/chromium")


def _missing() -> str | None:
    if importlib.util.find_spec("playwright") is None:
        return "the playwright package is not installed (pip install playwright; its own browser download is not needed)"
    if not (os.path.isfile(CHROMIUM) and os.access(CHROMIUM, os.X_OK)) and shutil.which(CHROMIUM) is None:
        return f"no chromium at {CHROMIUM} (apt-get install chromium)"
    return None


MISSING = _missing()
if MISSING is not None:
    if os.environ.get("KGYM_REQUIRE_BROWSER") == "1":
        pytest.fail(f"KGYM_REQUIRE_BROWSER=1 but {MISSING}", pytrace=False)
    pytest.skip(f"browser test skipped: {MISSING}", allow_module_level=True)

from playwright.sync_api import (  # noqa: E402 - only once the browser is known to be there
    Browser,
    ConsoleMessage,
    Page,
    Request,
    Response,
    sync_playwright,
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("browser-site")
    # Beside the standard runs, one over an imported KernelBench suite: it gets a board of its own.
    kb = RunSpec(
        run_id="gpu-kb",
        agent="solutions",
        model=None,
        device="cuda",
        attempts=[Attempt("kb/l1/1_relu", make_grade("kb/l1/1_relu", Status.passed, eager=1.3, sha="c"))],
    )
    report = build_site([*standard_runs(root / "runs"), write_run(root / "runs" / "gpu-kb", kb)], root / "site")
    assert report.index is not None
    return root / "site"


@pytest.fixture(scope="module")
def server(site: Path) -> Iterator[str]:
    with serving(site) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox"])
        try:
            yield launched
        finally:
            launched.close()


class Watched:
    """A page that records console errors, page errors, failed requests and HTTP errors."""

    def __init__(self, page: Page) -> None:
        self.page = page
        self.problems: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.on("requestfailed", self._failed)
        page.on("response", self._response)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.problems.append(f"console {message.type}: {message.text}")

    def _failed(self, request: Request) -> None:
        self.problems.append(f"request failed: {request.url} ({request.failure})")

    def _response(self, response: Response) -> None:
        if response.status >= 400:
            self.problems.append(f"HTTP {response.status}: {response.url}")


# The boards' HTML ids (gym.site.schema.board_id): hardware kind, then the runs' suites.
GPU = "board-gpu--l1"
KB = "board-gpu--kb-l1"
CPU = "board-interpreted--l1"


def column(page: Page, board: str, index: int) -> list[str]:
    return [text.strip() for text in page.locator(f"#{board} table tbody tr td:nth-child({index})").all_inner_texts()]


@pytest.mark.parametrize("where", ["http", "file"])
def test_site_in_chromium(where: str, site: Path, server: str, browser: Browser, tmp_path: Path) -> None:
    start = server + "index.html" if where == "http" else (site / "index.html").as_uri()
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        watched = Watched(context.new_page())
        page = watched.page
        page.goto(start, wait_until="load")
        assert page.title() == "Kernel Gym leaderboard"
        assert page.locator(f"#{GPU} table").is_visible() and page.locator(f"#{CPU} table").is_visible()
        assert page.locator(f"#{GPU} svg.heatmap").is_visible() and page.locator(f"#{GPU} svg.strips").is_visible()
        # The KernelBench run's row is alone in its own table, between ours and the interpreted one.
        assert page.locator(f"#{KB} table").is_visible() and column(page, KB, 2) == ["solutions"]
        assert [page.locator("section.board").nth(n).get_attribute("id") for n in range(3)] == [GPU, KB, CPU]
        assert page.locator(f"#{GPU} svg.heatmap a[href*='kb/l1']").count() == 0
        page.screenshot(path=str(tmp_path / f"{where}-index.png"), full_page=True)

        # Sorting: agent A-Z, then Z-A; a numeric column sorts best first.
        assert column(page, GPU, 2) == ["solutions", "openai"]
        agent_head = page.locator(f"#{GPU} thead th", has_text="agent")
        agent_head.click()
        assert column(page, GPU, 2) == ["openai", "solutions"]
        assert agent_head.get_attribute("aria-sort") == "ascending"
        agent_head.click()
        assert column(page, GPU, 2) == ["solutions", "openai"]
        page.locator(f"#{GPU} thead th", has_text="geomean speedup").click()
        assert column(page, GPU, 2) == ["openai", "solutions"]
        assert column(page, GPU, 9)[0].startswith("1.99×")
        page.screenshot(path=str(tmp_path / f"{where}-sorted.png"))

        # The filter narrows every table by agent or model.
        page.locator("#filter").fill("gpt-kernel")
        assert page.locator("table.filterable tbody tr:visible").count() == 1
        assert column(page, GPU, 2)[0] == "openai" and page.locator(f"#{GPU} tbody tr:visible td:nth-child(2)").inner_text() == "openai"
        assert page.locator("#filter-count").inner_text() == "1 of 4 rows"
        page.locator("#filter").fill("SOLUTIONS")
        assert page.locator("table.filterable tbody tr:visible").count() == 3
        page.screenshot(path=str(tmp_path / f"{where}-filtered.png"))
        page.locator("#filter").fill("")
        assert page.locator("table.filterable tbody tr:visible").count() == 4

        # A task page, then a submission page, then its transcript.
        page.locator("#tasks a", has_text="l1/softmax").click()
        page.wait_for_load_state("load")
        assert page.url.endswith("tasks/l1/softmax.html")
        assert "Row softmax" in page.locator("h1").inner_text()
        assert page.locator("ul.contract li").count() >= 2
        page.screenshot(path=str(tmp_path / f"{where}-task.png"), full_page=True)
        page.locator("ol.fastest a").first.click()
        page.wait_for_load_state("load")
        assert page.url.endswith("submissions/gpu-openai/l1/softmax/2.html")
        assert "attempt 2 by openai" in page.locator("h1").inner_text()
        assert page.locator(".source .highlight").is_visible() and page.locator("svg.timing").is_visible()
        page.screenshot(path=str(tmp_path / f"{where}-submission.png"), full_page=True)
        page.locator("a.transcript-link").click()
        page.wait_for_load_state("load")
        assert page.locator(".message").count() == 4

        # An imported task's page (the task is in no task root here) links back to its own board.
        page.goto(start, wait_until="load")
        page.locator("#tasks a", has_text="kb/l1/1_relu").click()
        page.wait_for_load_state("load")
        assert page.url.endswith("tasks/kb/l1/1_relu.html") and page.locator("section.board").count() == 1
        page.locator("section.board h2 a").click()
        page.wait_for_load_state("load")
        assert page.url.endswith("index.html#" + KB)

        # Back on the index, a heat-map cell leads to the rejected submission.
        page.goto(start, wait_until="load")
        page.locator(f"#{GPU} svg.heatmap a[href$='gpu-openai/l1/rms_norm/1.html'] rect").click()
        page.wait_for_load_state("load")
        assert "input_mutated:x" in page.locator("table.facts").first.inner_text()

        assert watched.problems == []
    finally:
        context.close()
    assert sorted(path.name for path in tmp_path.glob(f"{where}-*.png")) == sorted(
        f"{where}-{name}.png" for name in ("index", "sorted", "filtered", "task", "submission")
    )
