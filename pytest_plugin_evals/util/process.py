"""Running an agent process: prompt on stdin, output kept in files within a budget, a timeout
that kills the process group."""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from pytest_plugin_evals.util.capture import Capture

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
    #: What was cut from its output to keep it within the budget, one sentence per stream.
    notes: tuple[str, ...] = ()
    #: The bound the run went over, which ended it (``watch`` said so), one sentence.
    bound: str | None = None

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


def _parent_death_signal() -> Callable[[], None] | None:
    """Linux: a ``preexec_fn`` that has the child killed when the thread that started it
    ends (``PR_SET_PDEATHSIG``), so a run does not outlive a controller killed with SIGKILL."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    prctl.restype = ctypes.c_int
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong,
                      ctypes.c_ulong]  # fmt: skip
    kill = int(signal.SIGKILL)

    def die_with_parent() -> None:
        prctl(1, kill, 0, 0, 0)  # PR_SET_PDEATHSIG

    return die_with_parent


_die_with_parent = _parent_death_signal()


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
    json_lines: bool = False,
    stop_on: Callable[[bytes], bool] | None = None,
    watch: Callable[[], str | None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> ProcessResult:
    """Run ``argv`` in its own process group; what it prints goes to ``stdout.txt`` and
    ``stderr.txt`` in ``out_dir``, each kept within a budget (:class:`Capture`; stdout read as
    JSON lines when ``json_lines``). ``stop_on`` sees each piece of stdout as it arrives; when
    it returns True the process group is killed (a limit the agent cannot enforce itself).
    ``watch`` is called every few hundred milliseconds while the process runs; when it names a
    bound (a sentence), the group is killed and the result says so. ``on_start`` gets the
    process's PID once it started."""
    stdout_path = out_dir / "stdout.txt"
    stderr_path = out_dir / "stderr.txt"
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
            preexec_fn=_die_with_parent,
        )
    except OSError as exc:
        stdout_path.write_bytes(b"")
        stderr_path.write_bytes(b"")
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
    if on_start is not None:
        on_start(proc.pid)
    timed_out = False
    bound: list[str] = []
    with stdout_path.open("wb") as out, stderr_path.open("wb") as err:
        captures = (Capture(out, json_lines=json_lines), Capture(err, json_lines=False))
        try:
            timed_out = _pump(
                proc, stdin_text.encode("utf-8"), captures, start + timeout, stop_on, watch, bound
            )
        except BaseException:
            _kill_group(proc)
            proc.wait()
            raise
        finally:
            for capture in captures:
                capture.close()
            with _live_lock:
                _live.discard(proc)
                stopped = proc.pid in _stopped
                _stopped.discard(proc.pid)
    return ProcessResult(
        proc.returncode,
        stdout_path,
        stderr_path,
        timed_out and not stopped and not bound,
        time.monotonic() - start,
        stopped=stopped,
        bound=bound[0] if bound and not stopped else None,
        notes=tuple(
            f"{name}: {capture.note}"
            for name, capture in zip(("stdout", "stderr"), captures, strict=True)
            if capture.note is not None
        ),
    )


#: How long output is still read after the process ended (or was killed): a process it left
#: behind outside its group may hold the pipes open.
DRAIN_SECONDS = 1.0


def _pump(
    proc: subprocess.Popen[bytes],
    stdin: bytes,
    captures: tuple[Capture, Capture],
    deadline: float,
    stop_on: Callable[[bytes], bool] | None = None,
    watch: Callable[[], str | None] | None = None,
    bound: list[str] | None = None,
) -> bool:
    """Feed ``stdin`` and read both output pipes until they close or the process has been
    gone a moment; kill the group at ``deadline``, or when ``watch`` names a bound (added to
    ``bound``). Returns whether it timed out."""
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    selector = selectors.DefaultSelector()
    readers = {proc.stdout.fileno(): captures[0], proc.stderr.fileno(): captures[1]}
    for fd in readers:
        os.set_blocking(fd, False)
        selector.register(fd, selectors.EVENT_READ)
    view = memoryview(stdin)
    if view:
        os.set_blocking(proc.stdin.fileno(), False)
        selector.register(proc.stdin.fileno(), selectors.EVENT_WRITE)
    else:
        proc.stdin.close()
    timed_out = False
    ended: float | None = None
    try:
        while selector.get_map():
            now = time.monotonic()
            if ended is None and proc.poll() is not None:
                ended = now
                _end_group(proc)
            if ended is None and now >= deadline:
                timed_out = True
                _kill_group(proc)
                proc.wait()
                ended = now
            if ended is None and watch is not None:
                over = watch()
                if over is not None:
                    if bound is not None:
                        bound.append(over)
                    _kill_group(proc)
                    proc.wait()
                    ended = now
            if ended is None:
                wait = min(0.2, deadline - now)
            else:
                wait = ended + DRAIN_SECONDS - now
                if wait <= 0:
                    break
            for key, _ in selector.select(timeout=max(0.01, wait)):
                if key.fd in readers:
                    try:
                        chunk = os.read(key.fd, PIPE_CHUNK)
                    except BlockingIOError:
                        continue
                    if chunk:
                        readers[key.fd].feed(chunk)
                        if (
                            stop_on is not None
                            and ended is None
                            and key.fd == proc.stdout.fileno()
                            and stop_on(chunk)
                        ):
                            _kill_group(proc)
                            proc.wait()
                            ended = time.monotonic()
                    else:
                        selector.unregister(key.fd)
                    continue
                try:
                    sent = os.write(key.fd, view[:PIPE_CHUNK])
                except BlockingIOError:
                    continue
                except OSError:  # the process stopped reading (BrokenPipeError)
                    sent = len(view)
                view = view[sent:]
                if not view:
                    selector.unregister(key.fd)
                    proc.stdin.close()
        if ended is None:
            # Its output closed; the process itself may still be running.
            while True:
                try:
                    proc.wait(timeout=max(0.0, min(0.25, deadline - time.monotonic())))
                except subprocess.TimeoutExpired:
                    over = watch() if watch is not None else None
                    if over is None and time.monotonic() < deadline:
                        continue
                    if over is not None and bound is not None:
                        bound.append(over)
                    timed_out = over is None
                    _kill_group(proc)
                    proc.wait()
                else:
                    _end_group(proc)
                break
    finally:
        selector.close()
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            with contextlib.suppress(OSError):
                pipe.close()
    return timed_out


