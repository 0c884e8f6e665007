"""Ctrl-C, SIGTERM and the session timeout stop an eval session the way pytest's ``-x`` does.

``timeout``, ``docker stop`` and a cancelled CI job send SIGTERM, which kills a Python process
on the spot: no result document, and agents left running. And a KeyboardInterrupt raised in the
middle of a run loses its report: pytest reports nothing of an item it interrupts, and an xdist
controller stops reading its workers' reports. So once a process has eval runs to make (an
xdist controller, each of its workers, or the one process of ``-n 0``), the first SIGINT or
SIGTERM there raises nothing: it puts up the stop sign (no run starts any more), stops the
runs in flight (they end ``stopped``), and asks pytest to stop after the item under way
(``session.shouldstop``, as ``-x`` does). The items being run are reported the ordinary way
(``pytest_runtest_logreport``, which xdist forwards to the controller), so every writer (JUnit,
pytest-html, the result document) has each run that started; pytest then ends the session as
interrupted (``session.Interrupted``; under xdist the workers' ``shouldstop`` does it). A second
signal, or :data:`GRACE_SECONDS` without the session ending, raises KeyboardInterrupt as pytest
would have at once: the reports still on their way are then lost.

``--eval-session-timeout`` ends a session with a SIGINT to itself; a process started with
SIGINT ignored (in the background of a non-interactive shell) takes it all the same for as long
as such a session lasts, so the limit holds there too.
"""

from __future__ import annotations

import os
import signal
import threading
from types import FrameType
from typing import Any

import pytest

from pytest_plugin_evals.plugin.keys import session_tag, stop_key
from pytest_plugin_evals.util.stop_sign import INTERRUPTED

#: How long a process that was signalled waits for its runs to report before it raises.
GRACE_SECONDS = 10.0

#: What pytest says it stopped for (and the stop sign's message).
WHY = "the session was interrupted"


class Terminated(KeyboardInterrupt):
    """SIGTERM, taken as an interruption."""


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
    sign = stop.read() if stop is not None else None
    return sign is not None and sign[0] == INTERRUPTED


class Stopping:
    """The first SIGINT or SIGTERM in this process, taken as a request to stop (see the module).

    Registered as a pytest plugin while the process takes the signals; its hooks are public
    ones: ``pytest_runtest_makereport`` sets ``session.shouldstop`` once the session was
    interrupted (by this process's signal, or another's stop sign), and
    ``pytest_sessionfinish`` ends the grace period (the document is written, not raised out of).
    """

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.signalled = False
        self.timer: threading.Timer | None = None
        self.before: dict[int, Any] = {}

    def take(self, signum: int, *, ignored_too: bool = False) -> None:
        """Take ``signum`` here (unless someone else handles it: a handler of their own, or,
        without ``ignored_too``, SIGINT ignored)."""
        if signum in self.before:
            return
        previous = signal.getsignal(signum)
        ours = (signal.SIG_DFL, None, signal.default_int_handler)
        if previous not in ours and not (ignored_too and previous is signal.SIG_IGN):
            return
        signal.signal(signum, self._signalled)
        # None: a handler set outside Python, which cannot be set back; the default is nearest.
        self.before[signum] = signal.SIG_DFL if previous is None else previous

    def _signalled(self, signum: int, frame: FrameType | None) -> None:
        if self.signalled:
            if signum == signal.SIGTERM:
                raise Terminated(f"terminated (signal {signum})")
            raise KeyboardInterrupt
        self.signalled = True
        # A signal handler runs between two bytecodes of the main thread, which may hold the
        # locks the stopping takes: it is done in a thread of its own.
        threading.Thread(target=interrupt, args=(self.config,), daemon=True).start()
        self.timer = threading.Timer(GRACE_SECONDS, _signal_self, (signum,))
        self.timer.daemon = True
        self.timer.start()

    @pytest.hookimpl
    def pytest_runtest_makereport(self, item: pytest.Item, call: pytest.CallInfo[None]) -> None:
        if call.when == "teardown" and (self.signalled or interrupted(self.config)):
            item.session.shouldstop = WHY

    @pytest.hookimpl(tryfirst=True)
    def pytest_sessionfinish(self) -> None:
        if self.timer is not None:
            self.timer.cancel()

    def restore(self) -> None:
        if self.timer is not None:
            self.timer.cancel()
        if threading.current_thread() is threading.main_thread():
            for signum, before in self.before.items():
                signal.signal(signum, before)
        self.before.clear()


def _signal_self(signum: int) -> None:
    os.kill(os.getpid(), signum)


def _stopping(config: pytest.Config) -> Stopping | None:
    """This process's :class:`Stopping`, registered on first use (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    name = "plugin-evals-stopping"
    found: Stopping | None = config.pluginmanager.get_plugin(name)
    if found is None:
        found = Stopping(config)
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
