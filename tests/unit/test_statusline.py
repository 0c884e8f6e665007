"""Where the progress line goes (``util.statusline``): a duplicate of the terminal's descriptor,
a stream without one, and an output that went away."""

from __future__ import annotations

import io
import os

import pytest

from pytest_plugin_evals.util.statusline import StatusOutput, redraws


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
