"""Holding a results folder for one session, and claiming its runs folder, with file locks:
two sessions never write into one folder, and the processes of one session share it."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from pytest_plugin_evals.util import locks
from pytest_plugin_evals.util.inert import is_inert, mark_inert
from pytest_plugin_evals.util.tempdirs import read_whole, write_whole

#: The file in a runs folder that names the session that recorded there.
OWNER_FILE = ".session"
#: The file in a results folder that a session holds locked for as long as it uses the folder
#: (it names the holder: ``<PID> <session token>``).
SESSION_LOCK = ".session.lock"
#: The file beside a runs folder that the processes of a session hold while one of them
#: claims the folder (it names the holder's PID).
CLAIM_LOCK = ".runs.lock"
#: In a session's shared folder: the results folder and the suite root its runs chose (the
#: controller reads them when no run reported, as after an interruption).
CHOSEN_FILE = "results-folder.txt"
#: In a session's shared folder: the cases a worker collected but did not select.
UNSELECTED_FILE = "not-selected.json"
#: In a session's shared folder: the folder ``replay:last`` replays, as a worker picked it.
REPLAYED_FILE = "replay-last.json"
#: How long a process waits for another one's claim, and for a holder to write its name.
CLAIM_WAIT = 5.0


class FolderBusy(Exception):
    """A results folder that another session uses (one line naming it and the holder)."""


#: The results folders this process holds: folder -> (the open lock file, the session).
_held: dict[Path, tuple[IO[str], str]] = {}
_held_guard = threading.Lock()


def _holder(lock: Path, wait: float) -> tuple[str, str]:
    """The PID and the session token a lock file names ("?" and "" when it names none within
    ``wait`` seconds: the holder has not written them yet)."""
    deadline = time.monotonic() + wait
    while True:
        try:
            text = lock.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        if text.endswith("\n"):
            pid, _, session = text.strip().partition(" ")
            return (pid if pid.isdigit() else "?"), session
        if time.monotonic() >= deadline:
            return "?", ""
        time.sleep(0.05)


def hold_results_folder(folder: Path, session: str) -> None:
    """Hold the results folder ``folder`` for ``session`` until
    :func:`release_results_folders` (or this process's end): while one session holds it,
    another that points at the same folder gets :class:`FolderBusy` naming the holder's PID.
    The processes of one session share it: a process that finds the folder held by its own
    session (its controller, another xdist worker) goes on. A folder whose session has ended
    is free again. (Windows: not held, as before.)"""
    if not locks.AVAILABLE:
        return
    key = folder.absolute()
    with _held_guard:
        held = _held.get(key)
        if held is not None:
            if held[1] == session:
                return
            raise FolderBusy(
                f"{folder}: another pytest session (PID {os.getpid()}) is using this results folder"
            )
        folder.mkdir(parents=True, exist_ok=True)
        lock = folder / SESSION_LOCK
        fh = lock.open("a+", encoding="utf-8")
        try:
            taken = locks.try_exclusive(fh)
        except OSError:  # a file system without locks: as before, not held
            fh.close()
            return
        if not taken:
            fh.close()
            pid, holder = _holder(lock, CLAIM_WAIT)
            if holder == session:
                return
            raise FolderBusy(
                f"{folder}: another pytest session (PID {pid}) is using this results folder"
            )
        fh.seek(0)
        fh.truncate()
        fh.write(f"{os.getpid()} {session}\n")
        fh.flush()
        _held[key] = (fh, session)


def release_results_folders(session: str) -> None:
    """Let go of the results folders this process holds for ``session``."""
    with _held_guard:
        for key, (fh, holder) in list(_held.items()):
            if holder == session:
                del _held[key]
                fh.close()


def claim_runs_folder(folder: Path, session: str) -> None:
    """Make ``folder`` this session's runs folder. Runs another session kept there (the same
    ``--eval-output-dir``) are removed first, so two sessions' runs never mix; a folder that
    is not a runs folder of this plugin (no inert marker) is left as it is. The results folder
    is held for the session first (:func:`hold_results_folder`): a folder another session is
    using is :class:`FolderBusy`, and only a folder an earlier, finished session left is
    replaced. Every process of the session calls this before its first run: a lock beside the
    folder makes one of them clear it, and the others find it claimed; a lock another process
    holds for longer than :data:`CLAIM_WAIT` seconds is :class:`FolderBusy` too."""
    results = folder.parent
    hold_results_folder(results, session)
    results.mkdir(parents=True, exist_ok=True)
    with (results / CLAIM_LOCK).open("a+", encoding="utf-8") as lock, _locked(lock, results):
        owner = folder / OWNER_FILE
        try:
            if owner.read_text(encoding="utf-8") == session:
                return
        except OSError:
            pass
        _not_a_link(folder)  # never record through a link, wherever it leads
        if is_inert(folder):
            shutil.rmtree(folder, ignore_errors=True)
        mark_inert(folder)
        owner.write_text(session, encoding="utf-8")


def wait_for_claims(results: Path) -> None:
    """Wait until no other process is claiming the runs folder of ``results`` (at most
    :data:`CLAIM_WAIT` seconds, then :class:`FolderBusy` naming the holder's PID)."""
    results.mkdir(parents=True, exist_ok=True)
    with (results / CLAIM_LOCK).open("a+", encoding="utf-8") as lock, _locked(lock, results):
        pass


@contextlib.contextmanager
def _locked(fh: IO[str], results: Path) -> Iterator[None]:
    """Hold the claim lock ``fh`` (of the results folder ``results``), waiting for another
    process's claim at most :data:`CLAIM_WAIT` seconds."""
    if not locks.AVAILABLE:  # Windows: no lock (one process per session there in practice)
        yield
        return
    deadline = time.monotonic() + CLAIM_WAIT
    while not locks.try_exclusive(fh):
        if time.monotonic() >= deadline:
            pid, _ = _holder(results / CLAIM_LOCK, 0)
            raise FolderBusy(
                f"{results}: another process (PID {pid}) has held "
                f"{results / CLAIM_LOCK} for more than {CLAIM_WAIT:g} s"
            )
        time.sleep(0.05)
    try:
        fh.seek(0)
        fh.truncate()
        fh.write(f"{os.getpid()}\n")
        fh.flush()
        yield
    finally:
        locks.release(fh)


def _not_a_link(path: Path) -> None:
    """Make sure writing ``path`` writes there: a symbolic link in its place (a results folder
    replayed into itself holds what it was given) is removed, never written through."""
    if path.is_symlink():
        path.unlink()


def tell_chosen(shared: Path, results: Path, root: Path) -> None:
    """Write down, once for the session, the results folder and suite root its runs chose."""
    if not (shared / CHOSEN_FILE).exists():
        write_whole(shared / CHOSEN_FILE, f"{results}\n{root}\n")


def chosen_folders(shared: Path) -> tuple[Path, Path] | None:
    """The results folder and suite root the session's runs chose, if a run was started."""
    text = read_whole(shared / CHOSEN_FILE) or ""
    results, _, root = text.strip().partition("\n")
    return (Path(results), Path(root)) if results and root else None


def tell_unselected(shared: Path, cases: tuple[tuple[str, str], ...]) -> None:
    """Write down the cases (name, folder) a worker collected but did not select."""
    write_whole(shared / UNSELECTED_FILE, json.dumps(cases))


def unselected(shared: Path) -> tuple[tuple[str, str], ...]:
    """The cases a worker collected but did not select, as it wrote them (none: none)."""
    try:
        raw = json.loads((shared / UNSELECTED_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ()
    return tuple(
        (str(pair[0]), str(pair[1]))
        for pair in raw
        if isinstance(pair, list) and len(pair) == 2  # written above, read defensively
    )


def tell_replayed(shared: Path, folder: Path, notices: list[str]) -> None:
    """Write down the folder ``replay:last`` replays, as a worker picked it, and what it said."""
    write_whole(shared / REPLAYED_FILE, json.dumps({"folder": str(folder), "notices": notices}))


def replayed(shared: Path) -> tuple[Path, list[str]] | None:
    """The folder a worker picked for ``replay:last`` and what it said (None: no pick)."""
    try:
        picked = json.loads((shared / REPLAYED_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    return Path(picked["folder"]), [str(n) for n in picked["notices"]]  # its own worker's


#: In every results folder, as in pytest's own cache folder: git ignores all of it.
GITIGNORE = "# Created by pytest-plugin-evals automatically.\n*\n"
#: What a session puts in its results folder (the document and the report by their names).
_OURS = {
    CLAIM_LOCK,
    SESSION_LOCK,
    "runs",
    "mock-recordings",
    "aggregate-result.json",
    "report.html",
}


def ignore_all(folder: Path) -> None:
    """Put a ``.gitignore`` of ``*`` in the results folder, unless it has one (a folder of
    yours given as ``--eval-output-dir`` that already holds other files is left as it is)."""
    target = folder / ".gitignore"
    try:
        if target.exists() or target.is_symlink():
            return
        if folder.is_dir() and any(p.name not in _OURS for p in folder.iterdir()):
            return
        folder.mkdir(parents=True, exist_ok=True)
        target.write_text(GITIGNORE, encoding="utf-8")
    except OSError:
        return
