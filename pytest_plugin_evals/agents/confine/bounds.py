"""A confined run's bounds: memory, processes, file size and temporary space.

The kernel enforces what it can: the file-size limit (``RLIMIT_FSIZE``) and the process count
(``RLIMIT_NPROC``, set inside the run's user namespace so that only the run's own processes
count; the kernel exempts root from it, so a run started by root gets a ``pids`` cgroup of its
own instead, where one can be made). A :class:`Watchdog` the harness calls while the run goes
on measures the rest — the memory of the run's processes (those of its PID namespace) and the
size of its folders — and names the bound a run went over, which then ends the run.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

GiB = 1024**3
MiB = 1024**2


@dataclass(frozen=True)
class Bounds:
    """What one confined run may use (``--eval-max-memory`` and its siblings)."""

    memory: int = 4 * GiB
    processes: int = 512
    file_size: int = 1 * GiB
    disk: int = 4 * GiB


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

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


class Watchdog:
    """Measures one confined run while it goes on; :meth:`check` names the bound it went
    over (a sentence), or None. The run's processes are those of the PID namespace of the
    first child of ``leader`` (bubblewrap's); its folders are ``folders``."""

    def __init__(
        self, bounds: Bounds, folders: Sequence[Path], cgroup: PidsCgroup | None = None
    ) -> None:
        self.bounds = bounds
        self.folders = tuple(folders)
        #: The run's ``pids`` cgroup (root): a fork it refused ends the run.
        self.cgroup = cgroup
        self.leader: int | None = None
        self._ns: str | None = None
        self._next_memory = 0.0
        self._next_disk = 0.0
        self.peak_memory = 0
        self.peak_processes = 0

    def attach(self, leader: int) -> None:
        self.leader = leader

    def check(self) -> str | None:
        now = time.monotonic()
        if now >= self._next_memory:
            self._next_memory = now + MEMORY_EVERY
            found = self._processes()
            if found:
                memory = sum(_private_memory(pid) for pid in found)
                self.peak_memory = max(self.peak_memory, memory)
                self.peak_processes = max(self.peak_processes, len(found))
                if memory > self.bounds.memory:
                    return f"the run's memory went over {show_size(self.bounds.memory)}"
                if len(found) >= self.bounds.processes:
                    return f"the run's processes reached {self.bounds.processes}"
            if self.cgroup is not None and self.cgroup.went_over():
                return f"the run's processes reached {self.bounds.processes}"
        if now >= self._next_disk:
            self._next_disk = now + DISK_EVERY
            used, biggest = _usage(self.folders)
            if biggest >= self.bounds.file_size:
                return f"a file of the run reached {show_size(self.bounds.file_size)}"
            if used > self.bounds.disk:
                return f"the run's folders went over {show_size(self.bounds.disk)}"
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


def _private_memory(pid: int) -> int:
    """A process's resident memory that is its own (resident minus shared pages), in bytes."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as fh:
            fields = fh.read().split()
        return max(0, int(fields[1]) - int(fields[2])) * _PAGE
    except (OSError, ValueError, IndexError):
        return 0


def _usage(folders: Sequence[Path]) -> tuple[int, int]:
    """The bytes the files under ``folders`` take on disk, and the largest file's size."""
    total = biggest = 0
    stack = [str(f) for f in folders]
    while stack:
        top = stack.pop()
        try:
            entries = list(os.scandir(top))
        except OSError:
            continue
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
    return total, biggest


# -- a pids cgroup for runs started by root ---------------------------------------------------


class PidsCgroup:
    """A ``pids`` cgroup of one run (root only: the kernel does not hold root to
    ``RLIMIT_NPROC``). :attr:`procs` is the file a process writes its PID to, to join."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    @property
    def procs(self) -> Path:
        return self.folder / "cgroup.procs"

    @classmethod
    def make(cls, name: str, limit: int) -> PidsCgroup | None:
        """A new cgroup under this process's own, holding at most ``limit`` processes;
        None where none can be made (not root, no ``pids`` controller, no write access)."""
        if not hasattr(os, "geteuid") or os.geteuid() != 0:
            return None
        base = _pids_base()
        if base is None:
            return None
        folder = base / name
        try:
            folder.mkdir()
            (folder / "pids.max").write_text(str(limit), encoding="ascii")
        except OSError:
            with contextlib.suppress(OSError):
                folder.rmdir()
            return None
        return cls(folder)

    def members(self) -> list[int] | None:
        """The PIDs in the cgroup now (None when it cannot be read)."""
        try:
            text = self.procs.read_text(encoding="ascii")
        except OSError:
            return None
        return [int(line) for line in text.split() if line.isdigit()]

    def went_over(self) -> bool:
        """Whether a fork was refused for the limit."""
        try:
            text = (self.folder / "pids.events").read_text(encoding="ascii")
        except OSError:
            return False
        return any(
            line.split()[0] == "max" and line.split()[1] != "0"
            for line in text.splitlines()
            if len(line.split()) == 2
        )

    def remove(self) -> None:
        """Remove the cgroup, once the run's processes are gone (killed ones may take a
        moment to leave it)."""
        for _ in range(200):
            try:
                self.folder.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.005)


def _pids_base() -> Path | None:
    """Where this process's ``pids`` cgroup is (v1 or v2), when its folder is writable."""
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="ascii").splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if "pids" in controllers.split(","):
            candidate = Path("/sys/fs/cgroup/pids") / path.lstrip("/")
        elif controllers == "":
            candidate = Path("/sys/fs/cgroup") / path.lstrip("/")
            try:
                enabled = (candidate / "cgroup.subtree_control").read_text(encoding="ascii")
            except OSError:
                continue
            if "pids" not in enabled.split():
                continue
        else:
            continue
        if candidate.is_dir() and os.access(candidate, os.W_OK):
            return candidate
    return None


def sweep_cgroups(prefix: str) -> None:
    """Remove the empty cgroups an earlier session's runs left (their controller was killed)."""
    base = _pids_base()
    if base is None:
        return
    with contextlib.suppress(OSError):
        for entry in base.iterdir():
            if entry.name.startswith(prefix) and entry.is_dir():
                with contextlib.suppress(OSError):
                    entry.rmdir()
