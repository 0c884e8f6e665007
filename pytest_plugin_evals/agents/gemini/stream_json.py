"""Gemini CLI's ``-o stream-json`` trace → the common :class:`Transcript`.

The events (one JSON object a line)::

    {"type": "init", "session_id": …, "model": "gemini-2.5-flash"}
    {"type": "message", "role": "user", "content": "<the prompt>"}
    {"type": "message", "role": "assistant", "content": "Run", "delta": true}
    {"type": "tool_use", "tool_name": "run_shell_command", "tool_id": …, "parameters": {…}}
    {"type": "tool_result", "tool_id": …, "status": "success" | "error", "output": "…",
     "error": {"type", "message"}}
    {"type": "error", "severity": …, "message": …}          (a warning; the run goes on)
    {"type": "result", "status": "success" | "error", "error": {"type", "message"},
     "stats": {"input_tokens", "output_tokens", "duration_ms", "tool_calls", …}}

An MCP tool is ``mcp_<server>_<tool>`` in Gemini CLI (its server as the run's settings name
it): it gets Claude Code's name back from the run's :class:`McpPlan`
(``mcp__plugin_<plugin>_<server>__<tool>`` for a plugin's server and its stand-in).

The final message is the assistant text after the last tool result; a model turn is counted
each time the assistant speaks or calls tools after the start or after tool results. Gemini CLI
reports no price: the cost stays unknown. Pure parsing, streamed line by line.
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
from pytest_plugin_evals.agents.canonical import canonical, mcp_name
from pytest_plugin_evals.agents.mcp import McpPlan
from pytest_plugin_evals.model import InfraKind, Transcript
from pytest_plugin_evals.util.jsonlines import amount, count, load_events


@dataclass
class StreamSummary(StreamEnds):
    warnings: list[str] = field(default_factory=list)

    @property
    def error_message(self) -> str | None:
        error = (self.result or {}).get("error")
        if isinstance(error, dict):
            return str(error.get("message") or error.get("type") or "error")
        return None

    def outside(self, stderr: str) -> InfraKind | None:
        """An API error (its message starts ``[API Error``): its status's kind."""
        message = self.error_message
        if message is None or not message.startswith("[API Error"):
            return None
        return infra_kind(api_status(message, stderr))

    @property
    def error_type(self) -> str | None:
        error = (self.result or {}).get("error")
        return str(error.get("type")) if isinstance(error, dict) and error.get("type") else None


def tool_name(name: str, mcp: McpPlan | None = None, own_servers: Iterable[str] = ()) -> str:
    """The canonical name of a Gemini CLI tool. ``mcp_<server>_<tool>``: Claude Code's name
    of that tool when ``mcp`` knows the server; ``mcp__<server>__<tool>`` for one of
    ``own_servers`` (a plugin's own extension manifest's); else kept as it is."""
    if name.startswith("mcp_"):
        if mcp is not None and (found := mcp.split(name, ("_",))) is not None:
            return mcp.canonical(*found)
        for server in sorted(own_servers, key=len, reverse=True):
            prefix = f"mcp_{server}_"
            if name.startswith(prefix) and len(name) > len(prefix):
                return mcp_name(server, name[len(prefix) :])
    return canonical("gemini", name)


class _Builder:
    def __init__(self, mcp: McpPlan | None, own_servers: Iterable[str]) -> None:
        self.mcp = mcp
        self.servers = tuple(own_servers)
        self.log = CallLog()
        self.text: list[str] = []
        self.turns = 0
        #: The assistant may start a new turn: at the start, and after tool results.
        self.turn_open = True
        self.summary = StreamSummary()

    def _speaks(self) -> None:
        if self.turn_open:
            self.turns += 1
            self.turn_open = False
            self.text = []

    def feed(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "init":
            self.summary.init = event
        elif kind == "message" and event.get("role") == "assistant":
            self._speaks()
            content = event.get("content")
            if isinstance(content, str):
                self.text.append(content)
        elif kind == "tool_use":
            self._speaks()
            original = str(event.get("tool_name") or "")
            name = tool_name(original, self.mcp, self.servers)
            self.log.made(original, name, event.get("parameters"), event.get("tool_id"))
        elif kind == "tool_result":
            self.turn_open = True
            output = event.get("output")
            if output is None and isinstance(event.get("error"), dict):
                output = event["error"].get("message")
            text = output if isinstance(output, str) or output is None else json.dumps(output)
            self.log.answered(event.get("tool_id"), text, event.get("status") != "success")
        elif kind == "error":
            message = event.get("message")
            if isinstance(message, str) and message:
                self.summary.warnings.append(message)
        elif kind == "result":
            self.summary.result = event


def parse_events(
    lines: Iterable[str], mcp: McpPlan | None = None, own_servers: Iterable[str] = ()
) -> tuple[Transcript, StreamSummary]:
    """Fold stream-json lines into a transcript; unparseable lines are skipped. ``mcp``: the
    run's MCP servers, ``own_servers``: those of the extension itself (see :func:`tool_name`)."""
    builder = _Builder(mcp, own_servers)
    for event in load_events(lines):
        builder.feed(event)
    summary = builder.summary
    transcript = Transcript(
        tool_calls=builder.log.calls,
        final_message="" if builder.turn_open and builder.log.calls else "".join(builder.text),
        turns=builder.turns,
    )
    stats = (summary.result or {}).get("stats")
    if isinstance(stats, dict):
        transcript.input_tokens = count(stats.get("input_tokens"))
        transcript.output_tokens = count(stats.get("output_tokens"))
        latency = amount(stats.get("duration_ms"))
        transcript.latency_ms = latency or None
    return transcript, summary


def parse_file(
    path: Path, mcp: McpPlan | None = None, own_servers: Iterable[str] = ()
) -> tuple[Transcript, StreamSummary]:
    return read_trace(path, lambda lines: parse_events(lines, mcp, own_servers))


_CODE = re.compile(r'"code"\s*:\s*(\d{3})')
_STATUS_LINE = re.compile(r"^\s*status:\s*(\d{3})\s*,?\s*$", re.MULTILINE)


def api_status(message: str | None, stderr: str) -> int | None:
    """The HTTP status of an API error, from the result's message (Google's error JSON) or
    the error Gemini CLI prints on stderr."""
    for pattern, text in ((_CODE, message or ""), (_STATUS_LINE, stderr)):
        found = pattern.findall(text)
        if found:
            return int(found[-1])
    if message and ("try again later" in message or "quota" in message.lower()):
        return 429
    return None
