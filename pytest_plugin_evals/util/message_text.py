"""The text of a model message's ``content`` (Anthropic's and OpenAI's wire forms alike): a
string as it is, or the ``text`` of its text parts, one line each."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def content_text(
    content: Any,
    *,
    kind: str | None = "text",
    other: Callable[[Any], str] = lambda _: "",
) -> str:
    """``content``'s text: a string as it is; of a list, the ``text`` of each part whose
    ``type`` is ``kind`` (any part with a string ``text`` when ``kind`` is None), joined by
    newlines; anything else as ``other`` says (``""``)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict)
            and (part.get("type") == kind if kind else isinstance(part.get("text"), str))
        )
    return other(content)