def _end_group(proc: subprocess.Popen[bytes]) -> None:
    """The agent exited; anything it left running in its group goes with it."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


PIPE_CHUNK = 1 << 16


def exit_text(returncode: int | None) -> str:
    """How a process ended, said as a person reads it: ``exit 1``, ``killed by SIGKILL`` (a
    negative status), ``exit 137 (killed by SIGKILL)`` (128 + N, how a sandbox or a shell
    passes on a child killed by signal N)."""
    if returncode is None:
        return "did not end"
    if returncode < 0:
        return f"killed by {_signal_name(-returncode)}"
    if 128 < returncode < 128 + 65:
        name = _signal_name(returncode - 128)
        if not name.startswith("signal "):
            return f"exit {returncode} (killed by {name})"
    return f"exit {returncode}"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def format_timeout(seconds: float) -> str:
    shown = int(seconds) if float(seconds).is_integer() else seconds
    return f"timed out after {shown}s"


def probe(argv: list[str], timeout: float = 30.0) -> tuple[int | None, str]:
    """Run a short check (``bwrap … true``): its exit status (None when it could not start or
    did not end in time) and what it said on stderr."""
    try:
        done = subprocess.run(argv, capture_output=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, str(exc)
    return done.returncode, done.stderr.decode("utf-8", "replace")


@dataclass(frozen=True)
class Finished:
    """A short command that ran to its end: its exit status and what it printed."""

    returncode: int
    stdout: str
    stderr: str


def run_to_end(argv: list[str], *, env: dict[str, str], timeout: float) -> Finished:
    """Run a short command (``git …``) with nothing on its stdin, to its end, its output
    read as UTF-8 text. Raises :class:`FileNotFoundError` when it is not found,
    :class:`TimeoutError` when it takes longer than ``timeout`` seconds."""
    no_input = subprocess.DEVNULL
    try:
        done = subprocess.run(argv, capture_output=True, timeout=timeout, env=env, stdin=no_input)
    except subprocess.TimeoutExpired:
        raise TimeoutError(f"{argv[0]} took over {timeout:g}s") from None
    out, err = (text.decode("utf-8", "replace") for text in (done.stdout, done.stderr))
    return Finished(done.returncode, out, err)


def read_output(
    argv: list[str], pass_fds: tuple[int, ...] = (), timeout: float = 5.0
) -> str | None:
    """Run a short command that reads something (``nsenter … cat …``), handing it ``pass_fds``:
    what it printed, or None when it could not start, failed or did not end in time."""
    try:
        done = subprocess.run(
            argv, capture_output=True, timeout=timeout, check=False, pass_fds=pass_fds
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None


Service = subprocess.Popen


def start_service(argv: list[str]) -> subprocess.Popen[bytes]:
    """Start a helper process that serves this one (the mock host): in a session of its own,
    its stdin and stdout pipes only this process holds (its control channel: it ends when this
    process closes its stdin, or dies), stderr discarded."""
    return subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def stop_service(proc: subprocess.Popen[bytes], grace: float = 2.0) -> None:
    """Close the service's stdin (its signal to end), wait ``grace`` seconds, then kill it;
    its stdout is closed too (no pipe is left for the garbage collector)."""
    with contextlib.suppress(OSError, ValueError):
        if proc.stdin is not None:
            proc.stdin.close()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    with contextlib.suppress(OSError, ValueError):
        if proc.stdout is not None:
            proc.stdout.close()


def fork_child(child: Callable[[], int]) -> int:
    """Fork a child of this process that runs ``child`` and exits with what it returns (1 and
    its traceback on stderr when it raises): it never returns into the caller's stack. Returns
    the child's PID to the parent, or -1 when no process could be made (the caller then sees
    the child's work as failed). For a server process that serves each connection in a child
    of its own (the mock host's stand-ins)."""
    try:
        pid = os.fork()
    except OSError:
        return -1
    if pid:
        return pid
    code = 1
    try:
        code = child()
    except BaseException:  # noqa: BLE001 - a forked child never returns into its parent's stack
        import traceback

        traceback.print_exc()
    finally:
        os._exit(code)


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


#: Environment variables that tag every process a run starts (and all they start in turn,
#: ``setsid`` or not): the run's own token, and the session's.
RUN_TAG = "PYTEST_PLUGIN_EVALS_RUN"
SESSION_TAG = "PYTEST_PLUGIN_EVALS_SESSION"


@dataclass(frozen=True)
class PidMark:
    """Where the kernel's PID counter stood when a run began: a process the run started has a
    PID allocated since, so :func:`kill_tagged` need read only those processes' environments."""

    last_pid: int
    forks: int
    pid_max: int


def pid_mark() -> PidMark | None:
    """The PID counter now, or None where it cannot be read (then every process is looked at):
    Linux with ``/proc`` of this process's own PID namespace."""
    try:
        if os.readlink("/proc/self") != str(os.getpid()):
            return None  # /proc belongs to another PID namespace: its counter is not ours
        with open("/proc/sys/kernel/ns_last_pid", "rb") as fh:
            last_pid = int(fh.read())
        with open("/proc/sys/kernel/pid_max", "rb") as fh:
            pid_max = int(fh.read())
        forks = _forks()
    except (OSError, ValueError):
        return None
    return None if forks is None else PidMark(last_pid, forks, pid_max)


def _forks() -> int | None:
    """Processes and threads made since boot, in every PID namespace (``/proc/stat``)."""
    with open("/proc/stat", "rb") as fh:
        for line in fh:
            if line.startswith(b"processes "):
                return int(line.split()[1])
    return None


def _since(mark: PidMark | None) -> list[int] | None:
    """The PIDs that may have been allocated since ``mark``: those after the mark's, up to the
    counter's now, around the wrap at ``pid_max``. None (every PID may) when the counter may
    have gone all the way round since — more processes made since than there are PIDs — or
    cannot be read."""
    now = pid_mark()
    if mark is None or now is None or now.pid_max != mark.pid_max:
        return None
    if now.forks - mark.forks >= mark.pid_max // 2:  # far from a full turn, whatever is reserved
        return None
    low, high = mark.last_pid, now.last_pid
    if low <= high:
        return list(range(low + 1, high + 1))
    return [*range(low + 1, mark.pid_max), *range(1, high + 1)]


def kill_tagged(name: str, value: str, since: PidMark | None = None) -> int:
    """Kill every process of this user whose environment holds ``name=value``: what a run left
    behind, wherever it went (a new session, a new process group, a parent of PID 1). Linux
    (``/proc``); elsewhere nothing is found. With ``since`` (:func:`pid_mark` taken before the
    first process that could carry the tag was started), only processes made since are read:
    none made before can hold a tag that did not exist. Returns how many processes were
    killed."""
    needle = b"\0" + f"{name}={value}".encode() + b"\0"
    killed = {os.getpid()}
    for _ in range(5):  # what a dying process started while it was being found
        recent = _since(since)
        if recent is None or len(recent) > 256:  # listing /proc is cheaper than that many
            pids = _pids() if recent is None else sorted(set(_pids()).intersection(recent))
        else:
            pids = recent  # most of them gone: a failed open each, no listing of /proc
        found = [pid for pid in pids if pid not in killed and needle in _environ(pid)]
        if pids is recent:  # a thread's ID opens its process's files too: count processes
            found = [pid for pid in found if _thread_group(pid) == pid]
        if not found:
            break
        for pid in found:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            killed.add(pid)
    return len(killed) - 1


def _pids() -> list[int]:
    try:
        return [int(entry) for entry in os.listdir("/proc") if entry.isdigit()]
    except OSError:
        return []


def _thread_group(pid: int) -> int | None:
    """The process (thread group) of the thread ``pid``."""
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"Tgid:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


def _environ(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            return b"\0" + fh.read() + b"\0"
    except OSError:
        return b""


def output_of(argv: list[str], timeout: float = 30.0) -> str | None:
    """What a short command (``claude --version``) prints on stdout, when it ends in time with
    status 0 (None otherwise); at most 4 KB of it."""
    try:
        done = subprocess.run(argv, capture_output=True, timeout=timeout, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return done.stdout[:4096].decode("utf-8", "replace").strip()
