"""The OpenAI Responses API side of the scripted model.

``POST /v1/responses`` is answered by the same rules as the Messages API. A request is
summarised the same way: ``prompt`` is the text of the latest ``user`` message of ``input`` (a
plain string ``input`` is the prompt), ``tools`` the offered tools' names (a built-in tool
without a name, ``{"type": "web_search"}``, by its type), ``tool_result`` the output of the
``function_call_output`` (or ``custom_tool_call_output``) items that end ``input``, ``system``
the ``instructions`` and the text of the ``developer`` and ``system`` messages. A reply's text
blocks become one assistant ``message`` output item, each ``tool_use`` block a
``function_call`` item (``arguments`` a JSON string, ``call_id`` the block's id). With
``stream: true`` the answer is server-sent events, as Codex CLI reads them:
``response.created``, ``response.in_progress``, then per item ``response.output_item.added``,
its deltas (``response.output_text.delta`` or ``response.function_call_arguments.delta``)
and ``response.output_item.done``, then ``response.completed`` with the usage. Errors use the
OpenAI shape ``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from .rules import _REMINDER, Reply, Request, TextBlock, ToolUseBlock

#: Paths served as the Responses API (base URLs end in ``/v1`` or not).
RESPONSES_PATHS = frozenset({"/v1/responses", "/responses"})

_OUTPUTS = ("function_call_output", "custom_tool_call_output")


def _text(content: Any) -> str:
    """The text of a message's ``content`` or a tool output: a string, or parts with ``text``."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(part.get("text", ""))
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def _is_message(item: dict[str, Any], *roles: str) -> bool:
    return item.get("type", "message") == "message" and item.get("role") in roles


def responses_request(body: dict[str, Any]) -> Request:
    """The rule-matching summary of a Responses API request body."""
    raw = body.get("input")
    if isinstance(raw, str):
        raw = [{"type": "message", "role": "user", "content": raw}]
    items = [i for i in (raw if isinstance(raw, list) else []) if isinstance(i, dict)]
    prompt = ""
    for item in reversed(items):
        if _is_message(item, "user"):
            prompt = _REMINDER.sub("", _text(item.get("content"))).strip()
            if prompt:
                break
    talk = [i for i in items if not _is_message(i, "system", "developer")]
    results: list[str] = []
    while talk and talk[-1].get("type") in _OUTPUTS:
        results.insert(0, _text(talk.pop().get("output")))
    names = []
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            name = tool.get("name") or tool.get("type")
            if isinstance(name, str) and name:
                names.append(name)
    system = [body["instructions"]] if isinstance(body.get("instructions"), str) else []
    system += [_text(i.get("content")) for i in items if _is_message(i, "system", "developer")]
    return Request(
        model=str(body.get("model") or ""),
        prompt=prompt,
        tools=tuple(names),
        tool_result="\n".join(results) if results else None,
        system="\n".join(system),
    )


class ResponsesAnswer:
    """Builds the response object (or its server-sent events) for one reply."""

    def __init__(
        self,
        reply: Reply,
        model: str,
        *,
        usage: tuple[int, int],
        next_id: Callable[[str], str],
        default_text: str,
    ) -> None:
        blocks: Sequence[TextBlock | ToolUseBlock] = reply.blocks or (TextBlock(default_text),)
        self.model = model
        self.usage_counts = usage
        self.id = next_id("resp")
        self.created = int(time.time())
        self.incomplete = reply.resolved_stop_reason == "max_tokens"
        texts = [b.text for b in blocks if isinstance(b, TextBlock)]
        self.items: list[dict[str, Any]] = []
        if texts:
            part = {"type": "output_text", "text": "".join(texts), "annotations": []}
            self.items.append(
                {
                    "type": "message",
                    "id": next_id("msg"),
                    "status": "completed",
                    "role": "assistant",
                    "content": [part],
                }
            )
        for block in blocks:
            if isinstance(block, ToolUseBlock):
                self.items.append(
                    {
                        "type": "function_call",
                        "id": next_id("fc"),
                        "status": "completed",
                        "call_id": block.id or next_id("call"),
                        "name": block.name,
                        "arguments": json.dumps(block.input, ensure_ascii=False),
                    }
                )

    def usage(self) -> dict[str, Any]:
        prompt, completion = self.usage_counts
        return {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": prompt + completion,
        }

    def response(self, *, done: bool = True) -> dict[str, Any]:
        """The response object: complete (``done``), or as ``response.created`` shows it."""
        status = ("incomplete" if self.incomplete else "completed") if done else "in_progress"
        details = {"reason": "max_output_tokens"} if done and self.incomplete else None
        return {
            "id": self.id,
            "object": "response",
            "created_at": self.created,
            "status": status,
            "error": None,
            "incomplete_details": details,
            "model": self.model,
            "output": self.items if done else [],
            "parallel_tool_calls": True,
            "usage": self.usage() if done else None,
        }

    def events(self, size: int) -> Iterator[dict[str, Any]]:
        """The stream's events, each with its ``type`` (and ``sequence_number`` added later)."""
        yield {"type": "response.created", "response": self.response(done=False)}
        yield {"type": "response.in_progress", "response": self.response(done=False)}
        for index, item in enumerate(self.items):
            where = {"item_id": item["id"], "output_index": index}
            if item["type"] == "message":
                text = item["content"][0]["text"]
                yield {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress", "content": []},
                }
                empty = {"type": "output_text", "text": "", "annotations": []}
                yield {"type": "response.content_part.added", **where, "content_index": 0,
                       "part": empty}  # fmt: skip
                for start in range(0, len(text), size):
                    piece = text[start : start + size]
                    yield {"type": "response.output_text.delta", **where, "content_index": 0,
                           "delta": piece}  # fmt: skip
                yield {"type": "response.output_text.done", **where, "content_index": 0,
                       "text": text}  # fmt: skip
                yield {"type": "response.content_part.done", **where, "content_index": 0,
                       "part": item["content"][0]}  # fmt: skip
            else:
                yield {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress", "arguments": ""},
                }
                arguments = item["arguments"]
                for start in range(0, len(arguments), size):
                    piece = arguments[start : start + size]
                    yield {"type": "response.function_call_arguments.delta", **where,
                           "delta": piece}  # fmt: skip
                yield {"type": "response.function_call_arguments.done", **where,
                       "arguments": arguments}  # fmt: skip
            yield {"type": "response.output_item.done", "output_index": index, "item": item}
        final = "response.incomplete" if self.incomplete else "response.completed"
        yield {"type": final, "response": self.response()}


def sse_events(events: Iterator[dict[str, Any]]) -> Iterator[str]:
    """``event: <type>`` / ``data: <event>`` pairs, numbered by ``sequence_number``."""
    for number, event in enumerate(events):
        doc = {**event, "sequence_number": number}
        yield f"event: {event['type']}\ndata: {json.dumps(doc, ensure_ascii=False)}\n\n"
