"""Where ``init`` writes and how: the plugin's root, its evals folder, case names, and writes
that are atomic and never replace what is there.

A case folder is assembled in a hidden folder beside its place and renamed into it once whole;
a file is written beside its place and linked into it (a link fails when the name is taken),
so an interrupted ``init`` leaves a case whole or absent, and an existing case or trigger file
is never replaced.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from pytest_plugin_evals.suites.manifest import bare_plugin, collection_skills
from pytest_plugin_evals.util.manifest import manifest_path

#: The reference's blank case (``claude plugin eval init --bare NAME``), file by file.
BARE_PROMPT = (
    "---\nmax_turns: 10\nallowed_tools: [Read, Glob, Grep, Skill]\n---\n\n"
    "TODO: describe what the agent should do\n"
)
BARE_CRITERIA = (
    "---\ntype: llm\nweight: 1\n---\n\nTODO: describe what a successful response looks like\n"
)
BARE_FILES = {"prompt.md": BARE_PROMPT, "graders/criteria.md": BARE_CRITERIA}

DEFAULT_EVAL_DIR = "evals"
#: Letters, digits, '.', '_', '-', starting with a letter or digit.
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
#: The longest case name ``--bare`` takes (a folder name the file systems all hold).
LONGEST_NAME = 200
NAME_RULE = "use letters, digits, '.', '_', '-' only (no '/', no '..')"


class InitError(Exception):
    """Why ``init`` cannot do what it was asked: one line."""


class NotAPlugin(InitError):
    """The folder ``init`` runs in is neither a plugin nor a skill layout."""


class AlreadyThere(InitError):
    """The case folder or file exists: it is left as it is."""


def name_problem(name: str, longest: int = LONGEST_NAME) -> str | None:
    """Why ``name`` cannot be a case folder's name, or None when it can."""
    if _NAME.fullmatch(name) and ".." not in name and len(name) <= longest:
        return None
    return f"case name {_show(name)} won't work — {NAME_RULE}, at most {longest} characters"


def _show(text: str) -> str:
    cut = text if len(text) <= 80 else text[:80] + "…"
    return '"' + "".join(c if c.isprintable() else "?" for c in cut) + '"'


def plugin_root(folder: Path) -> Path:
    """``folder`` when it is a plugin (its manifest) or a skill layout (a skill collection's
    ``<skill>/SKILL.md`` folders too, before it has an ``evals/``); else InitError."""
    if manifest_path(folder).is_file() or bare_plugin(folder) is not None:
        return folder
    if collection_skills(folder):
        return folder
    raise NotAPlugin(
        f"{folder} is not a plugin or skill folder — run `python -m pytest_plugin_evals init` "
        "from the plugin's root folder, or pass --eval-dir to scaffold here on purpose."
    )


def eval_dir(root: Path, given: str | None) -> Path:
    """The evals folder: ``given`` (relative, inside ``root``), else ``evals/``."""
    if given is None:
        return root / DEFAULT_EVAL_DIR
    if not given.strip():
        raise InitError("--eval-dir must not be empty")
    if os.path.isabs(given):
        raise InitError(
            "--eval-dir must be a relative path inside the plugin (e.g. quality/evals), "
            "not absolute"
        )
    if ".." in PurePosixPath(given.replace("\\", "/")).parts:
        raise InitError(
            f"--eval-dir must be a relative path inside the plugin (got {_show(given)}, "
            "which leads out of it)"
        )
    folder = root / given
    if not folder.resolve().is_relative_to(root.resolve()):
        raise InitError(f"--eval-dir {_show(given)} leads out of the plugin (through a link)")
    return folder


def shown(path: Path, root: Path) -> str:
    """``path`` relative to ``root`` when it is inside it."""
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return str(path)


def collected(evals: Path) -> bool:
    """Whether ``pytest`` collects ``evals`` by its name alone (else it needs ``eval_paths``)."""
    return evals.name == DEFAULT_EVAL_DIR


def next_command(evals: Path, root: Path) -> str:
    """The command that runs the cases under ``evals``, and what it needs."""
    where = shown(evals, root)
    if collected(evals):
        return f"pytest {where}/"
    return (
        f"pytest {where}/ -o eval_paths={where} (pytest collects cases from folders named "
        f"evals and those eval_paths lists: add eval_paths = {where} to your pytest "
        "configuration to drop the -o)"
    )


def write_case(folder: Path, files: Mapping[str, str]) -> None:
    """Write the case folder ``folder`` with ``files`` (relative path -> text), whole or not
    at all; AlreadyThere when ``folder`` exists (nothing is changed)."""
    if folder.exists() or folder.is_symlink():
        raise AlreadyThere(f"{folder.name} already exists")
    parent = folder.parent
    if parent.is_symlink():
        raise InitError(f"{parent} is a link: cases are written only in a plain folder")
    parent.mkdir(parents=True, exist_ok=True)
    draft = Path(tempfile.mkdtemp(prefix=f".{folder.name[:40]}.", dir=parent))
    try:
        for rel, text in files.items():
            target = draft / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            with open(target, "x", encoding="utf-8", newline="\n") as fh:
                fh.write(text)
        os.chmod(draft, 0o755)
        if folder.exists() or folder.is_symlink():
            raise AlreadyThere(f"{folder.name} already exists")
        os.rename(draft, folder)
    except BaseException:
        shutil.rmtree(draft, ignore_errors=True)
        raise


def write_new_file(path: Path, text: str) -> None:
    """Write ``path`` whole, never replacing a file there (AlreadyThere)."""
    if path.exists() or path.is_symlink():
        raise AlreadyThere(f"{path.name} already exists")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.chmod(name, 0o644)
        try:
            os.link(name, path)
        except FileExistsError:
            raise AlreadyThere(f"{path.name} already exists") from None
    finally:
        os.unlink(name)


def write_bare(root: Path, evals: Path, name: str) -> str:
    """The reference's blank case ``name`` under ``evals``; the line saying what was written."""
    problem = name_problem(name)
    if problem is not None:
        raise InitError(problem)
    folder = evals / name
    try:
        write_case(folder, BARE_FILES)
    except AlreadyThere:
        raise AlreadyThere(
            f"{shown(folder, root)} already exists: nothing written (init never replaces a case)"
        ) from None
    written = " and ".join(shown(folder / rel, root) for rel in BARE_FILES)
    return f"Created {written}"
