"""Ctrl-C, SIGTERM and the session timeout stop an eval session the way pytest's ``-x`` does.

Once a process has eval runs to make (an xdist controller, each worker, or the one process of
``-n 0``), its first SIGINT or SIGTERM raises nothing
(:class:`~pytest_plugin_evals.util.stop_sign.Stopping`): the stop sign goes up, the runs in
flight stop, and pytest stops after the item under way (``session.shouldstop``). That item is
reported the ordinary way (which xdist forwards to the controller), so every writer (JUnit,
pytest-html, the result document) has each run that started; pytest then ends the session as
interrupted. ``--eval-session-timeout`` ends a session with a SIGINT to itself, taken even in a
process started with SIGINT ignored (in the background of a non-interactive shell).
"""

from __future__ import annotations

import signal
import threading

import pytest

from pytest_plugin_evals.plugin.keys import session_tag, stop_key
from pytest_plugin_evals.util.stop_sign import INTERRUPTED, Stopping

#: What pytest says it stopped for (and the stop sign's message).
WHY = "the session was interrupted"


def interrupt(config: pytest.Config) -> None:
    """No run of the session starts any more, and those in flight (in every process) stop."""
    from pytest_plugin_evals.util.process import SESSION_TAG, kill_tagged, stop_all

    stop = config.stash.get(stop_key, None)
    if stop is not None:
        stop.put(INTERRUPTED, WHY)  # before the runs are killed: they read it as "stopped"
    stop_all()  # this process's runs return at once, ``stopped``
    kill_tagged(SESSION_TAG, session_tag(config))  # and every other process's (Linux)


def interrupted(config: pytest.Config) -> bool:
    """Whether the stop sign says the session was interrupted."""
    stop = config.stash.get(stop_key, None)
    return stop is not None and stop.interrupted()


class StopAfterItem(Stopping):
    """This process's :class:`Stopping`, registered as a pytest plugin while the process takes
    the signals; its hooks are public ones: ``pytest_runtest_makereport`` sets
    ``session.shouldstop`` once the session was interrupted (by this process's signal, or
    another's stop sign), and ``pytest_sessionfinish`` ends the grace period (the document is
    written, not raised out of)."""

    def __init__(self, config: pytest.Config) -> None:
        super().__init__(lambda: interrupt(config))
        self.config = config

    @pytest.hookimpl
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> None:
        if call.when == "teardown" and (self.signalled or interrupted(self.config)):
            item.session.shouldstop = WHY

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        self.ended()


def _stopping(config: pytest.Config) -> StopAfterItem | None:
    """This process's :class:`StopAfterItem`, registered on first use (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    name = "plugin-evals-stopping"
    found: StopAfterItem | None = config.pluginmanager.get_plugin(name)
    if found is None:
        found = StopAfterItem(config)
        config.pluginmanager.register(found, name)

        def unregister() -> None:
            assert found is not None
            found.restore()
            config.pluginmanager.unregister(found)

        config.add_cleanup(unregister)
    return found


def terminate_as_interrupt(config: pytest.Config) -> None:
    """Stop this process's part of the session on its first SIGINT or SIGTERM (see the
    module), until the session ends."""
    stopping = _stopping(config)
    if stopping is not None:
        stopping.take(signal.SIGINT)
        if hasattr(signal, "SIGTERM"):
            stopping.take(signal.SIGTERM)


def interrupt_as_ctrl_c(config: pytest.Config) -> None:
    """As :func:`terminate_as_interrupt`, and take SIGINT even where the process was started
    with it ignored (``pytest &`` in a CI script): ``--eval-session-timeout`` ends the session
    with a SIGINT to itself, which would otherwise be lost."""
    stopping = _stopping(config)
    if stopping is not None:
        stopping.take(signal.SIGINT, ignored_too=True)
    terminate_as_interrupt(config)
