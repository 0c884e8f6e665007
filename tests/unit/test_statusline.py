"""Where the progress line goes (``util.statusline``): a duplicate of the terminal's descriptor,
a stream without one, and an output that went away; the cursor moves that draw and erase it."""

from __future__ import annotations

import io
import os
import re

import pytest

from pytest_plugin_evals.util.statusline import StatusOutput, draw, erase, redraws


def test_the_line_goes_to_a_duplicate_of_the_descriptor() -> None:
    read, write = os.pipe()
    with os.fdopen(write, "w", encoding="utf-8") as stream:
        output = StatusOutput(stream)
        assert output.fd is not None and output.fd != write
        output.write("3/10 runs ✓\n")
        output.close()
    with os.fdopen(read, "rb") as pipe:
        assert pipe.read() == "3/10 runs ✓\n".encode()


def test_a_stream_without_a_descriptor_is_written_itself_in_what_it_can_encode() -> None:
    raw = io.BytesIO()
    stream = io.TextIOWrapper(raw, encoding="ascii")  # no descriptor, as a captured stream
    output = StatusOutput(stream)
    assert output.fd is None
    output.write("done ✓")
    assert raw.getvalue() == b"done ?"


def test_an_output_that_went_away_takes_nothing_more() -> None:
    read, write = os.pipe()
    with os.fdopen(write, "w", encoding="utf-8") as stream:
        output = StatusOutput(stream)
        os.close(read)
        output.write("x" * 70000)  # the reader is gone: EPIPE, no exception
        assert output.broken
        output.write("more")
        output.close()


def test_only_a_terminal_that_moves_its_cursor_redraws(monkeypatch: pytest.MonkeyPatch) -> None:
    assert not redraws(io.StringIO())
    read, write = os.pipe()
    with os.fdopen(write, "w") as pipe:
        assert not redraws(pipe)
    os.close(read)
    tty = io.StringIO()
    tty.isatty = lambda: True  # type: ignore[method-assign]
    monkeypatch.setenv("TERM", "xterm")
    assert redraws(tty)
    monkeypatch.setenv("TERM", "dumb")
    assert not redraws(tty)


def screen_after(writes: list[str]) -> tuple[list[str], tuple[int, int]]:
    """The lines of a terminal and its cursor (row, column) after ``writes``: text, newline,
    carriage return and the moves the status line uses (up, down, right, clear to the end)."""
    rows, row, col = [""], 0, 0
    for text in writes:
        for move in re.findall(r"\x1b\[\d*[ABCK]|\n|\r|[^\x1b\n\r]", text):
            if move == "\n":
                row += 1
            elif move == "\r":
                col = 0
            elif move.startswith("\x1b"):
                count, kind = int(move[2:-1] or 1), move[-1]
                row += {"A": -count, "B": count}.get(kind, 0)
                col += count if kind == "C" else 0
            while len(rows) <= row:
                rows.append("")
            if move == "\x1b[K":
                rows[row] = rows[row][:col]
            elif not move.startswith("\x1b") and move not in "\n\r":
                rows[row] = rows[row][:col].ljust(col) + move + rows[row][col + 1 :]
                col += 1
    return rows, (row, col)


def test_the_line_is_drawn_under_the_cursor_and_the_cursor_put_back() -> None:
    rows, cursor = screen_after(["tests/x.py ..", draw("2/9 runs", 13, shown=False)])
    assert rows == ["tests/x.py ..", "2/9 runs"] and cursor == (0, 13)
    # pytest writes on; the redraw replaces the line, a shorter one leaves nothing behind
    rows, cursor = screen_after(
        ["tests/x.py ..", draw("2/9 runs", 13, shown=False), ".", draw("3/9", 14, shown=True)]
    )
    assert rows == ["tests/x.py ...", "3/9"] and cursor == (0, 14)


def test_an_erased_line_leaves_the_screen_as_pytest_left_it() -> None:
    rows, cursor = screen_after(["..", draw("1/2 runs", 2, shown=False), erase(2)])
    assert rows == ["..", ""] and cursor == (0, 2)
    rows, cursor = screen_after(["", draw("1/2 runs", 0, shown=False), erase(0)])
    assert rows == ["", ""] and cursor == (0, 0)
