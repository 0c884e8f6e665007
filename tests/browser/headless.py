"""Debian's Chromium, driven headless by Playwright (never a browser Playwright downloads)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Browser

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@contextmanager
def headless(executable: str) -> Iterator[Browser]:
    """A headless Chromium for the block. While Playwright's sync API is open, asyncio sees its
    event loop as running in this thread: code that starts a loop of its own (``asyncio.run``)
    cannot run inside the block. The package starts none, so a pytester session may run there
    (the folder's tests share one browser: ``tests/browser/conftest.py``)."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()
