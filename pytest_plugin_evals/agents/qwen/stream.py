"""Qwen Code's ``--output-format stream-json`` trace → the common :class:`Transcript`.

The events (one JSON object a line), in Claude Code's shape::

    {"type": "system", "subtype": "init", "tools": [...], "mcp_servers": [...],
     "slash_commands": ["bump", "<plugin>:<skill>", ...], "model": ..., "qwen_code_version": ...}
    {"type": "assistant", "message": {"content": [{"type": "text", "text": ...},
        {"type": "tool_use", "id": ..., "name": "run_shell_command", "input": {...}}],
        "usage": {...}}}
    {"type": "user", "message": {"content": [{"type": "tool_result", "tool_use_id": ...,
        "is_error": false, "content": "..."}]}}
    {"type": "stream_event", ...}                         (progress; skipped)
    {"type": "result", "subtype": "success" | "error_…", "is_error": …, "num_turns": …,
     "result": "<final text>", "usage": {"input_tokens", "output_tokens"},
     "error": {"message": ...}}

A tool's name becomes the canonical one (its declaration's ``tools``); an MCP tool
(``mcp__<server>__<tool>``, its server as the run's settings name it) gets Claude Code's name
back from the run's :class:`McpPlan`. Qwen Code reports no price. Pure parsing, line by line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_plugin_evals.agents.base import infra_kind
from pytest_plugin_evals.agents.calls import CallLog, StreamEnds, read_trace
from pytest_plugin_evals.agents.canonical import canonical
from pytest_plugin_evals.agents.mcp import McpPlan
from pytest_plugin_evals.model import InfraKind, Transcript
from pytest_plugin_evals.util.jsonlines import count, load_events


@dataclass
class StreamSummary(StreamEnds):
    slash_commands: list[str] = field(default_factory=list)

    @property
    def error_message(self) -> str | None:
        """The run's error, when its result says it failed."""
        result = self.result or {}
        error = result.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
        if result.get("is_error") is True:
            text = result.get("result")
            return str(text) if text else str(result.get("subtype") or "error")
        return None

    def outside(self, stderr: str) -> InfraKind | None:
        """An API error (its message names a status, or says ``API Error``): its kind."""
        message = self.error_message
        status = api_status(message)
        if message is None or (status is None and "API Error" not in message):
            return None
        return infra_kind(status)


def tool_name(name: str, mcp: McpPlan | None = None) -> str:
    """The canonical name of a Qwen Code tool (an MCP tool's through the run's plan)."""
    if name.startswith("mcp_") and mcp is not None:
        found = mcp.split(name)
        if found is not None:
            return mcp.canonical(*found)
    return canonical("qwen", name)


def _text(content: Any) -> str | None:
    if content is None or isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [c.get("text") for c in content if isinstance(c, dict)]
        return "".join(p for p in parts if isinstance(p, str))
    return json.dumps(content)


class _Builder:
    def __init__(self, mcp: McpPlan | None) -> None:
        self.mcp = mcp
        self.log = CallLog()
        self.text: list[str] = []
        self.turns = 0
        self.summary = StreamSummary()

    def feed(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        message = event.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if kind == "system" and event.get("subtype") == "init":
            self.summary.init = event
            listed = event.get("slash_commands")
            if isinstance(listed, list):
                self.summary.slash_commands = [str(c) for c in listed]
        elif kind == "assistant" and isinstance(content, list):
            self.turns += 1
            self.text = []
            for block in content:
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "text" and isinstance(block.get("text"), str):
                    self.text.append(block["text"])
                elif block.get("type") == "tool_use":
                    self._call(block)
        elif kind == "user" and isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    self._result(block)
        elif kind == "result":
            self.summary.result = event

    def _call(self, block: dict[str, Any]) -> None:
        original = str(block.get("name") or "")
        name = tool_name(original, self.mcp)
        self.log.made(original, name, block.get("input"), block.get("id"))

    def _result(self, block: dict[str, Any]) -> None:
        output = _text(block.get("content"))
        if self.log.answered(block.get("tool_use_id"), output, block.get("is_error") is True):
            self.text = []


def parse_events(
    lines: Iterable[str], mcp: McpPlan | None = None
) -> tuple[Transcript, StreamSummary]:
    """Fold stream-json lines into a transcript; unparseable lines are skipped."""
    builder = _Builder(mcp)
    for event in load_events(lines):
        builder.feed(event)
    summary = builder.summary
    result = summary.result or {}
    final = result.get("result") if isinstance(result.get("result"), str) else None
    transcript = Transcript(
        tool_calls=builder.log.calls,
        final_message=final if final is not None else "".join(builder.text),
        turns=count(result.get("num_turns")) or builder.turns,
    )
    usage = result.get("usage")
    if isinstance(usage, dict):
        transcript.input_tokens = count(usage.get("input_tokens"))
        transcript.output_tokens = count(usage.get("output_tokens"))
    return transcript, summary


def parse_file(path: Path, mcp: McpPlan | None = None) -> tuple[Transcript, StreamSummary]:
    return read_trace(path, lambda lines: parse_events(lines, mcp))


_STATUS = re.compile(r"\b(4\d\d|5\d\d)\b")


def api_status(message: str | None) -> int | None:
    """The HTTP status an API error names (``429 …``, ``status 503``), if any."""
    found = _STATUS.findall(message or "")
    return int(found[0]) if found else None
