"""opencode's ``run --format json`` stream → the common :class:`Transcript`.

Pure parsing, line by line. Each line is one event ``{"type", "timestamp", "sessionID",
"part" | "error"}``:

- ``step_start``: one model request begins (a turn);
- ``text``: ``part.text``, a text part of the assistant message ``part.messageID``;
- ``tool_use``: ``part.tool`` (opencode's tool name), ``part.callID`` and ``part.state``
  (``status`` ``completed`` with ``output``, or ``error`` with ``error``; ``input``);
- ``step_finish``: ``part.tokens`` (``input``, ``output``, ``reasoning``, ``cache``) and
  ``part.cost`` (US dollars, from the model's price in opencode's catalog; 0 for a model it
  has no price for);
- ``error``: the session failed (``error.name``, ``error.data.message``,
  ``error.data.statusCode`` and ``responseHeaders`` for an API error, after opencode's own
  retries of a retryable one).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_plugin_evals.agents.calls import read_trace
from pytest_plugin_evals.agents.canonical import canonical
from pytest_plugin_evals.model import ToolCall, Transcript
from pytest_plugin_evals.util.jsonlines import amount, count, load_events, number


@dataclass
class StreamSummary:
    """What the stream says beyond the transcript."""

    #: Events read (any type): none means opencode never got to the session.
    events: int = 0
    steps: int = 0
    #: The dollars the ``step_finish`` events report, added up.
    cost: float = 0.0
    #: Tokens reported at all (a step that finished).
    priced_tokens: int = 0
    error_name: str | None = None
    error_message: str | None = None
    error_status: int | None = None
    #: The ``retry-after`` header of the refused request (seconds), when it had one.
    retry_after: float | None = None
    skills_called: list[str] = field(default_factory=list)


def _output(state: dict[str, Any]) -> str | None:
    value = state.get("output") if state.get("status") == "completed" else state.get("error")
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value)


class _Builder:
    def __init__(
        self, qualify_skill: dict[str, str], mcp_name: Callable[[str], str | None] | None
    ) -> None:
        self.calls: list[ToolCall] = []
        self.by_id: dict[str, int] = {}
        self.texts: dict[str, list[str]] = {}
        self.last_text_message: str | None = None
        self.tokens = [0, 0]
        self.any_tokens = False
        self.summary = StreamSummary()
        self.qualify_skill = qualify_skill
        self.mcp_name = mcp_name

    def feed(self, event: dict[str, Any]) -> None:
        self.summary.events += 1
        kind = event.get("type")
        part = event.get("part")
        part = part if isinstance(part, dict) else {}
        if kind == "step_start":
            self.summary.steps += 1
        elif kind == "text":
            message = str(part.get("messageID") or "")
            if message != self.last_text_message:
                self.last_text_message = message
                self.texts[message] = []
            self.texts[message].append(str(part.get("text") or ""))
        elif kind == "tool_use":
            self._tool(part)
        elif kind == "step_finish":
            self._finish(part)
        elif kind == "error":
            self._error(event.get("error"))

    def _tool(self, part: dict[str, Any]) -> None:
        state = part.get("state")
        state = state if isinstance(state, dict) else {}
        tool = str(part.get("tool") or "")
        tool_input = state.get("input")
        tool_input = dict(tool_input) if isinstance(tool_input, dict) else {}
        name = canonical("opencode", tool)
        if name == tool and self.mcp_name is not None:
            name = self.mcp_name(tool) or tool
        if name == "Skill" and isinstance(tool_input.get("name"), str):
            skill = tool_input["name"]
            self.summary.skills_called.append(skill)
            # Claude Code's form: ``{"skill": "<plugin>:<skill>"}`` for a skill of the plugin.
            tool_input.setdefault("skill", self.qualify_skill.get(skill, skill))
        call = ToolCall(
            name=name,
            input=tool_input,
            output=_output(state),
            is_error=state.get("status") == "error",
            id=str(part.get("callID") or part.get("id") or "") or None,
            original_name=tool if tool != name else None,
        )
        key = call.id or f"#{len(self.calls)}"
        if key in self.by_id:  # a later state of the same call
            self.calls[self.by_id[key]] = call
        else:
            self.by_id[key] = len(self.calls)
            self.calls.append(call)

    def _finish(self, part: dict[str, Any]) -> None:
        tokens = part.get("tokens")
        if isinstance(tokens, dict):
            self.any_tokens = True
            self.tokens[0] += count(tokens.get("input")) or 0
            self.tokens[1] += (count(tokens.get("output")) or 0) + (
                count(tokens.get("reasoning")) or 0
            )
        cost = number(part.get("cost"))
        if cost is not None and cost > 0:
            self.summary.cost += cost

    def _error(self, error: Any) -> None:
        if not isinstance(error, dict):
            self.summary.error_name = "error"
            self.summary.error_message = str(error or "")
            return
        data = error.get("data")
        data = data if isinstance(data, dict) else {}
        self.summary.error_name = str(error.get("name") or "error")
        message = data.get("message") or error.get("message") or self.summary.error_name
        self.summary.error_message = str(message)
        status = count(data.get("statusCode"))
        self.summary.error_status = status if status is not None and status >= 100 else None
        headers = data.get("responseHeaders")
        if isinstance(headers, dict):
            self.summary.retry_after = _seconds(headers.get("retry-after"))


def _seconds(value: Any) -> float | None:
    """A ``retry-after`` header's seconds (headers are strings), None when it is no number."""
    if isinstance(value, str):
        try:
            value = float(value.strip())
        except ValueError:
            return None
    return amount(value)


def parse_events(
    lines: Iterable[str],
    *,
    qualify_skill: dict[str, str] | None = None,
    mcp_name: Callable[[str], str | None] | None = None,
) -> tuple[Transcript, StreamSummary]:
    """Fold the JSON lines into a transcript; unparseable lines are skipped. ``qualify_skill``
    maps a plugin skill's name to ``<plugin>:<skill>``, the name Claude Code gives it;
    ``mcp_name`` gives Claude Code's name of an MCP tool (opencode's ``<server>_<tool>``),
    None for a name that is none."""
    builder = _Builder(qualify_skill or {}, mcp_name)
    for event in load_events(lines):
        builder.feed(event)
    summary = builder.summary
    transcript = Transcript(tool_calls=builder.calls, turns=summary.steps)
    if builder.last_text_message is not None:
        transcript.final_message = "".join(builder.texts[builder.last_text_message]).strip()
    if builder.any_tokens:
        transcript.input_tokens, transcript.output_tokens = builder.tokens
        summary.priced_tokens = sum(builder.tokens)
    transcript.cost_usd = round(summary.cost, 6)
    return transcript, summary


def parse_file(
    path: Path,
    *,
    qualify_skill: dict[str, str] | None = None,
    mcp_name: Callable[[str], str | None] | None = None,
) -> tuple[Transcript, StreamSummary]:
    return read_trace(
        path, lambda lines: parse_events(lines, qualify_skill=qualify_skill, mcp_name=mcp_name)
    )
