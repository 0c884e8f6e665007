"""Reading a folder as it was written: plain folders and regular files, nothing that leads away.

A results folder is hostile input (a recorded run holds what an agent made, and a shard's
folder comes back from a CI artifact). A symbolic link in it may lead anywhere on the machine,
a hard link may be another name of a file elsewhere, and a FIFO or a device blocks or floods
whoever opens it. :func:`plain_files` lists a folder's regular files and raises
:class:`NotPlain` at the first entry that is anything else; :func:`open_plain` opens one file
without following a link, and checks again what it opened. Nothing here follows a link.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path, PurePosixPath
from typing import BinaryIO

#: Opened without following a final symbolic link, and without waiting for a FIFO's writer.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
_OPEN_FLAGS |= getattr(os, "O_BINARY", 0)

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


class NotPlain(Exception):
    """An entry that is not a plain folder or a regular file of one name."""

    def __init__(self, path: Path, kind: str, what: str) -> None:
        super().__init__(f"{path}: {what}")
        self.path = path
        #: ``symlink``, ``hardlink``, ``special`` or ``missing``.
        self.kind = kind
        #: What it is, for :attr:`detail` and :meth:`named`: a link's target, a file's count
        #: of names, the kind of a special file.
        self.what = what

    @property
    def detail(self) -> str:
        """What it is, without its name: ``a symbolic link (→ /etc)``, ``a hard-linked file
        (2 names)``, ``not a regular file (a FIFO)``."""
        if self.kind == "symlink":
            return f"a symbolic link (→ {self.what})"
        if self.kind == "hardlink":
            return f"a hard-linked file ({self.what})"
        return self.what

    def named(self, name: str) -> str:
        """What it is, naming it ``name``: ``a symbolic link (files/notes → /etc)``, ``a
        hard-linked file (files/notes, 2 names)``, ``files/pipe, which is not a regular file
        (a FIFO)``."""
        if self.kind == "symlink":
            return f"a symbolic link ({name} → {self.what})"
        if self.kind == "hardlink":
            return f"a hard-linked file ({name}, {self.what})"
        return f"{name}, which is {self.what}"


def _symlink(path: Path) -> NotPlain:
    try:
        target = os.readlink(path)
    except OSError:
        target = "?"
    return NotPlain(path, "symlink", target)


def _special(path: Path, mode: int) -> NotPlain:
    for test, name in _KINDS:
        if test(mode):
            return NotPlain(path, "special", f"not a regular file ({name})")
    return NotPlain(path, "special", "not a regular file")


def check_entry(path: Path, st: os.stat_result, names: int = 1) -> None:
    """Refuse ``path`` (whose ``lstat`` is ``st``) unless it is a plain folder or a regular
    file with at most ``names`` names (one, unless the caller knows them all)."""
    mode = st.st_mode
    if stat.S_ISLNK(mode):
        raise _symlink(path)
    if stat.S_ISDIR(mode):
        return
    if stat.S_ISREG(mode):
        if st.st_nlink > names:
            raise NotPlain(path, "hardlink", f"{st.st_nlink} names")
        return
    raise _special(path, mode)


def plain_folder(path: Path) -> bool:
    """Whether ``path`` is a folder (False when it does not exist); :class:`NotPlain` when it
    is a symbolic link or anything else that is not a folder or a regular file."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return False
    check_entry(path, st)
    return stat.S_ISDIR(st.st_mode)


def plain_files(root: Path) -> list[PurePosixPath]:
    """The regular files under the folder ``root``, relative to it, sorted; :class:`NotPlain`
    at the first entry (at any depth) that is a symbolic link, a hard-linked file, a FIFO, a
    socket or a device. The folder itself must be a plain folder."""
    if not plain_folder(root):
        raise NotPlain(root, "missing", "not a folder")
    found: list[PurePosixPath] = []
    pending = [PurePosixPath()]
    while pending:
        rel = pending.pop()
        with os.scandir(root / rel) as entries:
            listed = sorted(entries, key=lambda e: e.name)
        for entry in listed:
            child = rel / entry.name
            st = entry.stat(follow_symlinks=False)
            check_entry(root / child, st)
            if stat.S_ISDIR(st.st_mode):
                pending.append(child)
            else:
                found.append(child)
    return sorted(found)


def open_plain(path: Path, names: int = 1) -> BinaryIO:
    """``path`` opened for reading, never through a final symbolic link; :class:`NotPlain`
    when what was opened is not a regular file of at most ``names`` names (one, unless the
    caller knows where all of them are), or not the file that was looked at."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        raise NotPlain(path, "missing", "no such file") from None
    check_entry(path, st, names)
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        if os.path.islink(path):  # swapped for a link since it was looked at (ELOOP)
            raise _symlink(path) from None
        raise
    try:
        opened = os.fstat(fd)
        check_entry(path, opened, names)
        if not stat.S_ISREG(opened.st_mode):
            raise NotPlain(path, "special", "not a regular file (a folder)")
        if (opened.st_dev, opened.st_ino) != (st.st_dev, st.st_ino):
            raise NotPlain(path, "special", "not the file that was looked at")
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_plain(path: Path, limit: int) -> bytes | None:
    """The bytes of the regular file ``path`` (see :func:`open_plain`); None when it holds more
    than ``limit`` bytes."""
    with open_plain(path) as fh:
        data = fh.read(limit + 1)
    return None if len(data) > limit else data


def relative_name(rel: str) -> bool:
    """Whether ``rel`` is a relative path (``/``-separated) that stays where it is given: not
    absolute, no ``..``, no empty part."""
    if not rel or rel.startswith("/") or (os.sep == "\\" and ("\\" in rel or ":" in rel)):
        return False
    return all(part not in ("", ".", "..") for part in rel.split("/"))


def plain_path(root: Path, rel: str) -> Path | None:
    """``root / rel`` when ``rel`` is a :func:`relative_name` reached from ``root`` through
    plain folders only (no symbolic link on the way); None otherwise. The last part is not
    looked at: open it with :func:`open_plain`."""
    if not relative_name(rel):
        return None
    parts = rel.split("/")
    folder = root
    for part in parts[:-1]:
        folder = folder / part
        try:
            if not stat.S_ISDIR(os.lstat(folder).st_mode):
                return None
        except OSError:
            return None
    return folder / parts[-1]
