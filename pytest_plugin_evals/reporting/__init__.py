"""Reports of an eval session: the result document, the terminal summary, the HTML page.

All of them work from plain records and the document (builtins only), so they give the same
output with and without pytest-xdist.
"""

from __future__ import annotations

from ..scoring import Gate, gate
from .document import SCHEMA_VERSION, build_document, case_notes, dumps_document
from .html import render_html
from .terminal import summary_lines

__all__ = [
    "SCHEMA_VERSION",
    "Gate",
    "build_document",
    "case_notes",
    "dumps_document",
    "gate",
    "render_html",
    "summary_lines",
]
