"""What a grader reads: the final message, the trace, created files, mock calls, or one file.

``target`` (regex) and ``focus`` (llm) name the text:

- ``last_message``: the final message;
- ``trace``: every event of the run, compact JSON, one per line;
- ``files``: the paths created during the run, one per line;
- ``mock_calls``: one compact JSON line per call answered by a mock stand-in;
- ``{"source": "file", "path": "out/report.md"}``: a file inside the run's working directory
  (``./x`` is fine), at most 10 MiB, one hard link, not reached through a symbolic link that
  leaves the directory.
"""

from __future__ import annotations

import os
import re
import stat
import threading
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from pytest_plugin_evals.graders.base import GradeContext, GraderConfigError, TargetUnavailable
from pytest_plugin_evals.util.images import is_image
from pytest_plugin_evals.util.jsvalues import js_json

if TYPE_CHECKING:
    from pytest_plugin_evals.model import MockCall, Transcript

#: A focus file larger than this is refused.
MAX_FILE_BYTES = 10 * 1024 * 1024

TARGET_NAMES = ("last_message", "trace", "files", "mock_calls")

NO_MOCKS = (
    "no mock stand-ins were active in this run (--eval-mocks off, or no mocks/ directory applies "
    "to this case) — a mock_calls grader has nothing to check"
)


class FocusFileError(Exception):
    """A focus file that cannot be read; the message names the case, the file and the reason."""


def target_label(target: Any) -> str:
    """How explanations name a target: ``trace``, ``file out/report.md`` ..."""
    if isinstance(target, dict):
        return f"file {target.get('path')}"
    return "last_message" if target is None else str(target)


def target_text(target: Any, ctx: GradeContext) -> str:
    """The text a target names. Raises TargetUnavailable when there is nothing to grade."""
    t = ctx.transcript
    if target is None or target == "last_message":
        return t.final_message or ""
    if target == "trace":
        return ctx.trace_text()
    if target == "files":
        return "\n".join(t.files_created)
    if target == "mock_calls":
        if t.mock_calls is None:
            raise TargetUnavailable(NO_MOCKS)
        return "\n".join(mock_call_line(call) for call in t.mock_calls)
    if isinstance(target, dict):
        path = target.get("path")
        if target.get("source") != "file" or not isinstance(path, str) or not path.strip():
            raise GraderConfigError(
                f"a file target must be {{source: file, path: <path>}} (got {target!r})"
            )
        return read_focus_file(path, ctx)
    raise GraderConfigError(
        "target must be last_message | trace | files | mock_calls | {source: file, path}"
        f" (got {target!r})"
    )


def mock_call_line(call: MockCall) -> str:
    """One mocked call as the ``mock_calls`` target shows it, as the reference writes it:
    ``{"tool":…,"input":{…},"output":…,"isError":true,"verdict":"ok"}``."""
    error = ',"isError":true' if call.is_error else ""
    return (
        f'{{"tool":{js_json(call.tool)},"input":{js_json(call.input)},'
        f'"output":{js_json(call.output)}{error},"verdict":"ok"}}'
    )


# -- the trace --------------------------------------------------------------------------------

# Whitespace-only lines: the first, one between two newlines, the last.
_BLANK_HEAD = re.compile(r"[^\S\n]*(?:\n|\Z)")
_BLANK_INNER = re.compile(r"\n[^\S\n]*\n")
_BLANK_TAIL = re.compile(r"[^\S\n]*\Z")
_trace_cache: list[tuple[tuple[str, int, int], str]] = []
_trace_lock = threading.Lock()


