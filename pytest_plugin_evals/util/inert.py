"""Folders of kept runs, marked so nothing in them is ever collected or imported again.

What an agent produced (a ``conftest.py``, a ``test_x.py``, an ``evals/`` folder of its own) is
kept for reading, never run: a folder holding :data:`INERT_MARKER` is skipped by the plugin's
``pytest_ignore_collect`` and by the suite discovery, wherever ``--eval-output-dir`` puts it.
"""

from __future__ import annotations

from pathlib import Path

INERT_MARKER = ".pytest-plugin-evals-results"

_MARKER_TEXT = (
    "Kept by pytest-plugin-evals: what agents produced during eval runs.\n"
    "pytest does not collect or import anything under this folder while this file is here.\n"
)


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
