"""A confined run's bounds: memory, processes, file size, and its folders' bytes and files.

The kernel enforces what it can: the file-size limit (``RLIMIT_FSIZE``) and the process count
(``RLIMIT_NPROC``, set inside the run's user namespace so that only the run's own processes
count; the kernel exempts root from it, so a run started by root gets a cgroup of its own
instead, where one can be made: :mod:`.cgroup`, which holds its memory too). A
:class:`Watchdog` the harness calls while the run goes on measures the rest and names the
bound a run went over, which then ends the run:

- memory: what the run's cgroup holds (every page charged to it, shared and tmpfs ones too);
  without one, the proportional set size (PSS: a shared page counts once, split between the
  processes that map it) of the run's processes (those of its PID namespace), plus the
  ``memfd`` files they hold open. The sandbox has no writable tmpfs (:func:`..mount_args`);
- the run's folders: the bytes their files take on disk, and how many files they hold.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_plugin_evals.agents.confine.cgroup import RunCgroup
from pytest_plugin_evals.util.process import read_output

GiB = 1024**3
MiB = 1024**2


@dataclass(frozen=True)
class Bounds:
    """What one confined run may use (``--eval-max-memory`` and its siblings)."""

    memory: int = 4 * GiB
    processes: int = 512
    file_size: int = 1 * GiB
    disk: int = 4 * GiB
    files: int = 100_000


DEFAULT_BOUNDS = Bounds()

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?b?)?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1024, "m": MiB, "g": GiB, "t": 1024 * GiB}


def parse_size(text: str) -> int:
    """``4G``, ``512M``, ``1.5GiB``, ``2048`` (bytes) → bytes; ValueError when unreadable."""
    found = _SIZE.match(str(text))
    if found is None:
        raise ValueError(f"not a size (e.g. 4G, 512M): {text!r}")
    value = float(found.group(1)) * _UNITS[found.group(2).lower()]
    if not 0 < value < 2**62:
        raise ValueError(f"not a size above 0: {text!r}")
    return int(value)


def show_size(size: int) -> str:
    """``4294967296`` → ``4 GiB``; ``1536 MiB`` → ``1.5 GiB``."""
    for unit, name in ((1024 * GiB, "TiB"), (GiB, "GiB"), (MiB, "MiB"), (1024, "KiB")):
        if size >= unit:
            shown = size / unit
            return f"{shown:.1f}".rstrip("0").rstrip(".") + f" {name}"
    return f"{size} bytes"


#: How often the watchdog looks at the run's memory, and at its folders (seconds).
MEMORY_EVERY = 0.25
DISK_EVERY = 1.0


class Watchdog:
    """Measures one confined run while it goes on; :meth:`check` names the bound it went
    over (a sentence), or None. The run's processes are those of the PID namespace of the
    first child of ``leader`` (bubblewrap's); its folders are ``folders``."""

    def __init__(
        self, bounds: Bounds, folders: Sequence[Path], cgroup: RunCgroup | None = None
    ) -> None:
        self.bounds = bounds
        self.folders = tuple(folders)
        #: The run's cgroup (root): its memory, and a fork it refused, end the run.
        self.cgroup = cgroup
        self.leader: int | None = None
        self._ns: str | None = None
        self._next_memory = 0.0
        self._next_disk = 0.0
        self._next_shm = 0.0
        self._shm = 0
        self.peak_memory = 0
        self.peak_processes = 0

    def attach(self, leader: int) -> None:
        self.leader = leader

    def check(self) -> str | None:
        now = time.monotonic()
        if now >= self._next_memory:
            self._next_memory = now + MEMORY_EVERY
            over = self._check_memory()
            if over is not None:
                return over
        if now >= self._next_disk:
            over = self._check_folders()
            # A walk of many files takes a while (100,000: a second or more): at most a fifth
            # of the time goes to it.
            self._next_disk = now + max(DISK_EVERY, 5 * (time.monotonic() - now))
            return over
        return None

    def went_over(self) -> str | None:
        """The bound the kernel held the run to, when it did (its cgroup's: also after it)."""
        if self.cgroup is None:
            return None
        if self.cgroup.memory_went_over():
            return f"the run's memory went over {show_size(self.bounds.memory)}"
        if self.cgroup.processes_went_over():
            return f"the run's processes reached {self.bounds.processes}"
        return None

    def _check_memory(self) -> str | None:
        found = self._processes()
        held = self.cgroup.held_memory() if self.cgroup is not None else None
        if held is None and found:
            now = time.monotonic()
            if now >= self._next_shm:  # a command to read: once a second
                self._next_shm = now + DISK_EVERY
                self._shm = detached_shm(found[0])
            held = self._shm + run_memory(found, self.bounds.memory - self._shm)
        self.peak_memory = max(self.peak_memory, held or 0)
        self.peak_processes = max(self.peak_processes, len(found))
        if held is not None and held > self.bounds.memory:
            return f"the run's memory went over {show_size(self.bounds.memory)}"
        if len(found) >= self.bounds.processes:
            return f"the run's processes reached {self.bounds.processes}"
        return self.went_over()

    def _check_folders(self) -> str | None:
        used, biggest, files = _usage(self.folders, self.bounds.files)
        inside = [*(str(f) for f in self.folders), "/tmp", "/dev/shm"]
        used += deleted_files(self._processes(), inside)
        if biggest >= self.bounds.file_size:
            return f"a file of the run reached {show_size(self.bounds.file_size)}"
        if used > self.bounds.disk:
            return f"the run's folders went over {show_size(self.bounds.disk)}"
        if files > self.bounds.files:
            return f"the run's folders went over {self.bounds.files} files"
        return None

    def _processes(self) -> list[int]:
        """The run's processes now (host PIDs)."""
        if self._ns is None:
            if self.leader is None:
                return []
            child = next((pid for pid in self._candidates() if _ppid(pid) == self.leader), None)
            if child is None:
                return []
            self._ns = _pid_ns(child)
            if self._ns is None or self._ns == _pid_ns(os.getpid()):
                self._ns = None
                return []
        return [pid for pid in self._candidates() if _pid_ns(pid) == self._ns]

    def _candidates(self) -> list[int]:
        """Where the run's processes are: its cgroup's members when it has one (a handful of
        PIDs: every process of the run joined it), else every process of the machine."""
        if self.cgroup is not None:
            members = self.cgroup.members()
            if members is not None:
                return members
        return _pids()


def _pids() -> list[int]:
    try:
        return [int(entry.name) for entry in os.scandir("/proc") if entry.name.isdigit()]
    except OSError:
        return []


def _pid_ns(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def _ppid(pid: int) -> int | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            stat = fh.read()
    except OSError:
        return None
    fields = stat[stat.rfind(b")") + 2 :].split()
    return int(fields[1]) if len(fields) > 1 else None


def run_memory(pids: Sequence[int], bound: int) -> int:
    """The memory of processes ``pids`` together, in bytes: their proportional set sizes
    (shared pages counted once, split between them) and the ``memfd`` files they hold open
    (each once), which use memory whether mapped or not. While their resident sizes (which
    count every shared page in full: never below the PSS) stay within ``bound``, those
    (cheap to read) stand for it; past it, the PSS (a walk of their mappings) decides."""
    memfds: dict[tuple[int, int], int] = {}
    for pid in pids:
        memfds.update(_memfds(pid))
    held = sum(memfds.values())
    resident = held + sum(_resident(pid) for pid in pids)
    if resident <= bound:
        return resident
    return held + sum(_pss(pid) for pid in pids)


_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def _resident(pid: int) -> int:
    """A process's resident set size, in bytes (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            return int(fh.read().split()[1]) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def _pss(pid: int) -> int:
    """A process's proportional set size, in bytes (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/smaps_rollup", "rb") as fh:
            text = fh.read()
    except OSError:
        return 0
    for line in text.splitlines():
        if line.startswith(b"Pss:"):
            parts = line.split()
            return int(parts[1]) * 1024 if len(parts) > 1 and parts[1].isdigit() else 0
    return 0


def _memfds(pid: int) -> dict[tuple[int, int], int]:
    """The ``memfd`` files process ``pid`` holds open: bytes by (device, inode)."""
    return _open_files(pid, lambda link: link.startswith("/memfd:"))


def deleted_files(pids: Sequence[int], folders: Sequence[str]) -> int:
    """The bytes on disk of the files under ``folders`` (paths as the processes see them)
    that processes ``pids`` hold open but removed, each once: gone from the folders' walk,
    still taking their space."""
    inside = tuple(f.rstrip("/") + "/" for f in folders)

    def removed(link: str) -> bool:
        return link.endswith(" (deleted)") and link.startswith(inside)

    found: dict[tuple[int, int], int] = {}
    for pid in pids:
        found.update(_open_files(pid, removed))
    return sum(found.values())


#: ``ioctl`` asking a namespace for the user namespace that owns it.
_NS_GET_USERNS = 0xB701


def detached_shm(pid: int) -> int:
    """The bytes of System V shared memory no process attaches any more, in the IPC namespace
    of process ``pid`` (attached segments are in their processes' PSS). Read by ``nsenter``
    in the user namespace that owns it — this process's own child, so this user may — since
    ``/proc/sysvipc/shm`` shows the reader's namespace only; 0 where it cannot be read."""
    import fcntl  # Unix only, as namespaces are

    nsenter = shutil.which("nsenter")
    if nsenter is None:
        return 0
    try:
        ipc = os.open(f"/proc/{pid}/ns/ipc", os.O_RDONLY)
    except OSError:
        return 0
    try:
        owner = fcntl.ioctl(ipc, _NS_GET_USERNS)
    except OSError:
        os.close(ipc)
        return 0
    try:
        argv = [nsenter, f"--user=/proc/self/fd/{owner}", f"--ipc=/proc/self/fd/{ipc}",
                "--preserve-credentials", "cat", "/proc/sysvipc/shm"]  # fmt: skip
        text = read_output(argv, pass_fds=(owner, ipc))
    finally:
        os.close(owner)
        os.close(ipc)
    return _detached_bytes(text or "")


def _detached_bytes(table: str) -> int:
    """The ``rss`` of the segments with no process attached, in ``/proc/sysvipc/shm``."""
    lines = table.splitlines()
    if not lines:
        return 0
    head = lines[0].split()
    if "nattch" not in head or "rss" not in head:
        return 0
    attached, rss = head.index("nattch"), head.index("rss")
    total = 0
    for line in lines[1:]:
        cells = line.split()
        if len(cells) == len(head) and cells[attached] == "0" and cells[rss].isdigit():
            total += int(cells[rss])
    return total


def _open_files(pid: int, wanted: Callable[[str], bool]) -> dict[tuple[int, int], int]:
    """The regular files process ``pid`` holds open whose link ``wanted`` takes: bytes on
    disk by (device, inode)."""
    found: dict[tuple[int, int], int] = {}
    folder = f"/proc/{pid}/fd"
    try:
        names = os.listdir(folder)
    except OSError:
        return found
    for name in names:
        path = f"{folder}/{name}"
        try:
            if not wanted(os.readlink(path)):
                continue
            info = os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            found[(info.st_dev, info.st_ino)] = info.st_blocks * 512
    return found


def _usage(folders: Sequence[Path], most_files: int) -> tuple[int, int, int]:
    """The bytes the files under ``folders`` take on disk, the largest file's size, and how
    many files (and folders) there are — counted up to one past ``most_files``."""
    total = biggest = files = 0
    stack = [str(f) for f in folders]
    while stack and files <= most_files:
        top = stack.pop()
        try:
            entries = list(os.scandir(top))
        except OSError:
            continue
        files += len(entries)
        for entry in entries:
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            total += info.st_blocks * 512
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
            else:
                biggest = max(biggest, info.st_size)
    return total, biggest, files


def limits(bounds: Bounds) -> str:
    """``prlimit`` options for ``bounds`` (soft and hard: a run cannot raise them)."""
    return (
        f"--nproc={bounds.processes}:{bounds.processes} "
        f"--fsize={bounds.file_size}:{bounds.file_size} --core=0:0"
    )
