"""Reading ``codex exec --json``: its JSON lines into the common transcript.

The stream (Codex CLI 0.169): ``thread.started``, ``turn.started``, ``item.started`` /
``item.updated`` / ``item.completed`` with an ``item`` of a ``type`` (``agent_message``,
``reasoning``, ``command_execution``, ``file_change``, ``mcp_tool_call``, ``web_search``,
``todo_list``, ``error``), then ``turn.completed`` with the turn's ``usage`` or ``turn.failed``
with its ``error``; a fatal problem is also a top-level ``error`` event. Codex reports tokens
and no price. Only completed items are read: a started item is seen again when it completes.

A shell command that reads a plugin skill's ``SKILL.md`` (Codex lists each skill with its file
and the model reads it through the shell) is Codex's way of using a skill: it is recorded as a
``Skill`` call, ``{"skill": "<plugin>:<skill>"}``, with the command kept in its input.

In code mode (Codex's default model) the model calls its tools from JavaScript sent to one
``exec`` tool. The stream has no item for the script, and one for each tool it calls, the same
items as for direct calls: they are read as above. One script may call several tools, so
``turns`` (one per tool call) can count more answers than the model gave.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_plugin_evals.agents.canonical import canonical, mcp_name
from pytest_plugin_evals.model import ToolCall, Transcript
from pytest_plugin_evals.util.jsonlines import count, load_events

AGENT = "codex"

#: A plugin skill's file as the model reads it: from the plugin cache (``…/plugins/cache/
#: <marketplace>/<plugin>/<version>/skills/<skill>/SKILL.md``) or through the short root Codex
#: lists it under (``r1/<plugin>/<version>/skills/<skill>/SKILL.md``).
_SKILL_FILE = re.compile(
    r"(?:^|[/\s'\"])([A-Za-z0-9_.-]+)/[^/\s'\"]+/skills/([^/\s'\"]+)/SKILL\.md"
)

#: ``unexpected status 401 Unauthorized: …``, ``exceeded retry limit, last status: 429 …``.
_STATUS = re.compile(r"status:?\s+(\d{3})\b")


@dataclass
class StreamSummary:
    """What the stream said besides the transcript."""

    thread_started: bool = False
    turn_completed: bool = False
    #: The message of a fatal ``error`` event or of ``turn.failed``.
    failure: str | None = None
    #: The HTTP status that message names, if any.
    status: int | None = None
    #: Warnings Codex reported as ``error`` items (the run went on).
    warnings: list[str] = field(default_factory=list)


def skill_read(command: str, plugin: str | None) -> str | None:
    """``<plugin>:<skill>`` when ``command`` reads a skill file of ``plugin``, else None."""
    if plugin is None:
        return None
    for match in _SKILL_FILE.finditer(command):
        if match.group(1) == plugin:
            return f"{plugin}:{match.group(2)}"
    return None


#: Claude Code's name of a server's tool, from the names Codex reports (``server``, ``tool``).
McpNaming = Callable[[str, str], str]


def _call(
    item: dict[str, Any], plugin: str | None, naming: McpNaming | None = None
) -> ToolCall | None:
    kind = item.get("type")
    item_id = item.get("id") if isinstance(item.get("id"), str) else None
    failed = item.get("status") == "failed"
    if kind == "command_execution":
        command = str(item.get("command") or "")
        output = item.get("aggregated_output")
        exit_code = count(item.get("exit_code"))
        is_error = failed or (exit_code is not None and exit_code != 0)
        text = output if isinstance(output, str) else None
        skill = skill_read(command, plugin)
        if skill is not None:
            return ToolCall(
                name="Skill",
                input={"skill": skill, "command": command},
                output=text,
                is_error=is_error,
                id=item_id,
                original_name="exec_command",
            )
        return ToolCall(
            name=canonical(AGENT, "exec_command"),
            input={"command": command},
            output=text,
            is_error=is_error,
            id=item_id,
            original_name="exec_command",
        )
    if kind == "file_change":
        changes = [c for c in item.get("changes") or [] if isinstance(c, dict)]
        adds = changes and all(c.get("kind") == "add" for c in changes)
        return ToolCall(
            name="Write" if adds else canonical(AGENT, "apply_patch"),
            input={"changes": changes},
            is_error=failed,
            id=item_id,
            original_name="apply_patch",
        )
    if kind == "mcp_tool_call":
        server, tool = str(item.get("server") or ""), str(item.get("tool") or "")
        arguments = item.get("arguments")
        result, err = item.get("result"), item.get("error")
        output = None
        if isinstance(err, dict) and err.get("message"):
            output = str(err["message"])
        elif isinstance(result, dict):
            parts = [p for p in result.get("content") or [] if isinstance(p, dict)]
            output = "\n".join(str(p.get("text", "")) for p in parts) or None
        return ToolCall(
            name=naming(server, tool) if naming is not None else mcp_name(server, tool),
            input=arguments if isinstance(arguments, dict) else {},
            output=output,
            is_error=failed or err is not None,
            id=item_id,
            original_name=mcp_name(server, tool),
        )
    if kind == "web_search":
        return ToolCall(
            name=canonical(AGENT, "web_search"),
            input={"query": str(item.get("query") or "")},
            id=item_id,
            original_name="web_search",
        )
    if kind == "todo_list":
        todos = [t for t in item.get("items") or [] if isinstance(t, dict)]
        return ToolCall(
            name=canonical(AGENT, "update_plan"),
            input={"items": todos},
            id=item_id,
            original_name="update_plan",
        )
    return None


def _failure(summary: StreamSummary, message: Any) -> None:
    text = str(message or "").strip() or "codex reported an error"
    summary.failure = text
    found = _STATUS.search(text)
    summary.status = int(found.group(1)) if found else None


def parse_file(
    path: Path, *, plugin: str | None = None, mcp: McpNaming | None = None
) -> tuple[Transcript, StreamSummary]:
    """The transcript and summary of a ``codex exec --json`` trace; ``plugin`` is the name
    of the plugin loaded (None in the without arm): reading its skill files is a Skill call;
    ``mcp`` names an MCP tool call (default ``mcp__<server>__<tool>``; Codex's own name is
    kept as its ``original_name``)."""
    transcript = Transcript(trace_path=path)
    summary = StreamSummary()
    if not path.exists():
        return transcript, summary
    messages: list[str] = []
    with path.open(encoding="utf-8", errors="replace") as fh:
        for event in load_events(fh):
            kind = event.get("type")
            if kind == "thread.started":
                summary.thread_started = True
            elif kind == "item.completed" and isinstance(event.get("item"), dict):
                item = event["item"]
                if item.get("type") == "agent_message" and isinstance(item.get("text"), str):
                    messages.append(item["text"])
                elif item.get("type") == "error":
                    summary.warnings.append(str(item.get("message") or "").strip())
                else:
                    call = _call(item, plugin, mcp)
                    if call is not None:
                        transcript.tool_calls.append(call)
            elif kind == "turn.completed":
                summary.turn_completed = True
                usage = event.get("usage")
                if isinstance(usage, dict):
                    for key in ("input_tokens", "output_tokens"):
                        value = count(usage.get(key))
                        if value is not None:
                            setattr(transcript, key, (getattr(transcript, key) or 0) + value)
            elif kind == "turn.failed":
                error = event.get("error")
                _failure(summary, error.get("message") if isinstance(error, dict) else error)
            elif kind == "error":
                _failure(summary, event.get("message"))
    transcript.final_message = messages[-1] if messages else ""
    # One model turn per answer: each tool call was answered, and the last message ends it.
    transcript.turns = len(transcript.tool_calls) + (1 if messages else 0)
    return transcript, summary
