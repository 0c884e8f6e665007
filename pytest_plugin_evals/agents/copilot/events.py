"""GitHub Copilot CLI's ``--output-format json`` trace → the common :class:`Transcript`.

Pure parsing, streamed line by line. The events read (one JSON object a line):

- ``session.skills_loaded`` ``{skills: [{name, commandName, source, path}]}``: what the run
  loaded; a plugin's skill has ``source: "plugin"`` and ``commandName: "<plugin>:<skill>"``;
- ``assistant.turn_start``: one per model turn;
- ``assistant.message`` ``{content, toolRequests: [{toolCallId, name, arguments}]}``;
- ``tool.execution_start`` ``{toolCallId, toolName, arguments, mcpServerName?, mcpToolName?}``
  and ``tool.execution_complete`` ``{toolCallId, success, result: {content}, error: {message}}``;
- ``session.error`` ``{errorType, statusCode, message}``: the model's API refused the run;
- ``result`` ``{exitCode, usage: {premiumRequests, totalApiDurationMs, sessionDurationMs}}``.

Copilot reports no token counts and no price for a custom provider: tokens stay None.
Tool names are made canonical with :mod:`pytest_plugin_evals.agents.canonical`; an MCP tool
(Copilot's ``<server>-<tool>``) gets Claude Code's name from the run's MCP plan
(:meth:`McpPlan.canonical`: ``mcp__plugin_<plugin>_<server>__<tool>`` for a plugin server or
its stand-in), from the event's ``mcpServerName`` / ``mcpToolName``, or from the name itself
for a call that never ran (an unknown or withheld tool).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_plugin_evals.agents.calls import read_trace
from pytest_plugin_evals.agents.canonical import canonical, mcp_name
from pytest_plugin_evals.agents.mcp import McpPlan
from pytest_plugin_evals.model import ToolCall, Transcript
from pytest_plugin_evals.util.jsonlines import amount, count, load_events

AGENT = "copilot"


@dataclass
class CopilotSummary:
    """What the trace says beyond the transcript: what loaded and how the run ended."""

    #: ``session.skills_loaded``'s skills (None when the event never came).
    skills: list[dict[str, Any]] | None = None
    result: dict[str, Any] | None = None
    #: The last ``session.error``.
    error: dict[str, Any] | None = None

    def plugin_skills(self, plugin: str) -> list[str]:
        """The ``<plugin>:<skill>`` names of ``plugin``'s skills that the run loaded."""
        prefix = f"{plugin}:"
        return [
            str(s.get("commandName"))
            for s in self.skills or []
            if isinstance(s, dict) and str(s.get("commandName") or "").startswith(prefix)
        ]

    @property
    def error_status(self) -> int | None:
        status = (self.error or {}).get("statusCode")
        return status if isinstance(status, int) and not isinstance(status, bool) else None

    @property
    def error_type(self) -> str | None:
        kind = (self.error or {}).get("errorType")
        return kind if isinstance(kind, str) else None

    @property
    def error_text(self) -> str:
        message = (self.error or {}).get("message")
        return str(message).strip() if message else "API error"


def _text(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


@dataclass
class _Call:
    name: str
    input: dict[str, Any]
    mcp: tuple[str, str] | None = None
    output: str | None = None
    is_error: bool = False


@dataclass
class _Builder:
    calls: dict[str, _Call] = field(default_factory=dict)
    turns: int = 0
    final: str = ""
    summary: CopilotSummary = field(default_factory=CopilotSummary)

    def call(self, call_id: str, name: str, arguments: Any) -> _Call:
        found = self.calls.get(call_id)
        if found is None:
            found = _Call(name, arguments if isinstance(arguments, dict) else {})
            self.calls[call_id] = found
        return found

    def feed(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        data = event.get("data")
        data = data if isinstance(data, dict) else {}
        if kind == "session.skills_loaded":
            skills = data.get("skills")
            self.summary.skills = (
                [s for s in skills if isinstance(s, dict)] if isinstance(skills, list) else []
            )
        elif kind == "assistant.turn_start":
            self.turns += 1
        elif kind == "assistant.message":
            self._message(data)
        elif kind == "tool.execution_start":
            call_id = str(data.get("toolCallId") or "")
            call = self.call(call_id, str(data.get("toolName") or ""), data.get("arguments"))
            server, tool = data.get("mcpServerName"), data.get("mcpToolName")
            if isinstance(server, str) and isinstance(tool, str) and server and tool:
                call.mcp = (server, tool)
        elif kind == "tool.execution_complete":
            call_id = str(data.get("toolCallId") or "")
            found = self.calls.get(call_id)
            if found is None:
                return
            result = data.get("result")
            error = data.get("error")
            found.is_error = data.get("success") is not True
            if isinstance(result, dict) and result.get("content") is not None:
                found.output = _text(result.get("content"))
            elif isinstance(error, dict):
                found.output = _text(error.get("message"))
        elif kind == "session.error":
            self.summary.error = data
        elif kind == "result":
            self.summary.result = event

    def _message(self, data: dict[str, Any]) -> None:
        # A subagent's messages carry the tool call that started it: not the answer.
        subagent = data.get("parentToolCallId") is not None
        for request in data.get("toolRequests") or []:
            if isinstance(request, dict) and request.get("toolCallId"):
                self.call(
                    str(request["toolCallId"]),
                    str(request.get("name") or ""),
                    request.get("arguments"),
                )
        content = data.get("content")
        if not subagent and isinstance(content, str) and content.strip():
            self.final = content


def tool_name(call: _Call, plan: McpPlan | None = None) -> str:
    """The canonical name of a call (an MCP tool's by ``plan`` when given)."""
    if call.mcp is not None:
        return plan.canonical(*call.mcp) if plan is not None else mcp_name(*call.mcp)
    if plan is not None and (found := plan.split(call.name, ("-",))) is not None:
        return plan.canonical(*found)
    return canonical(AGENT, call.name)


def tool_call(call_id: str, call: _Call, plan: McpPlan | None = None) -> ToolCall:
    """One call, named canonically (the agent's own name kept when it differs)."""
    name = tool_name(call, plan)
    return ToolCall(
        name=name,
        input=call.input,
        output=call.output,
        is_error=call.is_error,
        id=call_id or None,
        original_name=call.name if call.name != name else None,
    )


def parse_events(
    lines: Iterable[str], plan: McpPlan | None = None
) -> tuple[Transcript, CopilotSummary]:
    """Fold the JSON lines into a transcript; lines that are not JSON objects are skipped.
    ``plan``: the run's MCP servers, which name its MCP tools canonically."""
    builder = _Builder()
    for event in load_events(lines):
        builder.feed(event)
    transcript = Transcript(
        tool_calls=[tool_call(call_id, call, plan) for call_id, call in builder.calls.items()],
        final_message=builder.final,
        turns=count(builder.turns) or 0,
    )
    usage = (builder.summary.result or {}).get("usage")
    if isinstance(usage, dict):
        transcript.latency_ms = amount(usage.get("sessionDurationMs"))
    return transcript, builder.summary


def parse_file(path: Path, plan: McpPlan | None = None) -> tuple[Transcript, CopilotSummary]:
    return read_trace(path, lambda lines: parse_events(lines, plan))
