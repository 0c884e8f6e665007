"""Regular expressions matched in a helper process that can be stopped.

A pattern such as ``(a+)+$`` against 30,000 ``a`` and a ``!`` backtracks for longer than anyone
waits, and neither Python's ``re`` nor the embedded JavaScript engine can be interrupted from
Python while it does. So patterns matched under a time limit (grading sets one) run in a helper
process, one per process that needs it, started on first use: the text goes down a pipe, the
answer comes back; past the limit, or on Ctrl-C, the helper is killed and the next call starts
a new one.

    python -m pytest_plugin_evals.util.regexbox      # the helper: requests on stdin

A request is one JSON line ``{"op", "dialect", "source", "flags"}``, a line with the length of
the text in bytes, then the text (UTF-8, lone surrogates kept); the answer is one JSON line,
``{"ok": value}`` or ``{"error": "message"}``.

The helper ends with the process that started it, even while a pattern keeps it busy in C code
that never lets Python run: on Linux it asks the kernel, first thing, to kill it when its parent
ends (``prctl(PR_SET_PDEATHSIG, SIGKILL)``), then checks that its parent is still the process
that started it (one that ended before the request took effect is caught there). A controller
killed with SIGKILL mid-grading so leaves no helper spinning. The kernel means the *thread* that
started the helper: one started by a thread that has since ended is killed with it, and the
next call starts a new one. Elsewhere the helper ends when its standard input closes, between
two patterns.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from typing import Any

from pytest_plugin_evals.util.environment import operator_environment

#: The PID of the process that started the helper, in the helper's environment.
PARENT_VARIABLE = "PYTEST_PLUGIN_EVALS_REGEX_PARENT"

#: ``prctl``'s option that sets the signal a process gets when its parent ends (linux/prctl.h).
PR_SET_PDEATHSIG = 1


class PatternTimeout(Exception):
    """Matching did not end within the time limit."""


class PatternError(Exception):
    """The engine refused the pattern (its message, as the engine words it)."""


def evaluate(op: str, dialect: str, source: str, flags: str, text: str) -> Any:
    """Match in this process: ``op`` is ``test``, ``count`` or ``first``."""
    from pytest_plugin_evals.util import jsregex

    pattern = (
        jsregex.JSPattern(source, flags) if dialect == "js" else jsregex.PyPattern(source, flags)
    )
    if op == "test":
        return pattern.search_here(text)
    if op == "count":
        return pattern.count_here(text)
    return pattern.first_here(text)


class RegexBox:
    """The helper process of this process, and calls to it with a deadline."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[bytes] | None = None
        self.lock = threading.Lock()

    def _start(self) -> subprocess.Popen[bytes]:
        if self.proc is not None and self.proc.poll() is not None:
            self.stop()  # it ended (with the thread that started it): its pipes are closed
        if self.proc is None:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", __name__],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                env={**operator_environment(), PARENT_VARIABLE: str(os.getpid())},
            )
        return self.proc

    def __del__(self) -> None:
        # A box dropped with its module (an in-process pytester run) takes its helper along.
        with contextlib.suppress(Exception):
            self.stop()

    def stop(self) -> None:
        proc, self.proc = self.proc, None
        if proc is None:
            return
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(OSError):
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()

    def call(
        self, op: str, dialect: str, source: str, flags: str, text: str, deadline: float
    ) -> Any:
        header = json.dumps({"op": op, "dialect": dialect, "source": source, "flags": flags})
        body = text.encode("utf-8", "surrogatepass")
        message = header.encode("utf-8", "surrogatepass") + b"\n%d\n" % len(body) + body
        with self.lock:
            for attempt in (1, 2):
                proc = self._start()
                try:
                    assert proc.stdin is not None
                    proc.stdin.write(message)
                    proc.stdin.flush()
                    line = self._read_line(proc, deadline)
                    break
                except PatternTimeout:
                    self.stop()
                    raise
                except BaseException as exc:
                    self.stop()
                    if attempt == 2 or not isinstance(exc, (OSError, EOFError)):
                        raise
        answer = json.loads(line)
        if "error" in answer:
            raise PatternError(answer["error"])
        return answer["ok"]

    @staticmethod
    def _read_line(proc: subprocess.Popen[bytes], deadline: float) -> bytes:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        chunks: list[bytes] = []
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise PatternTimeout()
            ready, _, _ = select.select([fd], [], [], min(left, 0.5))
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                raise EOFError("the regex helper ended")
            chunks.append(chunk)
            if chunk.endswith(b"\n"):
                return b"".join(chunks)


_box = RegexBox()


def call(op: str, dialect: str, source: str, flags: str, text: str, deadline: float) -> Any:
    """Match in the helper process, raising :class:`PatternTimeout` past ``deadline``."""
    return _box.call(op, dialect, source, flags, text, deadline)


def stop() -> None:
    """Stop this process's helper (it is started again when needed)."""
    with _box.lock:
        _box.stop()


atexit.register(stop)


def die_with_parent() -> bool:
    """Linux: have the kernel kill this process with SIGKILL when its parent ends, and end now
    if the parent that started it (:data:`PARENT_VARIABLE`) has already gone. Returns whether
    the kernel took the request (elsewhere: False, nothing done)."""
    parent = os.environ.get(PARENT_VARIABLE, "")
    if not sys.platform.startswith("linux") or not parent.isdigit():
        return False
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        done = libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False
    if os.getppid() != int(parent):
        os._exit(0)  # the parent ended before the kernel was asked: it will not tell us
    return bool(done)


def main() -> int:
    die_with_parent()
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        header = stdin.readline()
        size = stdin.readline()
        if not header or not size:
            return 0
        request = json.loads(header.decode("utf-8", "surrogatepass"))
        text = stdin.read(int(size)).decode("utf-8", "surrogatepass")
        try:
            answer: dict[str, Any] = {
                "ok": evaluate(
                    request["op"], request["dialect"], request["source"], request["flags"], text
                )
            }
        except Exception as exc:  # noqa: BLE001 - the engine's own error: said to the caller
            answer = {"error": str(exc)}
        stdout.write(json.dumps(answer).encode("utf-8", "surrogatepass") + b"\n")
        stdout.flush()


if __name__ == "__main__":
    sys.exit(main())
