"""Preparing a run's working directory: the case's context folders and its scaffold script."""

from __future__ import annotations

import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

from ..util.process import run_process
from .base import RunRequest

SCAFFOLD_TIMEOUT = 120


def copy_add_dirs(request: RunRequest) -> list[Path]:
    """Copy the case's ``add_dirs`` into the sandbox: readable by the agent, never its originals.

    Each folder keeps its name (``fixtures`` → ``<run>/context/fixtures``; a second folder of
    the same name becomes ``fixtures-2``). A symbolic link inside it is copied as what it points
    to only when that stays inside the folder: a link to a grader or to ``~/.ssh`` is left out.
    """
    copies: list[Path] = []
    context = request.sandbox.root / "context"
    for rel in request.case.add_dirs:
        source = (request.case.dir / rel).resolve()
        if not source.is_dir():
            continue
        target = context / source.name
        number = 1
        while target.exists() or target in copies:
            number += 1
            target = context / f"{source.name}-{number}"
        shutil.copytree(source, target, symlinks=False, ignore=_links_leaving(source))
        copies.append(target)
    return copies


#: Characters Claude Code's path rules read as a pattern (a backslash does not escape them).
_PATTERN = re.compile(r"[*?\[\]{}\\]")


def original_add_dirs(request: RunRequest) -> list[Path]:
    """The case's ``add_dirs`` folders where they are, to be readable in place as well.

    Each as written under the case folder (absolute, links not followed) and, when that
    differs, where it really is. Left out: a folder that is not strictly inside the case folder
    (``.`` would open its graders and prompt) and a path holding a character that a
    permission rule would read as a pattern (the copy is still given).
    """
    case_dir = request.case.dir.resolve()
    found: list[Path] = []
    for rel in request.case.add_dirs:
        given = Path(os.path.abspath(request.case.dir / rel))
        real = given.resolve()
        if not real.is_dir() or real == case_dir or not real.is_relative_to(case_dir):
            continue
        forms = [given] if given == real else [given, real]
        if not any(_PATTERN.search(form.as_posix()) for form in forms):
            found.extend(forms)
    return list(dict.fromkeys(found))


def _links_leaving(root: Path) -> Callable[[str, list[str]], set[str]]:
    """A ``copytree`` filter dropping symbolic links that resolve outside ``root`` (or to a
    folder holding the link itself, which would copy forever)."""

    def ignore(folder: str, names: list[str]) -> set[str]:
        dropped = set()
        here = Path(folder).resolve()
        for name in names:
            path = Path(folder, name)
            if path.is_symlink():
                target = path.resolve()
                if (
                    not target.exists()
                    or not target.is_relative_to(root)
                    or here.is_relative_to(target)
                ):
                    dropped.add(name)
        return dropped

    return ignore


def run_scaffold(request: RunRequest, env: dict[str, str]) -> str | None:
    """Run the case's scaffold script in the cwd; the error message when it fails."""
    script = request.case.scaffold_script
    if not script:
        return None
    path = (request.case.dir / script).resolve()
    out = request.sandbox.root / "scaffold"
    out.mkdir(exist_ok=True)
    result = run_process(
        ["bash", str(path)],
        stdin_text="",
        cwd=request.sandbox.cwd,
        env=env,
        timeout=SCAFFOLD_TIMEOUT,
        out_dir=out,
    )
    if result.start_error:
        return f"scaffold could not start: {result.start_error}"
    if result.timed_out:
        return f"scaffold timed out after {SCAFFOLD_TIMEOUT}s"
    if result.returncode != 0:
        return f"scaffold failed (exit {result.returncode}): {result.stderr_tail(500)}"
    return None
