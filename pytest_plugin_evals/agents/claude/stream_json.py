"""Claude Code's ``--output-format stream-json`` trace → the common :class:`Transcript`.

Pure parsing, streamed line by line: the trace can be large. What the events look like is
written down in docs/explanation/claude-code.md.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_plugin_evals.agents.calls import CallLog, StreamEnds, read_trace
from pytest_plugin_evals.model import Transcript
from pytest_plugin_evals.util.jsonlines import amount, count, load_events, number
from pytest_plugin_evals.util.message_text import content_text


@dataclass
class StreamSummary(StreamEnds):
    """What the trace says beyond the transcript: the init event and how the run ended."""

    api_error_status: int | None = None
    api_error_text: str | None = None
    #: Claude Code's name for the API error (``authentication_failed``, ``rate_limit`` …).
    api_error_code: str | None = None
    permission_denials: list[dict[str, Any]] = field(default_factory=list)

    @property
    def plugins(self) -> list[dict[str, Any]]:
        return list((self.init or {}).get("plugins") or [])

    @property
    def skills(self) -> list[str]:
        return [str(s) for s in (self.init or {}).get("skills") or []]

    @property
    def slash_commands(self) -> list[str]:
        return [str(s) for s in (self.init or {}).get("slash_commands") or []]


def _result_text(content: Any) -> str:
    return content_text(content, other=lambda c: "" if c is None else json.dumps(c))


class _Builder:
    def __init__(self) -> None:
        self.log = CallLog()
        self.last_text_id: str | None = None
        self.last_text: list[str] = []
        #: Top-level messages seen: the blocks of one message arrive as consecutive events with
        #: the same id, so counting id changes needs no memory of every id.
        self.turns = 0
        self.last_turn_id: str | None = None
        #: Tokens the assistant events report, once per message (subagents too): the run's
        #: tokens when no result event came (a killed run).
        self.seen_tokens = [0, 0]
        self.last_usage_id: str | None = None
        self.summary = StreamSummary()

    def feed(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        if kind == "system":
            if event.get("subtype") == "init":
                self.summary.init = event
        elif kind == "assistant":
            self._assistant(event)
        elif kind == "user":
            self._user(event)
        elif kind == "result":
            self.summary.result = event

    def _assistant(self, event: dict[str, Any]) -> None:
        message = event.get("message") or {}
        if event.get("is_api_error_message") or message.get("model") == "<synthetic>":
            status = event.get("api_error_status")
            self.summary.api_error_status = status if isinstance(status, int) else None
            self.summary.api_error_text = _result_text(message.get("content"))
            code = event.get("error")
            self.summary.api_error_code = code if isinstance(code, str) else None
            return
        msg_id = str(message.get("id") or "")
        top_level = event.get("parent_tool_use_id") is None
        if top_level and msg_id and msg_id != self.last_turn_id:
            self.turns += 1
            self.last_turn_id = msg_id
        usage = message.get("usage")
        if msg_id and msg_id != self.last_usage_id and isinstance(usage, dict):
            self.last_usage_id = msg_id
            for index, key in enumerate(("input_tokens", "output_tokens")):
                self.seen_tokens[index] += count(usage.get(key)) or 0
        for block in message.get("content") or []:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                name = str(block.get("name", ""))
                self.log.made(name, name, block.get("input"), block.get("id"))
            elif block.get("type") == "text" and top_level:
                if msg_id != self.last_text_id:
                    self.last_text_id, self.last_text = msg_id, []
                self.last_text.append(str(block.get("text", "")))

    def _user(self, event: dict[str, Any]) -> None:
        content = (event.get("message") or {}).get("content")
        if not isinstance(content, list):
            return
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                output = _result_text(block.get("content"))
                self.log.answered(block.get("tool_use_id"), output, bool(block.get("is_error")))


def parse_events(lines: Iterable[str]) -> tuple[Transcript, StreamSummary]:
    """Fold stream-json lines into a transcript; unparseable lines are skipped."""
    builder = _Builder()
    for event in load_events(lines):
        builder.feed(event)
    summary = builder.summary
    transcript = Transcript(
        tool_calls=builder.log.calls,
    )
    result = summary.result or {}
    text = result.get("result")
    if isinstance(text, str) and not result.get("is_error"):
        transcript.final_message = text
    else:
        transcript.final_message = "\n".join(builder.last_text)
    turns = count(result.get("num_turns"))
    transcript.turns = builder.turns if turns is None else turns
    usage = result.get("usage")
    if isinstance(usage, dict):
        transcript.input_tokens = count(usage.get("input_tokens"))
        transcript.output_tokens = count(usage.get("output_tokens"))
    elif summary.result is None and builder.last_usage_id is not None:
        transcript.input_tokens, transcript.output_tokens = builder.seen_tokens
    cost = number(result.get("total_cost_usd"))
    if cost is not None:
        transcript.cost_usd = cost  # the runner refuses a cost that is not a price
    transcript.latency_ms = amount(result.get("duration_ms"))
    if result.get("terminal_reason") == "api_error" or result.get("api_error_status") is not None:
        status = result.get("api_error_status")
        summary.api_error_status = status if isinstance(status, int) else summary.api_error_status
        summary.api_error_text = str(result.get("result") or summary.api_error_text or "")
    summary.permission_denials = list(result.get("permission_denials") or [])
    return transcript, summary


def parse_file(path: Path) -> tuple[Transcript, StreamSummary]:
    return read_trace(path, parse_events)


def run_error(summary: StreamSummary) -> str | None:
    """The run error the result event reports (max turns, execution error), if any."""
    result = summary.result
    if result is None or not result.get("is_error"):
        return None
    errors = result.get("errors")
    if isinstance(errors, list) and errors:
        return str(errors[0])
    text = result.get("result")
    return str(text) if text else str(result.get("subtype") or "error")
