"""What every process of a session shares through a file in its shared folder: the
:class:`StopSign`, why no further run may start (a rejected credential, an interruption), once
any process has found out. The first reason written stays. (The budget is not a file: it is
held by the controller, see :mod:`pytest_plugin_evals.engine.budget`.)

And how a process takes its first SIGINT or SIGTERM (:class:`Stopping`): ``timeout``, ``docker
stop`` and a cancelled CI job send SIGTERM, which kills a Python process on the spot (no result
document, agents left running), and a KeyboardInterrupt raised in the middle of a run loses its
report (pytest reports nothing of an item it interrupts, and an xdist controller stops reading
its workers' reports). So once a process has eval runs to make, the first signal raises
nothing: it stops the session's runs (the stop sign up, the runs in flight ended ``stopped``),
and the pytest shell (``plugin.interrupts``) stops after the item under way, as ``-x`` does. A
second signal, or :data:`GRACE_SECONDS` without the session ending, raises KeyboardInterrupt as
pytest would have at once: the reports still on their way are then lost.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

#: The stop sign's reason once the session was interrupted (no run is recorded for it), and
#: what the sign and pytest (``session.shouldstop``) say it stopped for.
INTERRUPTED = "interrupted"
WHY = "the session was interrupted"


class StopSign:
    """A reason to start no more runs, written once by whichever process finds it first."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)

    def put(self, reason: str, message: str) -> None:
        """Raise the sign (a sign already up stays as it is)."""
        try:
            with self.path.open("x", encoding="utf-8") as fh:
                fh.write(f"{reason}\n{message}\n")
        except FileExistsError:
            pass

    def read(self) -> tuple[str, str] | None:
        """The reason and its message, once the sign is up."""
        try:
            reason, _, message = self.path.read_text(encoding="utf-8").partition("\n")
        except FileNotFoundError:
            return None
        return (reason, message.strip()) if reason else None

    def interrupted(self) -> bool:
        """Whether the sign says the session was interrupted."""
        sign = self.read()
        return sign is not None and sign[0] == INTERRUPTED


def interrupt(stop: StopSign | None, tag: str) -> None:
    """No run of the session (tagged ``tag``) starts any more, and those in flight, in every
    process, stop: the sign goes up first (the runs killed read it as "stopped")."""
    from pytest_plugin_evals.util.process import SESSION_TAG, kill_tagged, stop_all

    if stop is not None:
        stop.put(INTERRUPTED, WHY)
    stop_all()  # this process's runs return at once, ``stopped``
    kill_tagged(SESSION_TAG, tag)  # and every other process's (Linux)


#: How long a process that was signalled waits for its runs to report before it raises.
GRACE_SECONDS = 10.0


class Terminated(KeyboardInterrupt):
    """SIGTERM, taken as an interruption."""


class Stopping:
    """The first SIGINT or SIGTERM in this process, taken as a request to stop: ``stop`` is
    called (in a thread of its own), and the process raises only on a second signal or once
    :data:`GRACE_SECONDS` have passed."""

    def __init__(self, stop: Callable[[], None]) -> None:
        self.stop = stop
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

    def take_interrupts(self, *, ignored_too: bool = False) -> None:
        """Take SIGINT and SIGTERM; with ``ignored_too``, SIGINT even where the process was
        started with it ignored (``pytest &`` in a CI script): ``--eval-session-timeout`` ends
        the session with a SIGINT to itself, which would otherwise be lost."""
        self.take(signal.SIGINT, ignored_too=ignored_too)
        if hasattr(signal, "SIGTERM"):
            self.take(signal.SIGTERM)

    def _signalled(self, signum: int, frame: FrameType | None) -> None:
        if self.signalled:
            if signum == signal.SIGTERM:
                raise Terminated(f"terminated (signal {signum})")
            raise KeyboardInterrupt
        self.signalled = True
        # A signal handler runs between two bytecodes of the main thread, which may hold the
        # locks the stopping takes: it is done in a thread of its own.
        threading.Thread(target=self.stop, daemon=True).start()
        self.timer = threading.Timer(GRACE_SECONDS, os.kill, (os.getpid(), signum))
        self.timer.daemon = True
        self.timer.start()

    def ended(self) -> None:
        """The session ended: no grace period runs out any more."""
        if self.timer is not None:
            self.timer.cancel()

    def restore(self) -> None:
        """The handlers as they were (from the main thread only)."""
        self.ended()
        if threading.current_thread() is threading.main_thread():
            for signum, before in self.before.items():
                signal.signal(signum, before)
        self.before.clear()
