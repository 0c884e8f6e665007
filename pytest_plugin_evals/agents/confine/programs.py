"""What of a program a confined run may see: the program, never the folder around it.

One rule for every program a run starts from a path someone else chose — a ``cmd:`` agent's
program and interpreter, an agent CLI's ``#!`` interpreter, a plugin's real MCP server's
command: the file (and where its links lead), and for a program in a ``bin/`` folder the
folder above only when it is a runtime's own installation — a Python prefix (``pyvenv.cfg``, or
``lib/pythonX.Y/os.py``) or a Node install (``lib/node_modules``) — that is not the operator's
home and holds none of the folders a run must not see. Any other folder above a ``bin/``
(``~/bin``'s home, a project's ``tools/bin``) stays unseen: the operator shows it with
``--eval-allow-read``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_plugin_evals.agents.confine import SYSTEM_FOLDERS

#: The folder names of programs whose installation is the folder above them.
BIN_FOLDERS = ("bin", "Scripts")


@dataclass(frozen=True)
class ProgramReach:
    """What a run may read of one program, and the installation folder it was refused."""

    read: tuple[Path, ...] = ()
    #: The folders above its ``bin/`` that are no runtime's (or are the home, or hold it).
    refused: tuple[Path, ...] = ()


def program_reach(arg: str, hidden: Iterable[Path], *, files_only: bool = False) -> ProgramReach:
    """What of the program ``arg`` names (an absolute path) a confined run may see; with
    ``files_only``, nothing but an executable file (what a plugin names)."""
    path = Path(arg)
    try:
        if not os.path.isabs(arg) or not path.exists():
            return ProgramReach()
        real = path.resolve()
    except (OSError, RuntimeError):  # where this user may not look, a link loop
        return ProgramReach()
    if files_only and not (real.is_file() and os.access(real, os.X_OK)):
        return ProgramReach(refused=(path,))
    hidden = _reals(hidden)
    read: list[Path] = [path, real]
    refused: list[Path] = []
    for candidate in (path, real):
        if candidate.parent.name in BIN_FOLDERS and candidate.parent.parent != Path("/"):
            root = candidate.parent.parent
            (read if is_runtime(root, hidden) else refused).append(root)
    return ProgramReach(tuple(dict.fromkeys(read)), tuple(dict.fromkeys(refused)))


def interpreter_of(program: str, hidden: Iterable[Path] = ()) -> ProgramReach:
    """What a script's ``#!`` line names (``#!/opt/py/bin/python3``: that interpreter, and its
    installation when it is a runtime's), so that a confined run can start it; nothing for a
    binary, or for ``#!/usr/bin/env x`` (found on PATH)."""
    try:
        with open(program, "rb") as fh:
            head = fh.read(256)
    except OSError:
        return ProgramReach()
    if not head.startswith(b"#!"):
        return ProgramReach()
    words = head[2:].split(b"\n", 1)[0].decode("utf-8", "replace").split()
    if not words or not os.path.isabs(words[0]) or os.path.basename(words[0]) == "env":
        return ProgramReach()
    return program_reach(words[0], hidden)


def is_runtime(folder: Path, hidden: Sequence[Path] = ()) -> bool:
    """Whether ``folder`` is a runtime's own installation a run may see whole: a Python prefix
    or virtual environment, or a Node install — and neither is, nor holds, a ``hidden`` one."""
    try:
        real = folder.resolve()
    except (OSError, RuntimeError):
        return False
    if any(h == real or h.is_relative_to(real) for h in (*hidden, *_reals([Path.home()]))):
        return False
    try:
        return (
            (real / "pyvenv.cfg").is_file()
            or any(real.glob("lib/python*/os.py"))
            or any(real.glob("lib/pypy*/os.py"))
            or (real / "lib" / "node_modules").is_dir()
        )
    except OSError:
        return False


def shown_anyway(path: Path, shown: Iterable[Path]) -> bool:
    """Whether ``path`` is readable in a run anyway: in a system folder or a folder shown."""
    try:
        real = path.resolve()
        folders = [*(Path(s) for s in SYSTEM_FOLDERS), *(p.resolve() for p in shown)]
        return any(real == f or (f.is_dir() and real.is_relative_to(f)) for f in folders)
    except (OSError, RuntimeError):  # where this user may not look, a link loop
        return False


def _reals(paths: Iterable[Path]) -> list[Path]:
    found: list[Path] = []
    for path in paths:
        try:
            found.append(path.resolve())
        except (OSError, RuntimeError):
            continue
    return found
