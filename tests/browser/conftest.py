"""The browser of the page tests: Debian's Chromium driven by Playwright (never a downloaded
browser), and a page that fails its test on any console error."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

CHROMIUM = "/usr/bin/chromium"  # Debian's; `make test-setup` installs it (never a downloaded one)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def console_errors() -> list[str]:
    """The console errors and uncaught script errors of the test's page."""
    return []


@pytest.fixture
def page(browser: Browser, console_errors: list[str]) -> Iterator[Page]:
    """A page that fails the test on any console error or uncaught script error."""
    context = browser.new_context()
    opened = context.new_page()
    opened.set_default_timeout(5000)
    opened.on("console", lambda m: console_errors.append(m.text) if m.type == "error" else None)
    opened.on("pageerror", lambda e: console_errors.append(str(e)))
    yield opened
    context.close()
    assert console_errors == []
