"""Digests of what shapes a run, for :mod:`pytest_plugin_evals.reuse`'s fingerprints: a value
(as canonical JSON), a file's bytes, a folder's names, files and links — each bounded, a folder
too large to read refused (:class:`TooLarge`)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Any

#: The most files, and bytes, a fingerprint reads in one folder.
MAX_TREE_FILES = 20_000
MAX_TREE_BYTES = 512 * 2**20


class TooLarge(Exception):
    """A folder too large to fingerprint (its runs are made, never reused)."""


def digest(value: Any) -> str:
    """The SHA-256 of ``value`` as canonical JSON."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def file_digest(path: Path, limit: int = MAX_TREE_BYTES) -> str:
    """The SHA-256 of a file's bytes (``absent`` when there is none; :class:`TooLarge`)."""
    try:
        st = os.stat(path)
    except OSError:
        return "absent"
    if stat.S_ISDIR(st.st_mode):
        return tree_digest(path)
    if st.st_size > limit:
        raise TooLarge(f"{path} is larger than {limit // 2**20} MB")
    sha = hashlib.sha256()
    try:
        with path.open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                sha.update(block)
    except OSError:
        return "unreadable"
    return sha.hexdigest()


def tree_digest(root: Path, skip: Callable[[PurePosixPath], bool] = lambda _: False) -> str:
    """The SHA-256 of a folder: every name under it, each file's bytes, each link's target
    (never followed); ``absent`` when there is no folder. ``skip`` leaves names out."""
    if not root.is_dir():
        return "absent" if not root.exists() else file_digest(root)
    sha = hashlib.sha256()
    files = 0
    size = 0
    pending = [PurePosixPath()]
    while pending:
        rel = pending.pop()
        try:
            with os.scandir(root / rel) as entries:
                listed = sorted(entries, key=lambda e: e.name)
        except OSError:
            sha.update(f"unreadable {rel}\n".encode("utf-8", "surrogatepass"))
            continue
        for entry in listed:
            child = rel / entry.name
            if skip(child):
                continue
            files += 1
            if files > MAX_TREE_FILES:
                raise TooLarge(f"{root} holds more than {MAX_TREE_FILES:,} files")
            name = child.as_posix().encode("utf-8", "surrogatepass")
            if entry.is_symlink():
                sha.update(b"L " + name + b" " + os.fsencode(os.readlink(entry.path)) + b"\n")
            elif entry.is_dir(follow_symlinks=False):
                sha.update(b"D " + name + b"\n")
                pending.append(child)
            elif entry.is_file(follow_symlinks=False):
                size += entry.stat(follow_symlinks=False).st_size
                if size > MAX_TREE_BYTES:
                    raise TooLarge(f"{root} holds more than {MAX_TREE_BYTES // 2**20} MB")
                sha.update(b"F " + name + b" " + file_digest(Path(entry.path)).encode() + b"\n")
    return sha.hexdigest()
