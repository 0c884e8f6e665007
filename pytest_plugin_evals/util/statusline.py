"""A status line that a thread redraws under the terminal's current line: where it goes (a
duplicate of the terminal's descriptor), whether that terminal can redraw a line in place, and
the cursor moves that draw and erase it (``engine.progress`` draws it)."""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TextIO


def redraws(stream: TextIO) -> bool:
    """Whether ``stream`` is a terminal that understands cursor moves."""
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        return False
    return tty and sys.platform != "win32" and os.environ.get("TERM") != "dumb"


def back_to(column: int) -> str:
    """Up from the status line to the line above, the cursor at ``column`` of it."""
    return "\x1b[1A\r" + (f"\x1b[{column}C" if column else "")


def draw(line: str, column: int, *, shown: bool) -> str:
    """``line`` drawn under the cursor's line (on a new line, unless one is ``shown`` there
    already), the rest of that line cleared, the cursor back at ``column`` above."""
    down = "\x1b[1B\r" if shown else "\n\r"
    return f"{down}{line}\x1b[K{back_to(column)}"


def erase(column: int) -> str:
    """The status line under the cursor's line cleared, the cursor back at ``column`` above."""
    return f"\x1b[1B\r\x1b[K{back_to(column)}"


class StatusOutput:
    """Where the status goes: a duplicate of ``stream``'s descriptor (a capture of the item in
    flight may hold the descriptor itself), else ``stream`` (one without a descriptor)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.encoding = getattr(stream, "encoding", None) or "utf-8"
        self.fd: int | None = None
        self.broken = False
        with contextlib.suppress(AttributeError, OSError, ValueError):
            self.fd = os.dup(stream.fileno())

    def write(self, text: str) -> None:
        """Write ``text``; an output that went away (a closed pipe) takes nothing more."""
        if self.broken:
            return
        try:
            if self.fd is None:
                self._write_stream(text)
                return
            data = text.encode(self.encoding, "replace")
            while data:
                data = data[os.write(self.fd, data) :]
        except (OSError, ValueError):
            self.broken = True

    def _write_stream(self, text: str) -> None:
        try:
            self.stream.write(text)
        except UnicodeEncodeError:
            self.stream.write(text.encode("ascii", "replace").decode("ascii"))
        self.stream.flush()

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
