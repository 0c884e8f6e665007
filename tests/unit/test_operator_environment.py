"""The operator's environment is read whole while another thread sets and unsets a variable,
as pytest does with ``PYTEST_CURRENT_TEST`` at every test phase while runs made ahead read it."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator

import pytest

from pytest_plugin_evals.util.environment import operator_environment

NAME = "PYTEST_PLUGIN_EVALS_CHURN"


@pytest.fixture
def churn() -> Iterator[None]:
    """Another thread sets and unsets a variable (and many variables are there to list, so
    a copy is long enough to be overtaken) until the test ends."""
    padding = {f"PYTEST_PLUGIN_EVALS_PAD_{i}": "x" * 50 for i in range(2000)}
    os.environ.update(padding)
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            os.environ[NAME] = "1"
            os.environ.pop(NAME, None)

    thread = threading.Thread(target=flip, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
        for name in padding:
            os.environ.pop(name, None)
        os.environ.pop(NAME, None)


def copies_fail(copy: Callable[[], dict[str, str]], tries: int) -> bool:
    """Whether one of up to ``tries`` copies fails (it stops at the first)."""
    try:
        for _ in range(tries):
            env = copy()
            assert env["PYTEST_PLUGIN_EVALS_PAD_7"] == "x" * 50
    except KeyError:
        return True
    return False


@pytest.fixture
def often() -> Iterator[None]:
    """Threads switch as often as they can, so the other one runs in the middle of a copy."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(interval)


def test_a_copy_holds_while_another_thread_unsets_a_variable(churn: None, often: None) -> None:
    assert not copies_fail(operator_environment, 200)


def test_the_plain_copy_it_replaces_does_not(churn: None, often: None) -> None:
    """What the test above guards against is real: ``dict(os.environ)`` fails under the same
    churn."""
    assert copies_fail(lambda: dict(os.environ), 100_000)
