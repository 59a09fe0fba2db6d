"""A real browser for the report tests: Debian's Chromium driven by Playwright (both installed by
`make test`; without them the tests skip, except on CI where they must run)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from typing import Any

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync",
]  # fmt: skip


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Per module: Playwright's sync API runs an event loop in this thread while it is open,
    which async tests of other modules (pytest-asyncio) must not find running."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        if os.environ.get("CI"):
            raise
        pytest.skip("playwright is not installed (make install)")
    if CHROMIUM is None:
        if os.environ.get("CI"):
            pytest.fail("chromium is not installed (make browser installs Debian's package)")
        pytest.skip("chromium is not installed (make browser)")
    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def page(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1300, "height": 1000})
    opened = context.new_page()
    opened.console_messages = []  # type: ignore[attr-defined]
    opened.on("console", lambda msg: opened.console_messages.append((msg.type, msg.text)))
    opened.on("pageerror", lambda exc: opened.console_messages.append(("pageerror", str(exc))))
    yield opened
    context.close()
