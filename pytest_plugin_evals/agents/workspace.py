"""Preparing a run's working directory: a fresh git repository, the case's context folders and
its scaffold script."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from ..sandbox import Sandbox
from .base import RunRequest
from .process import run_process

SCAFFOLD_TIMEOUT = 120


def git_init(box: Sandbox, env: dict[str, str]) -> None:
    """Make the cwd a fresh git repository, hardened: no hooks, no credential helper."""
    git = shutil.which("git", path=env.get("PATH"))
    if git is None:
        return
    commands = [
        [git, "init", "-q"],
        [git, "config", "user.name", "Plugin Eval"],
        [git, "config", "user.email", "plugin-eval@localhost"],
        [git, "config", "core.hooksPath", "/dev/null"],
        [git, "config", "credential.helper", ""],
        [git, "config", "commit.gpgsign", "false"],
    ]
    for argv in commands:
        subprocess.run(
            argv,
            cwd=box.cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=False,
        )


def copy_add_dirs(request: RunRequest) -> list[Path]:
    """Copy the case's ``add_dirs`` into the sandbox: readable by the agent, never its originals."""
    copies: list[Path] = []
    context = request.sandbox.root / "context"
    for rel in request.case.add_dirs:
        source = (request.case.dir / rel).resolve()
        if not source.is_dir():
            continue
        target = context / source.name
        shutil.copytree(source, target, symlinks=False, dirs_exist_ok=True)
        copies.append(target)
    return copies


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
