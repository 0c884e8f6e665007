"""File locks (``flock``) on files that processes share (a results folder's hold, the
baseline's cache): held for a block, or tried without waiting. (The session's budget is no
file: the controller holds it.)

A lock belongs to an open file description: two ``open`` calls of one file contend, in two
processes or in two threads of one. It is released when the file is closed or its process
dies. Where the platform has no ``flock`` (Windows), :data:`AVAILABLE` is False: :func:`held`
holds nothing and each caller says what it does instead.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import IO, Any

try:
    import fcntl
except ImportError:  # Windows
    fcntl = None  # type: ignore[assignment]

#: Whether this platform has file locks.
AVAILABLE = fcntl is not None


@contextlib.contextmanager
def held(fh: IO[Any], *, shared: bool = False) -> Iterator[None]:
    """Hold an exclusive (``shared``: a shared) lock on the open file ``fh`` for the block,
    waiting for it as long as another file description holds a conflicting one. Without
    file locks (:data:`AVAILABLE`), the block runs unlocked."""
    if fcntl is None:
        yield
        return
    fcntl.flock(fh, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(fh, fcntl.LOCK_UN)


def try_exclusive(fh: IO[Any]) -> bool:
    """Take an exclusive lock on the open file ``fh`` without waiting: False when another file
    description holds a lock on it (busy). Held until :func:`release`, the file is closed or
    the process ends. Any other failure (a file system without locks) is raised as
    :class:`OSError`; only call it where :data:`AVAILABLE`."""
    try:
        fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def release(fh: IO[Any]) -> None:
    """Let go of the lock this file description holds on ``fh`` (none: nothing happens)."""
    if fcntl is not None:
        fcntl.flock(fh, fcntl.LOCK_UN)
