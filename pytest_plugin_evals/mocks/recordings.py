"""Where ``type: agent`` stand-ins save the answers a model gave, and how a session says so."""

from __future__ import annotations

from pathlib import Path

ADOPT_FILE = "ADOPT.txt"


def recordings_notice(recordings_dir: Path) -> str | None:
    """The line announcing a session's recorded answers (for stderr), or None if none."""
    files = sorted(recordings_dir.glob("*/*.json")) if recordings_dir.is_dir() else []
    if not files:
        return None
    servers = ", ".join(sorted({f.parent.name for f in files}))
    return (
        f"mock recordings: {len(files)} model answer(s) for {servers} saved in "
        f"{recordings_dir}; copy them into mocks/.replay/<server>/ to replay them without a "
        f"model (see {ADOPT_FILE} there)"
    )
