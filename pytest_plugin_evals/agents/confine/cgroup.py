"""A run's cgroup (runs started by root): its processes and its memory, held by the kernel.

The kernel does not hold root to ``RLIMIT_NPROC``, and only a memory cgroup charges a run
with every page it makes — anonymous, shared (``MAP_SHARED``, ``memfd``, System V), tmpfs
and kernel memory — whichever process maps it, or none. A run started by root therefore
gets a cgroup of its own where one can be made (v1 or v2): ``pids.max`` is its processes'
bound and ``memory.max`` (v1: ``memory.limit_in_bytes``, with swap held to it too) its memory
bound. The kernel stops the run at the bound (refuses the fork, kills a process of the run
when nothing more can be reclaimed); the watchdog reads what the run holds (the charge minus
the file cache the kernel may drop) and whether the kernel had to stop it.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

ROOT = Path("/sys/fs/cgroup")


class RunCgroup:
    """One run's cgroup: a folder per controller (one for both on v2). :attr:`procs` are the
    files a process writes its PID to, to join."""

    def __init__(self, pids: Path | None, memory: Path | None, version: int) -> None:
        self.pids = pids
        self.memory = memory
        self.version = version

    @property
    def folders(self) -> list[Path]:
        return list(dict.fromkeys(f for f in (self.pids, self.memory) if f is not None))

    @property
    def procs(self) -> list[Path]:
        return [folder / "cgroup.procs" for folder in self.folders]

    @classmethod
    def make(cls, name: str, processes: int, memory: int) -> RunCgroup | None:
        """A new cgroup under this process's own holding at most ``processes`` processes and
        ``memory`` bytes, for what of that it can; None where none can be made (not root, no
        controller, no write access). Its folder is ``name`` and a random suffix: two runs of
        one name would share their bounds, and the first to end would remove the other's."""
        if not hasattr(os, "geteuid") or os.geteuid() != 0:
            return None
        name = f"{name}-{os.urandom(4).hex()}"
        bases = {c: _base(c) for c in ("pids", "memory")}
        version = bases["memory"][1] if bases["memory"] is not None else 1
        made: dict[str, Path] = {}
        for controller, settings in (
            ("pids", {"pids.max": processes}),
            ("memory", _memory_settings(version, memory)),
        ):
            found = bases[controller]
            if found is None:
                continue
            folder = found[0] / name
            shared = folder in made.values()  # v2: one folder for both
            if not shared and not _mkdir(folder):
                continue
            if _write_all(folder, settings, remove=not shared):
                made[controller] = folder
        if not made:
            return None
        return cls(made.get("pids"), made.get("memory"), version)

    def members(self) -> list[int] | None:
        """The PIDs in the cgroup now (None when it cannot be read)."""
        try:
            text = self.procs[0].read_text(encoding="ascii")
        except (OSError, IndexError):
            return None
        return [int(line) for line in text.split() if line.isdigit()]

    def processes_went_over(self) -> bool:
        """Whether a fork was refused for the limit."""
        return self.pids is not None and _field(self.pids / "pids.events", "max") > 0

    def held_memory(self) -> int | None:
        """The bytes the run holds now: everything charged to it but the file cache the kernel
        may drop (shared memory and tmpfs files stay counted). None without a memory cgroup."""
        if self.memory is None:
            return None
        v2 = self.version == 2
        try:
            used = int((self.memory / ("memory.current" if v2 else "memory.usage_in_bytes"))
                       .read_text(encoding="ascii"))  # fmt: skip
        except (OSError, ValueError):
            return None
        stat = self.memory / "memory.stat"
        cache = _field(stat, "file" if v2 else "total_cache")
        shared = _field(stat, "shmem" if v2 else "total_shmem")
        return max(0, used - cache + shared)

    def memory_went_over(self) -> bool:
        """Whether the kernel had to stop the run at its memory bound (an OOM kill, or a
        charge it could not make)."""
        if self.memory is None:
            return False
        if self.version == 2:
            events = self.memory / "memory.events"
            return _field(events, "oom") > 0 or _field(events, "oom_kill") > 0
        control = self.memory / "memory.oom_control"
        return _field(control, "oom_kill") > 0 or _field(control, "under_oom") > 0

    def remove(self) -> None:
        """Remove the cgroup, once the run's processes are gone (killed ones may take a
        moment to leave it)."""
        for folder in self.folders:
            for _ in range(400):
                try:
                    folder.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.005)


def _memory_settings(version: int, memory: int) -> dict[str, int]:
    if version == 2:
        return {"memory.max": memory, "memory.swap.max": 0}
    return {"memory.limit_in_bytes": memory, "memory.memsw.limit_in_bytes": memory}


def _mkdir(folder: Path) -> bool:
    try:
        folder.mkdir()
    except FileExistsError:
        pass
    except OSError:
        return False
    return True


def _write_all(folder: Path, settings: dict[str, int], *, remove: bool) -> bool:
    """Write each setting; the first is needed (else False, and the folder is removed when
    ``remove``), the others where they exist (swap is not accounted everywhere)."""
    for index, (name, value) in enumerate(settings.items()):
        try:
            (folder / name).write_text(str(value), encoding="ascii")
        except OSError:
            if index > 0:
                continue
            if remove:
                with contextlib.suppress(OSError):
                    folder.rmdir()
            return False
    return True


def _field(path: Path, name: str) -> int:
    """The number after ``name`` in a ``key value`` file (0 when absent or unreadable)."""
    try:
        text = path.read_text(encoding="ascii")
    except OSError:
        return 0
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == name and parts[1].isdigit():
            return int(parts[1])
    return 0


def _base(controller: str) -> tuple[Path, int] | None:
    """Where this process's cgroup of ``controller`` is (its folder, and 1 or 2 for the
    cgroup version), when that folder is writable."""
    try:
        lines = Path("/proc/self/cgroup").read_text(encoding="ascii").splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if controller in controllers.split(","):
            candidate, version = ROOT / controllers / path.lstrip("/"), 1
            if not candidate.is_dir():
                candidate = ROOT / controller / path.lstrip("/")
        elif controllers == "":
            candidate, version = ROOT / path.lstrip("/"), 2
            try:
                enabled = (candidate / "cgroup.subtree_control").read_text(encoding="ascii")
            except OSError:
                continue
            if controller not in enabled.split():
                continue
        else:
            continue
        if candidate.is_dir() and os.access(candidate, os.W_OK):
            return candidate, version
    return None
