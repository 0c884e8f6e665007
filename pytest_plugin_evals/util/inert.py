"""Kept runs are inert: nothing in them is ever collected, imported or acted on again.

What an agent produced (a ``conftest.py``, a ``test_x.py``, an ``evals/`` folder of its own) is
kept for reading, never run: a folder holding :data:`INERT_MARKER` is skipped by the plugin's
``pytest_ignore_collect`` and by the suite discovery, wherever ``--eval-output-dir`` puts it.

Nor does any other tool act on it: a file or folder whose name a tool acts on when it enters,
opens or works in a folder (:data:`ACTIVE_NAMES`: a ``.git`` pointer, a ``HEAD`` that makes a
folder a bare repository, an ``.envrc``, a ``.vscode/``) is stored under :func:`stored_name`,
its name and :data:`SUFFIX`. A name that already ends with :data:`SUFFIX` gets one more, so the
stored name always gives back the original one (:func:`original_name`).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
from pathlib import Path

from pytest_plugin_evals.util.plainfiles import relative_name

INERT_MARKER = ".pytest-plugin-evals-results"

_MARKER_TEXT = (
    "Kept by pytest-plugin-evals: what agents produced during eval runs.\n"
    "pytest does not collect or import anything under this folder while this file is here.\n"
    "A name below that ends with .inert is the name the run wrote, with .inert added.\n"
)

#: What a stored name adds to a name a tool acts on.
SUFFIX = ".inert"

#: The names (compared as :func:`_normal` makes them) that a tool acts on when it finds them in
#: a folder it enters, opens or works in: it runs a command they name, loads code or a
#: configuration from them, or takes the folder for a repository. The reasons are in
#: ``docs/explanation/isolation.md`` ("Kept files are inert").
ACTIVE_NAMES = frozenset(
    {
        # Version control: a repository, a pointer to one (``gitdir:``), the file that makes a
        # folder a bare repository, and the files git and its hooks read in a work tree.
        ".git", "head", ".gitattributes", ".gitmodules", ".gitignore", ".lfsconfig",
        ".pre-commit-config.yaml", ".hg", ".hgignore", ".hgsub", ".svn", ".bzr", "_darcs",
        ".jj", ".pijul", ".fslckout", "_fossil_",
        # Shells, on entering a folder (direnv, autoenv, rvm, sdkman, dotenv loaders).
        ".envrc", ".env", ".direnv", ".env.leave", ".autoenv.zsh", ".autoenv_leave.zsh",
        ".rvmrc", ".sdkmanrc",
        # Version managers and package managers, which a prompt or any command runs there.
        ".tool-versions", ".mise.toml", "mise.toml", ".mise.local.toml", "mise.local.toml",
        ".mise", ".rtx.toml", ".nvmrc", ".node-version", ".python-version", ".ruby-version",
        ".venv", ".npmrc", ".yarnrc", ".yarnrc.yml",
        # Editors and debuggers, on opening the folder or starting there.
        ".vscode", ".idea", ".devcontainer", ".devcontainer.json", ".helix", ".zed",
        ".nvim.lua", ".nvimrc", ".exrc", ".lvimrc", ".dir-locals.el", ".dir-locals-2.el",
        ".gdbinit", ".lldbinit", ".pdbrc",
        # Coding agents working in the repository that holds the results.
        ".claude", ".mcp.json", "claude.md", "claude.local.md", "agents.md", "gemini.md",
        ".gemini", ".codex", ".cursor", ".cursorrules", ".opencode", "opencode.json",
        "opencode.jsonc", ".qwen",
    }
)  # fmt: skip

#: Code points some file systems ignore in a name (HFS+: ``.g\u200cit`` is ``.git``).
_IGNORED = re.compile("[\u200b-\u200f\u202a-\u202e\u2060-\u206f\ufeff]")


def _normal(name: str) -> str:
    """``name`` as the most lenient file system reads it: case folded, without ignorable code
    points or trailing dots and spaces (``.GIT.`` is ``.git`` on NTFS)."""
    return _IGNORED.sub("", name).rstrip(" .").casefold()


def is_active(name: str) -> bool:
    """Whether a tool acts on a file or folder of this name (one path component)."""
    return _normal(name) in ACTIVE_NAMES


def stored_name(name: str) -> str:
    """The name one path component is stored under: ``name`` with :data:`SUFFIX` when it is
    :func:`is_active` or already ends with :data:`SUFFIX`, else ``name`` itself."""
    return name + SUFFIX if is_active(name) or name.endswith(SUFFIX) else name


def original_name(stored: str) -> str:
    """The name that :func:`stored_name` stores as ``stored``."""
    return stored.removesuffix(SUFFIX)


def stored_path(rel: str) -> str:
    """A ``/``-separated relative path with each part as :func:`stored_name` stores it."""
    return "/".join(stored_name(part) for part in rel.split("/"))


def original_path(stored: str) -> str | None:
    """The relative path a :func:`stored_path` stores as ``stored``; None when there is none
    (a part ``...inert`` would be ``..``)."""
    rel = "/".join(original_name(part) for part in stored.split("/"))
    return rel if relative_name(rel) else None


def inert_path(rel: str) -> str:
    """A stored path with every part a tool acts on stored as :func:`stored_name` stores it
    (a stored path stays as it is): for copying a results folder that may not be inert."""
    return "/".join(stored_name(p) if is_active(p) else p for p in rel.split("/"))


def defuse_tree(root: Path) -> None:
    """Rename in place, below ``root``, every file and folder that :func:`stored_name` would
    rename; nothing is followed through a link. An entry that cannot be renamed is removed."""
    for folder, dirs, _ in os.walk(root):  # first every folder the owner's to change
        for name in dirs:
            path = os.path.join(folder, name)
            try:
                if not os.path.islink(path):
                    os.chmod(path, os.lstat(path).st_mode | stat.S_IRWXU)
            except OSError:
                pass
    for folder, dirs, files in os.walk(root, topdown=False):
        # The longest first: each name's stored name is then free (stored names are unique).
        for name in sorted((n for n in dirs + files if stored_name(n) != n), key=len)[::-1]:
            path = os.path.join(folder, name)
            try:
                if os.path.lexists(path + SUFFIX):
                    raise FileExistsError(path + SUFFIX)
                os.rename(path, path + SUFFIX)
            except OSError:
                _remove(path)


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        with contextlib.suppress(OSError):
            os.unlink(path)


def mark_inert(folder: Path) -> None:
    """Mark ``folder`` as kept runs, creating it if need be."""
    marker = folder / INERT_MARKER
    if not marker.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        marker.write_text(_MARKER_TEXT, encoding="utf-8")


def is_inert(folder: Path) -> bool:
    """Whether ``folder`` holds kept runs (a file path is not a folder: False)."""
    try:
        return (folder / INERT_MARKER).is_file()
    except OSError:
        return False
