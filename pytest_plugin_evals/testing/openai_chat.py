"""The OpenAI chat completions side of the scripted model.

``POST /v1/chat/completions`` is answered by the same rules as the Messages API. A request is
summarised the same way: ``prompt`` is the text of the latest user message, ``tools`` the
offered function names, ``tool_result`` the content of the ``role: tool`` messages that end
the conversation, ``system`` the text of the ``system`` and ``developer`` messages. A reply's
text blocks become the message ``content`` (joined), its ``tool_use`` blocks ``tool_calls``.
With ``stream: true`` the answer is server-sent ``chat.completion.chunk`` events ending in
``data: [DONE]``; ``stream_options.include_usage`` adds the usage chunk. Errors use the
OpenAI shape ``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from pytest_plugin_evals.util.message_text import content_text

from .rules import _REMINDER, ApiError, Reply, Request, TextBlock, ToolUseBlock

#: Paths served as chat completions (base URLs end in ``/v1`` or not).
CHAT_PATHS = frozenset({"/v1/chat/completions", "/chat/completions"})

_FINISH = {"end_turn": "stop", "tool_use": "tool_calls", "max_tokens": "length"}


def openai_request(body: dict[str, Any]) -> Request:
    """The rule-matching summary of a chat completions request body."""
    raw = body.get("messages")
    messages = [m for m in (raw if isinstance(raw, list) else []) if isinstance(m, dict)]
    prompt = ""
    for message in reversed(messages):
        if message.get("role") == "user":
            prompt = _REMINDER.sub("", content_text(message.get("content"))).strip()
            if prompt:
                break
    talk = [m for m in messages if m.get("role") not in ("system", "developer")]
    results: list[str] = []
    while talk and talk[-1].get("role") == "tool":
        results.insert(0, content_text(talk.pop().get("content")))
    names = []
    for tool in body.get("tools") or []:
        function = tool.get("function") if isinstance(tool, dict) else None
        if isinstance(function, dict) and "name" in function:
            names.append(str(function["name"]))
    system = [
        content_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer")
    ]
    return Request(
        model=str(body.get("model") or ""),
        prompt=prompt,
        tools=tuple(names),
        tool_result="\n".join(results) if results else None,
        system="\n".join(system),
    )


def error_doc(err: ApiError) -> dict[str, Any]:
    return {"error": {"message": err.message, "type": err.type, "param": None, "code": None}}


class ChatAnswer:
    """Builds the completion (or its chunks) for one reply."""

    def __init__(
        self,
        reply: Reply,
        model: str,
        *,
        usage: tuple[int, int],
        cost: float | None,
        next_id: Callable[[str], str],
        default_text: str,
    ) -> None:
        self.blocks: Sequence[TextBlock | ToolUseBlock] = reply.blocks or (TextBlock(default_text),)
        self.finish = _FINISH.get(reply.resolved_stop_reason, "stop")
        self.model = model
        self.usage_counts = usage
        self.cost = cost
        self.next_id = next_id
        self.id = next_id("chatcmpl")
        self.created = int(time.time())
        self.calls: list[dict[str, Any]] = [
            {
                "id": b.id or next_id("call"),
                "type": "function",
                "function": {"name": b.name, "arguments": json.dumps(b.input, ensure_ascii=False)},
            }
            for b in self.blocks
            if isinstance(b, ToolUseBlock)
        ]

    @property
    def text(self) -> str | None:
        texts = [b.text for b in self.blocks if isinstance(b, TextBlock)]
        return "".join(texts) if texts else None

    def usage(self) -> dict[str, Any]:
        prompt, completion = self.usage_counts
        doc: dict[str, Any] = {
            "prompt_tokens": prompt,
            "completion_tokens": completion,
            "total_tokens": prompt + completion,
        }
        if self.cost is not None:
            doc["cost"] = self.cost
        return doc

    def _head(self, kind: str) -> dict[str, Any]:
        return {"id": self.id, "object": kind, "created": self.created, "model": self.model}

    def completion(self) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": self.text}
        if self.calls:
            message["tool_calls"] = self.calls
        choice = {"index": 0, "message": message, "finish_reason": self.finish, "logprobs": None}
        return {**self._head("chat.completion"), "choices": [choice], "usage": self.usage()}

    def chunks(self, include_usage: bool, size: int) -> Iterator[dict[str, Any]]:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
            return {**self._head("chat.completion.chunk"), "choices": [choice]}

        yield chunk({"role": "assistant", "content": ""})
        text = self.text or ""
        for start in range(0, len(text), size):
            yield chunk({"content": text[start : start + size]})
        for index, call in enumerate(self.calls):
            opening = {**call, "function": {"name": call["function"]["name"], "arguments": ""}}
            yield chunk({"tool_calls": [{"index": index, **opening}]})
            arguments = call["function"]["arguments"]
            for start in range(0, len(arguments), size):
                piece = {"arguments": arguments[start : start + size]}
                yield chunk({"tool_calls": [{"index": index, "function": piece}]})
        yield chunk({}, self.finish)
        if include_usage:
            yield {**self._head("chat.completion.chunk"), "choices": [], "usage": self.usage()}


def sse_chunks(chunks: Iterator[dict[str, Any]]) -> Iterator[str]:
    """``data: <chunk>`` events, then ``data: [DONE]``."""
    for doc in chunks:
        yield f"data: {json.dumps(doc, ensure_ascii=False)}\n\n"
    yield "data: [DONE]\n\n"
