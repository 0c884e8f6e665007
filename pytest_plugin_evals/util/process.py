"""Running an agent process: prompt on stdin, output to files, a timeout that kills the group."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

STDERR_TAIL = 2000


@dataclass(frozen=True)
class ProcessResult:
    returncode: int | None
    stdout_path: Path
    stderr_path: Path
    timed_out: bool
    duration_seconds: float
    #: Set when the process could not be started at all.
    start_error: str | None = None
    #: The process was stopped from outside (:func:`stop_all`), not by itself or its timeout.
    stopped: bool = False

    @property
    def stdout(self) -> str:
        return self.stdout_path.read_text(encoding="utf-8", errors="replace")

    def stderr_tail(self, limit: int = STDERR_TAIL) -> str:
        try:
            with self.stderr_path.open("rb") as fh:
                fh.seek(0, os.SEEK_END)
                size = fh.tell()
                fh.seek(max(0, size - limit))
                return fh.read().decode("utf-8", errors="replace").strip()
        except OSError:
            return ""


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        with contextlib.suppress(OSError):
            proc.kill()


#: The processes :func:`run_process` is waiting for, and those :func:`stop_all` stopped.
_live: set[subprocess.Popen[bytes]] = set()
_stopped: set[int] = set()
_live_lock = threading.Lock()


def stop_all() -> int:
    """Kill the process group of every process :func:`run_process` is waiting for (in any
    thread); each of those runs returns at once, ``stopped``. Returns how many were stopped."""
    with _live_lock:
        procs = list(_live)
        _stopped.update(p.pid for p in procs)
    for proc in procs:
        _kill_group(proc)
    return len(procs)


def run_process(
    argv: list[str],
    *,
    stdin_text: str,
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    out_dir: Path,
) -> ProcessResult:
    """Run ``argv`` in its own process group; stdout and stderr go to files in ``out_dir``."""
    stdout_path = out_dir / "stdout.txt"
    stderr_path = out_dir / "stderr.txt"
    start = time.monotonic()
    with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
        try:
            proc = subprocess.Popen(
                argv,
                cwd=cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
        except OSError as exc:
            reason = exc.strerror or str(exc)
            return ProcessResult(
                None,
                stdout_path,
                stderr_path,
                False,
                time.monotonic() - start,
                start_error=f"could not start {argv[0]!r}: {reason}",
            )
        with _live_lock:
            _live.add(proc)
        timed_out = False
        try:
            proc.communicate(stdin_text.encode("utf-8"), timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            _kill_group(proc)
            proc.wait()
        except BaseException:
            _kill_group(proc)
            proc.wait()
            raise
        else:
            # The agent exited; anything it left running in its group goes with it.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)
        finally:
            with _live_lock:
                _live.discard(proc)
                stopped = proc.pid in _stopped
                _stopped.discard(proc.pid)
    return ProcessResult(
        proc.returncode,
        stdout_path,
        stderr_path,
        timed_out and not stopped,
        time.monotonic() - start,
        stopped=stopped,
    )


def format_timeout(seconds: float) -> str:
    shown = int(seconds) if float(seconds).is_integer() else seconds
    return f"timed out after {shown}s"


Service = subprocess.Popen


def start_service(argv: list[str]) -> subprocess.Popen[bytes]:
    """Start a helper process that serves this one (the mock host): in a session of its own,
    stdin a pipe (it ends when this process closes it, or dies), output discarded."""
    return subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def stop_service(proc: subprocess.Popen[bytes], grace: float = 2.0) -> None:
    """Close the service's stdin (its signal to end), wait ``grace`` seconds, then kill it."""
    with contextlib.suppress(OSError, ValueError):
        if proc.stdin is not None:
            proc.stdin.close()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


class IdleMeter:
    """How idle the machine's CPUs were since the last reading (Linux's ``/proc/stat``)."""

    def __init__(self) -> None:
        self.last = self._sample()
        self.fraction: float | None = None

    @staticmethod
    def _sample() -> tuple[int, int] | None:
        """(idle, total) clock ticks of all CPUs since boot, or None where not known."""
        try:
            with open("/proc/stat", encoding="ascii") as fh:
                fields = [int(x) for x in fh.readline().split()[1:]]
        except (OSError, ValueError):
            return None
        if len(fields) < 5:
            return None
        return fields[3] + fields[4], sum(fields[:8])

    def idle(self) -> float | None:
        """The share of CPU time that went unused since the last reading (at least a few
        ticks ago: a shorter interval keeps the previous answer); None where not known."""
        now = self._sample()
        if now is None or self.last is None:
            return None
        idle, total = now[0] - self.last[0], now[1] - self.last[1]
        if total >= 20:
            self.fraction = idle / total
            self.last = now
        return self.fraction
