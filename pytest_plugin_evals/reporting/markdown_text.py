"""Markdown text that stays text (pure): what the agent or the suite wrote, made safe for a pull
request's comment, and the lines and tables of the summary kept within 80 columns.

Case names, notes and grader explanations are hostile. In GitHub's Markdown they must show as
the characters they are: no link, image, HTML tag, code span, emphasis or table cell they open,
no person they mention (``@name``), no issue they reference (``#123``, ``GH-123``) and no
address turned into a link. :func:`inline` backslash-escapes every character that opens
Markdown syntax (CommonMark lets any ASCII punctuation be escaped, and GFM's tables take ``\\|``
as a ``|`` inside a cell) and puts an invisible zero-width space after ``@`` and ``#``, inside
``://`` and after ``www``: GitHub looks for mentions, references and bare addresses in the
rendered text, where a backslash is already gone, so only a character between breaks them.
"""

from __future__ import annotations

import re
import textwrap
from collections.abc import Sequence

from pytest_plugin_evals.reporting.terminal import plain

#: The widest line of raw Markdown the summary writes (a table row aside: it cannot wrap).
WIDTH = 80
#: Invisible, and between ``@`` and a name no mention is found (Renovate's ``@&#8203;``).
ZWSP = "\u200b"
#: Characters that open Markdown syntax anywhere in a line, escaped with a backslash. ``(``
#: and ``)`` need none once ``[`` and ``]`` are escaped.
_SYNTAX = re.compile(r"([\\`*_{}\[\]<>!|~&$])")
#: What GitHub links in rendered text: a mention, an issue, an address, an e-mail address.
_LINKED = re.compile(r"(?<=[@#])|(?<=:)(?=//)|(?<=\bwww)(?=\.)|(?<=\bGH-)(?=\d)", re.IGNORECASE)
#: Characters that reorder or hide text (bidirectional controls, zero-width marks).
_HIDDEN = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")
#: A word longer than this is cut: no line is wider than :data:`WIDTH` for it.
LONGEST_WORD = 60
#: What starts a block at the start of a line: a list, a heading, a quote, a table row, a
#: setext underline or thematic break, an ordered list's number.
_BLOCK_START = re.compile(r"^([-+*=>#|])|^(\d{1,9})([.)])(?=\s|$)")


def inline(text: str, limit: int = 80) -> str:
    """``text`` as inline Markdown that renders as exactly its characters, on one line of at
    most ``limit`` of them (cut with ``…``), terminal controls and hidden characters gone; safe
    at the start of a line or a list item too."""
    line = " ".join(_HIDDEN.sub("", plain(text)).split())
    words = [w if len(w) <= LONGEST_WORD else w[: LONGEST_WORD - 1] + "…" for w in line.split()]
    line = " ".join(words)
    if len(line) > limit:
        line = line[: limit - 1].rstrip() + "…"
    return _unblock(_LINKED.sub(ZWSP, _SYNTAX.sub(r"\\\1", line)))


def wrap(text: str, first: str = "", rest: str = "") -> list[str]:
    """A paragraph (or a list item: ``first`` its marker, ``rest`` its indent) of safe inline
    Markdown as lines of at most :data:`WIDTH` columns; a line that would start a block (a
    word ``-`` or ``1.`` wrapped to the start) has that character escaped."""
    lines = textwrap.wrap(
        text,
        width=WIDTH - 1,  # room for the backslash a continuation line may need
        initial_indent=first,
        subsequent_indent=rest,
        break_long_words=False,
        break_on_hyphens=False,
    )
    return [lines[0], *(rest + _unblock(line[len(rest) :]) for line in lines[1:])] if lines else []


def _unblock(line: str) -> str:
    return _BLOCK_START.sub(lambda m: f"\\{m[1]}" if m[1] else f"{m[2]}\\{m[3]}", line, count=1)


def table(header: Sequence[str], rows: Sequence[Sequence[str]], right: Sequence[int]) -> list[str]:
    """A GFM table of safe cells, each column padded to its widest cell (raw Markdown reads as
    a table too); the columns whose index is in ``right`` are aligned right (numbers)."""
    widths = [max(3, len(header[i]), *(len(r[i]) for r in rows)) for i in range(len(header))]

    def line(cells: Sequence[str]) -> str:
        padded = [
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "| " + " | ".join(padded) + " |"

    rule = [("-" * (w - 1) + ":") if i in right else "-" * w for i, w in enumerate(widths)]
    return [line(header), line(rule), *(line(r) for r in rows)]
