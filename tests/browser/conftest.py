"""Browser plumbing: the ``chromium`` fixture (Debian's, with the ``playwright`` package) and a
``browser`` started from it."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import TYPE_CHECKING, NoReturn

import pytest

from tests.browser.headless import CHROMIUM, headless

if TYPE_CHECKING:
    from playwright.sync_api import Browser


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


@pytest.fixture
def browser(chromium: str) -> Iterator[Browser]:
    """A headless Chromium, for a test that runs no pytester session (see ``headless``)."""
    with headless(chromium) as launched:
        yield launched
