"""Headless Chromium (Debian's package) for the viewer tests, and a page that watches itself.

Every `WatchedPage` records console errors, uncaught exceptions, failed requests and
error responses; `check` writes a screenshot to the artifacts directory
(``$PONDER_ARTIFACTS``, else ``test-artifacts/``, which git ignores) and fails on any of
them, or when the page is wider than its viewport (a horizontal scroll bar).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = Path(
    os.environ.get("PONDER_ARTIFACTS") or Path(__file__).resolve().parents[2] / "test-artifacts"
)
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here not in item.path.parents:
            continue  # the hook sees the whole session's tests
        item.add_marker(pytest.mark.browser)
        if not CHROMIUM.exists():
            item.add_marker(pytest.mark.skip(reason="needs Debian's chromium at /usr/bin/chromium"))


@pytest.fixture(scope="session")
def sync_api() -> Any:
    return pytest.importorskip("playwright.sync_api")


@pytest.fixture(scope="module")
def browser(sync_api: Any) -> Iterator[Any]:
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=ARGS)
        try:
            yield launched
        finally:
            launched.close()


@dataclass
class WatchedPage:
    """A page and what went wrong on it; ``allowed`` statuses are expected answers."""

    page: Any
    allowed: set[int] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)
    urls: list[str] = field(default_factory=list)

    def watch(self) -> WatchedPage:
        page = self.page
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.problems.append(f"page error: {error}"))
        page.on("requestfailed", self._failed)
        page.on("response", self._response)
        page.on("request", lambda request: self.urls.append(request.url))
        return self

    def _console(self, message: Any) -> None:
        if message.type == "error" and "Failed to load resource" not in message.text:
            self.problems.append(f"console error: {message.text}")

    def _failed(self, request: Any) -> None:
        if request.failure != "net::ERR_ABORTED":  # a stream the page closed itself
            self.problems.append(f"request failed: {request.url} ({request.failure})")

    def _response(self, response: Any) -> None:
        if response.status >= 400 and response.status not in self.allowed:
            self.problems.append(f"HTTP {response.status}: {response.url}")

    def check(self, name: str, visible: tuple[str, ...] = ()) -> None:
        """Screenshot the page as ``name``.png, then fail on anything that went wrong.

        Each selector of ``visible`` must match a visible element inside the viewport's width.
        """
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
        width, inner = self.page.evaluate(
            "() => [document.documentElement.scrollWidth, window.innerWidth]"
        )
        assert width <= inner, f"{name}: the page is {width} px wide in {inner} px"
        for selector in visible:
            found = self.page.locator(selector).first
            assert found.is_visible(), f"{name}: {selector} is not visible"
            box = found.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= inner + 0.5, (name, selector, box)
        assert self.problems == [], self.problems


@pytest.fixture
def open_page(browser: Any) -> Iterator[Any]:
    contexts: list[Any] = []

    def make(viewport: dict[str, int] = DESKTOP, allowed: tuple[int, ...] = ()) -> WatchedPage:
        context = browser.new_context(viewport=viewport)
        contexts.append(context)
        return WatchedPage(context.new_page(), set(allowed)).watch()

    yield make
    for context in contexts:
        context.close()
