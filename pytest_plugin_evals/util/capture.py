"""Keeping what a process printed within a budget, whatever it printed.

An agent's output is hostile input: a model can print hundreds of megabytes. :class:`Capture`
writes a stream to a file as it arrives and keeps at most about ``budget`` bytes of it, in a
bounded amount of memory:

- a line longer than ``line_limit`` keeps its first and last ``line_end`` bytes. For a JSON
  line the two ends are joined inside the string they cut (a long answer or tool output), so
  the line stays valid JSON and keeps the fields after the cut (the cost in a result event);
  a JSON line that cannot be joined so is dropped;
- once ``budget - tail_keep`` bytes are written, later lines are held back and only the last
  ``tail_keep`` bytes of them are written, after a note that says what was dropped there.

Every cut is counted; :attr:`Capture.note` says what was cut, for the run's notes.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import BinaryIO

#: What is kept of one stream.
KEEP_BYTES = 10 * 1024 * 1024
#: A file an agent created that is larger than this is listed but not kept (not copied into
#: a results folder, nor out of one).
MAX_KEPT_FILE = 10 * 1024 * 1024
#: A line longer than this keeps only its two ends.
LINE_LIMIT = 1024 * 1024
#: Of a long line: how much of each end is kept.
LINE_END = 256 * 1024
#: Once over the budget: how much of the last lines is kept.
TAIL_KEEP = 2 * 1024 * 1024

NOTE_EVENT = "pytest-plugin-evals-note"


def _size(count: int) -> str:
    if count >= 1024 * 1024:
        return f"{count / (1024 * 1024):.1f} MB"
    if count >= 1024:
        return f"{count / 1024:.1f} kB"
    return f"{count} bytes"


def _join_inside_string(head: bytes, tail: bytes, marker: bytes) -> bytes | None:
    """``head + marker + tail`` as one valid JSON line, when the cut fell inside one string;
    None otherwise. The ends move by a few bytes so an escape sequence is not split."""
    # Drop a dangling escape at the end of the head: an odd run of backslashes, or a \\u
    # whose four hex digits were cut.
    cut = head.rfind(b"\\u", max(0, len(head) - 5))
    if cut >= 0:
        head = head[:cut]
    stripped = head.rstrip(b"\\")
    if (len(head) - len(stripped)) % 2:
        head = head[:-1]
    body = tail.rstrip(b"\r\n")
    for skip in range(7):
        candidate = head + marker + body[skip:]
        try:
            json.loads(candidate)
        except (ValueError, RecursionError):
            continue
        return candidate + b"\n"
    return None


@dataclass(eq=False)
class Capture:
    """One output stream of a process, written to ``sink`` within a budget (see module doc)."""

    sink: BinaryIO
    _: KW_ONLY
    json_lines: bool
    budget: int = KEEP_BYTES
    line_limit: int = LINE_LIMIT
    line_end: int = LINE_END
    tail_keep: int = TAIL_KEEP
    written: int = field(default=0, init=False)
    seen: int = field(default=0, init=False)
    #: The current line, while it is short.
    line: bytearray = field(default_factory=bytearray, init=False)
    #: The current line's first bytes, once it is long; its last bytes; its length.
    long_head: bytes | None = field(default=None, init=False)
    long_tail: bytearray = field(default_factory=bytearray, init=False)
    long_size: int = field(default=0, init=False)
    #: Once over the budget: blocks of whole lines, the newest last.
    tail: deque[bytes] = field(default_factory=deque, init=False)
    tail_size: int = field(default=0, init=False)
    dropped_lines: int = field(default=0, init=False)
    dropped_bytes: int = field(default=0, init=False)
    cut_lines: int = field(default=0, init=False)
    cut_bytes: int = field(default=0, init=False)
    closed: bool = field(default=False, init=False)

    # -- input ------------------------------------------------------------------------------

    def feed(self, chunk: bytes) -> None:
        """Take the next bytes of the stream."""
        self.seen += len(chunk)
        first = chunk.find(b"\n")
        if first < 0:
            self._extend(chunk)
            return
        self._extend(chunk[: first + 1])
        self._end_line()
        last = chunk.rfind(b"\n")
        if last > first:
            # Whole lines, each shorter than one chunk: kept as one block.
            self._keep(chunk[first + 1 : last + 1])
        if last + 1 < len(chunk):
            self._extend(chunk[last + 1 :])

    def close(self) -> None:
        """The stream ended: write what is held back."""
        if self.closed:
            return
        self.closed = True
        if self.line or self.long_head is not None:
            self._end_line()
        if self.dropped_lines or self.dropped_bytes:
            self.sink.write(self._note_line())
        while self.tail:
            self._write(self.tail.popleft())

    # -- what was cut -----------------------------------------------------------------------

    @property
    def note(self) -> str | None:
        """What was cut from the stream, in one sentence; None when nothing was."""
        parts = []
        if self.cut_lines:
            lines = "line" if self.cut_lines == 1 else "lines"
            parts.append(f"{self.cut_lines} long {lines} cut by {_size(self.cut_bytes)}")
        if self.dropped_lines or self.dropped_bytes:
            lines = "line" if self.dropped_lines == 1 else "lines"
            parts.append(
                f"{self.dropped_lines} {lines} ({_size(self.dropped_bytes)}) dropped "
                "from the middle"
            )
        if not parts:
            return None
        return f"output of {_size(self.seen)} kept within {_size(self.budget)}: " + ", ".join(parts)

    # -- the work ---------------------------------------------------------------------------

    def _extend(self, piece: bytes) -> None:
        if not piece:
            return
        if self.long_head is None:
            self.line += piece
            if len(self.line) > self.line_limit:
                self.long_head = bytes(self.line[: self.line_end])
                self.long_tail = bytearray(self.line[-self.line_end :])
                self.long_size = len(self.line)
                self.line = bytearray()
            return
        self.long_size += len(piece)
        self.long_tail += piece
        if len(self.long_tail) > 2 * self.line_end:
            del self.long_tail[: -self.line_end]

    def _end_line(self) -> None:
        if self.long_head is None:
            line = bytes(self.line)
            self.line = bytearray()
        else:
            line = self._cut_line(self.long_head, bytes(self.long_tail[-self.line_end :]))
            self.long_head = None
            self.long_tail = bytearray()
            self.long_size = 0
        self._keep(line)

    def _cut_line(self, head: bytes, tail: bytes) -> bytes:
        cut = self.long_size - len(head) - len(tail)
        self.cut_lines += 1
        self.cut_bytes += cut
        marker = f" [... {_size(cut)} cut by pytest-plugin-evals ...] ".encode()
        if self.json_lines and head.lstrip().startswith(b"{"):
            joined = _join_inside_string(head, tail, marker)
            if joined is not None:
                return joined
            return self._event(f"a JSON line of {_size(self.long_size)} was dropped")
        return head + marker + tail

    def _event(self, text: str) -> bytes:
        if self.json_lines:
            return json.dumps({"type": NOTE_EVENT, "note": text}).encode() + b"\n"
        return f"[pytest-plugin-evals: {text}]\n".encode()

    def _note_line(self) -> bytes:
        lines = "line" if self.dropped_lines == 1 else "lines"
        return self._event(
            f"{self.dropped_lines} {lines} ({_size(self.dropped_bytes)}) dropped here: "
            f"the output was longer than {_size(self.budget)}"
        )

    def _keep(self, block: bytes) -> None:
        if not block:
            return
        head_limit = self.budget - self.tail_keep
        if not self.tail and self.written + len(block) <= head_limit:
            self._write(block)
            return
        if not self.tail and self.written < head_limit:
            # The block that crosses the budget: its whole lines that still fit go out now.
            room = head_limit - self.written
            fits = block.rfind(b"\n", 0, room) + 1
            self._write(block[:fits])
            block = block[fits:]
            if not block:
                return
        self.tail.append(block)
        self.tail_size += len(block)
        while len(self.tail) > 1 and self.tail_size - len(self.tail[0]) >= self.tail_keep:
            dropped = self.tail.popleft()
            self.tail_size -= len(dropped)
            self.dropped_bytes += len(dropped)
            self.dropped_lines += dropped.count(b"\n") or 1

    def _write(self, block: bytes) -> None:
        self.sink.write(block)
        self.written += len(block)


def capture_file(source: Path, target: Path, *, json_lines: bool) -> str | None:
    """Copy ``source`` (a file a process wrote itself) to ``target`` within the budget;
    returns :attr:`Capture.note`."""
    with source.open("rb") as src:
        return capture_stream(src, target, json_lines=json_lines)


def capture_stream(source: BinaryIO, target: Path, *, json_lines: bool) -> str | None:
    """Copy the open file ``source`` to ``target`` within the budget; returns
    :attr:`Capture.note` (None when nothing was cut, and the copy is byte for byte)."""
    with target.open("wb") as out:
        capture = Capture(out, json_lines=json_lines)
        while chunk := source.read(1 << 16):
            capture.feed(chunk)
        capture.close()
    return capture.note
