"""The names of skill-creator's trigger eval files (``trigger_eval.json``): what the loaders
collect as trigger queries, and what a node id's file says of a query never started."""

from __future__ import annotations

#: skill-creator's trigger evals (a list, not a mapping with ``cases``).
TRIGGER_FILE = "trigger_eval.json"


def is_trigger_file(name: str) -> bool:
    """``trigger_eval.json``, or one named for its skill (``pdf_trigger_eval.json``)."""
    return name == TRIGGER_FILE or (name.endswith(TRIGGER_FILE) and name[-18] in "_-.")
