"""Browser plumbing: the ``chromium`` fixture (Debian's, with the ``playwright`` package) and the
``browser`` the folder's tests share: one headless Chromium per test process, started by the
first test that asks for it and closed once the process's next test is not in this folder
(starting Chromium costs more CPU than most of the tests that use it)."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

from tests.browser.headless import CHROMIUM, headless

if TYPE_CHECKING:
    from playwright.sync_api import Browser

HERE = Path(__file__).parent


def _missing(reason: str) -> NoReturn:
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def chromium() -> str:
    """Debian's ``chromium`` (``apt-get install chromium``), with the ``playwright`` package.

    Outside CI the tests that need it skip when either is absent; in CI (``$CI`` set) they fail.
    """
    if not CHROMIUM.is_file():
        _missing(f"{CHROMIUM} was not found (apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _missing("the playwright package is not installed (pip install -e '.[testing]')")
    return str(CHROMIUM)


class _Shared:
    """The process's one headless Chromium, started on first use."""

    def __init__(self) -> None:
        self.stack: contextlib.ExitStack | None = None
        self.browser: Browser | None = None

    def get(self, executable: str) -> Browser:
        if self.browser is None or not self.browser.is_connected():
            self.close()
            stack = contextlib.ExitStack()
            self.browser = stack.enter_context(headless(executable))
            self.stack = stack
        return self.browser

    def close(self) -> None:
        stack, self.stack, self.browser = self.stack, None, None
        if stack is not None:
            stack.close()


_SHARED = _Shared()


@pytest.fixture
def browser(chromium: str) -> Iterator[Browser]:
    """The shared headless Chromium; the pages a test leaves open are closed after it (each
    ``new_page`` is a browser context of its own: no cookie or storage crosses tests)."""
    launched = _SHARED.get(chromium)
    yield launched
    for context in launched.contexts:
        context.close()


def _here(item: pytest.Item | None) -> bool:
    return item is not None and Path(str(item.path)).is_relative_to(HERE)


def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    """Close the shared Chromium once this folder's tests are done in this process: while
    Playwright's sync API is open, asyncio sees an event loop running in this thread, which
    the sessions of other folders' tests must not meet."""
    if not _here(nextitem):
        _SHARED.close()


def pytest_sessionfinish() -> None:
    _SHARED.close()
