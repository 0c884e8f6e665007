"""The temporary folders a session makes outside its results (the shared folder
``plugin-evals-*``, the sockets folder ``plugin-evals-net-*``, the mock host's ``evm-*``):
each names its owner (PID and start time), and a later session removes the ones whose owner
is gone (a controller killed with SIGKILL never removed its own), after killing what the
owner's runs left running."""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

#: The file in such a folder that names its owner: ``<PID> <start time>``.
OWNER_FILE = ".owner"
#: The prefixes of the folders a session makes in the temp folders.
PREFIXES = ("plugin-evals-", "evm-")


def _start_time(pid: int) -> str | None:
    """The process's start time (clock ticks since boot), telling a reused PID apart."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[19].decode() if len(fields) > 19 else None


def mark_owner(folder: Path) -> None:
    """Say that this process owns ``folder`` (nothing on a system without ``/proc``)."""
    started = _start_time(os.getpid())
    if started is None:
        return
    with contextlib.suppress(OSError):
        (folder / OWNER_FILE).write_text(f"{os.getpid()} {started}\n", encoding="utf-8")


def shared_folder(given: str | None) -> Path:
    """The private folder every process of a session shares (the stop sign, what the runs
    chose): the controller's, ``given`` to a worker, else made now (removed at the session's
    end; a later session removes it if this one is killed)."""
    if given:
        return Path(given)
    folder = Path(tempfile.mkdtemp(prefix=PREFIXES[0]))
    mark_owner(folder)
    return folder


def _owner_gone(folder: Path) -> bool:
    """Whether the folder names an owner and that process has ended (a folder that names
    none, or that cannot be read, is never taken for stale)."""
    try:
        text = (folder / OWNER_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return False
    pid, _, started = text.strip().partition(" ")
    if not pid.isdigit() or not started:
        return False
    return _start_time(int(pid)) != started


def temp_bases() -> list[Path]:
    """The folders such temporary folders are made in."""
    found: dict[str, None] = {}
    for base in (tempfile.gettempdir(), "/tmp", "/dev/shm", "/var/tmp"):
        if os.path.isdir(base):
            found.setdefault(os.path.realpath(base), None)
    return [Path(base) for base in found]


def sweep_stale(
    before_removing: Callable[[Path], object] = lambda folder: None,
    bases: list[Path] | None = None,
) -> list[Path]:
    """Remove this user's temporary folders of the plugin whose owner has ended; each is
    first handed to ``before_removing`` (to kill what its session left running). Returns
    the folders removed."""
    removed = []
    uid = os.getuid() if hasattr(os, "getuid") else None
    for base in temp_bases() if bases is None else bases:
        try:
            entries = list(os.scandir(base))
        except OSError:
            continue
        for entry in entries:
            if not entry.name.startswith(PREFIXES):
                continue
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if not stat.S_ISDIR(info.st_mode) or (uid is not None and info.st_uid != uid):
                continue
            folder = Path(entry.path)
            if not _owner_gone(folder):
                continue
            before_removing(folder)
            shutil.rmtree(folder, ignore_errors=True)
            removed.append(folder)
    return removed


def sweep_stale_sessions() -> list[Path]:
    """Remove the temporary folders of sessions that were killed (SIGKILL: they could not
    remove their own), and kill what their runs left running."""
    from pytest_plugin_evals.util.process import SESSION_TAG, kill_tagged  # when sweeping only

    return sweep_stale(lambda folder: kill_tagged(SESSION_TAG, folder.name))


def write_whole(target: Path, text: str) -> None:
    """Write ``text`` to ``target`` (a file of the session's shared folder) so that a reader
    sees the old file or the new one, never half of it."""
    draft = target.with_name(f"{target.name}.{os.getpid()}")
    draft.write_text(text, encoding="utf-8")
    os.replace(draft, target)


def read_whole(target: Path) -> str | None:
    """What :func:`write_whole` wrote to ``target`` (None: nothing was written)."""
    try:
        return target.read_text(encoding="utf-8")
    except OSError:
        return None
