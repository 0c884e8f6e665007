"""Small helpers shared by the test modules (fixtures live in the conftest files)."""

from __future__ import annotations

from pathlib import Path


def write_tree(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (relative path -> text) under ``root``; returns ``root``."""
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def claude_argv(claude_bin: str, *extra: str, max_turns: int = 6) -> list[str]:
    """``claude -p`` as the harness runs it (stream-json, dontAsk, user settings only)."""
    return [
        claude_bin, "-p", "--output-format", "stream-json", "--verbose",
        "--max-turns", str(max_turns), "--permission-mode", "dontAsk",
        "--setting-sources", "user", *extra,
    ]  # fmt: skip
