"""SIGTERM ends an eval session the way Ctrl-C does, and so does the session timeout.

``timeout``, ``docker stop`` and a cancelled CI job send SIGTERM, which kills a Python process
on the spot: no result document, and agents left running. Once a process has eval runs to make,
SIGTERM raises :class:`KeyboardInterrupt` there instead (unless someone else handles the
signal), so the runs in flight are stopped, the runs made so far are kept, and the session ends
with ``partial: true, partialReason: "interrupted"``.

``--eval-session-timeout`` ends a session with a SIGINT to itself; a process started with
SIGINT ignored (in the background of a non-interactive shell) takes it as Ctrl-C again for as
long as such a session lasts, so the limit holds there too.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType

import pytest


class Terminated(KeyboardInterrupt):
    """SIGTERM, taken as an interruption."""


def _raise(signum: int, frame: FrameType | None) -> None:
    raise Terminated(f"terminated (signal {signum})")


def terminate_as_interrupt(config: pytest.Config) -> None:
    """Take SIGTERM as Ctrl-C in this process, until the session ends."""
    if threading.current_thread() is not threading.main_thread():
        return
    if not hasattr(signal, "SIGTERM") or signal.getsignal(signal.SIGTERM) is not signal.SIG_DFL:
        return  # another handler is in charge (or this is done already)
    signal.signal(signal.SIGTERM, _raise)
    config.add_cleanup(_restore)


def _restore() -> None:
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, signal.SIG_DFL)


def interrupt_as_ctrl_c(config: pytest.Config) -> None:
    """Take SIGINT as Ctrl-C in this process, until the session ends, even where it was
    started with SIGINT ignored (in the background of a non-interactive shell: ``pytest &``
    in a CI script). ``--eval-session-timeout`` ends the session with a SIGINT to itself,
    which would otherwise be lost, and the session would go on past its limit."""
    if threading.current_thread() is not threading.main_thread():
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous not in (signal.SIG_IGN, signal.SIG_DFL, None):
        return  # Python's own handler (or another's) is in charge
    signal.signal(signal.SIGINT, signal.default_int_handler)
    # None: a handler set outside Python, which cannot be set back; the default is the nearest.
    before = signal.SIG_DFL if previous is None else previous

    def restore() -> None:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, before)

    config.add_cleanup(restore)