def trace_text(transcript: Transcript) -> str:
    """``"\\n".join(transcript.trace_lines())``, read in one pass without a list of lines.

    The last trace read is kept (keyed by path, size and modification time), so graders of the
    same run graded one by one read a large trace once.
    """
    from pytest_plugin_evals.model import Transcript

    if type(transcript).trace_lines is not Transcript.trace_lines:
        return "\n".join(transcript.trace_lines())
    path = transcript.trace_path
    if path is None:
        return ""
    try:
        st = path.stat()
    except OSError:
        return ""
    key = (str(path), st.st_size, st.st_mtime_ns)
    with _trace_lock:
        if _trace_cache and _trace_cache[0][0] == key:
            return _trace_cache[0][1]
    text = _read_trace(path)
    with _trace_lock:
        _trace_cache[:] = [(key, text)]
    return text


def _read_trace(path: Path) -> str:
    try:
        with path.open(encoding="utf-8", errors="replace") as fh:
            full = fh.read()
    except FileNotFoundError:
        return ""
    end = len(full) - 1 if full.endswith("\n") else len(full)
    if not _has_blank_line(full, end):
        return full if end == len(full) else full[:end]
    return "\n".join(line for line in full.split("\n") if line.strip())


def _has_blank_line(text: str, end: int) -> bool:
    """Whether ``text[:end]`` has a whitespace-only line (three scans, no copies)."""
    if _BLANK_HEAD.match(text, 0, end) or _BLANK_INNER.search(text, 0, end):
        return True
    last = text.rfind("\n", 0, end)
    return last >= 0 and _BLANK_TAIL.match(text, last + 1, end) is not None


def clear_trace_cache() -> None:
    with _trace_lock:
        _trace_cache.clear()


# -- one file ---------------------------------------------------------------------------------


def read_focus_file(rel: str, ctx: GradeContext, *, images: bool = False) -> str:
    """The text of ``rel`` inside the run's working directory, checked as the module says.

    With ``images`` false an image file is refused (a regex cannot read it).
    """
    data = read_focus_bytes(rel, ctx)
    if not images and is_image(data):
        raise FocusFileError(
            _where(rel, ctx) + f'path "{rel}" is an image, which a regex cannot read'
        )
    return data.decode("utf-8", errors="replace")


def _where(rel: str, ctx: GradeContext) -> str:
    name = ctx.case_name
    head = f'case "{name}" ' if name is not None else ""
    return f'{head}grader focus file "{rel}": '


def read_focus_bytes(rel: str, ctx: GradeContext) -> bytes:
    where = _where(rel, ctx)
    cwd = ctx.transcript.cwd
    if cwd is None:
        raise FocusFileError(where + "the run has no working directory to read it from")
    parts = PurePosixPath(rel.replace("\\", "/"))
    if parts.is_absolute() or ".." in parts.parts or re.match(r"^[A-Za-z]:", rel):
        raise FocusFileError(
            where + f'path "{rel}" escapes the run directory (`..` or an absolute path) '
            "— it must name something inside it"
        )
    full = Path(cwd).joinpath(*parts.parts)
    if not full.exists():
        raise FocusFileError(where + f'path "{rel}" does not exist')
    root = Path(cwd).resolve()
    real = full.resolve()
    if not real.is_relative_to(root):
        raise FocusFileError(
            where + f'path "{rel}" leads outside the run directory through a symbolic link'
        )
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(real, flags)
    except OSError as exc:
        raise FocusFileError(where + f'path "{rel}" cannot be read ({exc.strerror})') from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise FocusFileError(where + f'path "{rel}" is not a regular file')
        if st.st_nlink > 1:
            raise FocusFileError(
                where + f'path "{rel}" has {st.st_nlink} hard links; a focus file must have one '
                "(a hard link can reach outside the run directory)"
            )
        size, data = st.st_size, b""
        if size <= MAX_FILE_BYTES:
            with os.fdopen(fd, "rb", closefd=False) as fh:
                data = fh.read(MAX_FILE_BYTES + 1)
            size = len(data)
    finally:
        os.close(fd)
    if size > MAX_FILE_BYTES:
        raise FocusFileError(
            where + f'path "{rel}" is {size} bytes, over the 10 MiB limit for a focus file'
        )
    return data
