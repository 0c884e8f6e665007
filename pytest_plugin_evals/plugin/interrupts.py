"""Ctrl-C, SIGTERM and ``--eval-session-timeout`` stop an eval session the way pytest's ``-x``
does (:class:`~pytest_plugin_evals.util.stop_sign.Stopping`): pytest stops after the item under
way, reported the ordinary way (which xdist forwards), so every writer has each run that started.
"""

from __future__ import annotations

import threading

import pytest

from pytest_plugin_evals.plugin.keys import session_tag, stop_key
from pytest_plugin_evals.util.stop_sign import WHY as WHY
from pytest_plugin_evals.util.stop_sign import Stopping, interrupt


def interrupted(config: pytest.Config) -> bool:
    """Whether the stop sign says the session was interrupted."""
    stop = config.stash.get(stop_key, None)
    return stop is not None and stop.interrupted()


class StopAfterItem(Stopping):
    """This process's :class:`Stopping`, registered as a pytest plugin while the process takes
    the signals: ``session.shouldstop`` is set once the session was interrupted (by this
    process's signal, or another's stop sign); the session's end ends the grace period."""

    def __init__(self, config: pytest.Config) -> None:
        super().__init__(lambda: interrupt(config.stash.get(stop_key, None), session_tag(config)))
        self.config = config

    @pytest.hookimpl
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> None:
        if call.when == "teardown" and (self.signalled or interrupted(self.config)):
            item.session.shouldstop = WHY

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        self.ended()

    def unregister(self) -> None:
        self.restore()
        self.config.pluginmanager.unregister(self)


def terminate_as_interrupt(config: pytest.Config, *, ignored_too: bool = False) -> None:
    """Stop this process's part of the session on its first SIGINT or SIGTERM (see
    :meth:`Stopping.take_interrupts`), until the session ends (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return
    found: StopAfterItem | None = config.pluginmanager.get_plugin("plugin-evals-stopping")
    if found is None:
        found = StopAfterItem(config)
        config.pluginmanager.register(found, "plugin-evals-stopping")
        config.add_cleanup(found.unregister)
    found.take_interrupts(ignored_too=ignored_too)
