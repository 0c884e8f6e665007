"""Finding the ``claude`` binary: ``--eval-claude-bin``, else ``claude`` on PATH."""

from __future__ import annotations

import shutil
from pathlib import Path

INSTALL_HINT = "install Claude Code (npm install @anthropic-ai/claude-code)"


class ClaudeNotFound(Exception):
    """No claude binary where it was looked for; the message is one sentence."""


def find_claude(configured: str | None, *, path: str | None = None) -> str:
    """The binary ``configured`` names (``--eval-claude-bin``), else ``claude`` on ``path``
    (default: PATH). Raises :class:`ClaudeNotFound` with the message to show."""
    if configured:
        found = Path(configured).expanduser()
        if not found.exists():
            raise ClaudeNotFound(f"--eval-claude-bin {configured}: no such file")
        return str(found.resolve())
    located = shutil.which("claude", path=path)
    if located is None:
        raise ClaudeNotFound(
            f"the claude binary was not found on PATH: {INSTALL_HINT} "
            "or pass --eval-claude-bin PATH"
        )
    return located
