"""A scripted model for tests: a Messages API server on 127.0.0.1 that answers by rules."""

from __future__ import annotations

from .rules import (
    ApiError,
    Reply,
    Request,
    Rule,
    TextBlock,
    ToolUseBlock,
    delay,
    error,
    reply,
    text,
    tool_use,
)
from .server import ScriptedModel

__all__ = [
    "ApiError",
    "Reply",
    "Request",
    "Rule",
    "ScriptedModel",
    "TextBlock",
    "ToolUseBlock",
    "delay",
    "error",
    "reply",
    "text",
    "tool_use",
]
