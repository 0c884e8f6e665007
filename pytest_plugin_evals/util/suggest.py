"""The nearest known name to a misspelt one, for an "unknown key" message."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


def did_you_mean(word: object, choices: Iterable[str]) -> str:
    """`` — did you mean <choice>?`` for the known name nearest to ``word``, or ``""`` when
    none is near (``max_turn`` → ``max_turns``, ``timeout`` → ``timeout_seconds``; ``colour``
    → nothing). Near is a close spelling, else a known name that starts with the word."""
    text, known = str(word), list(choices)
    found = difflib.get_close_matches(text, known, n=1, cutoff=0.75)
    if not found and len(text) >= 4:
        found = sorted((c for c in known if c.startswith(text)), key=len)[:1]
    return f" — did you mean {found[0]}?" if found else ""
