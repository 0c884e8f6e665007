"""The Gemini API side of the scripted model (what Gemini CLI speaks).

``POST /v1beta/models/<model>:streamGenerateContent`` (server-sent events, ``?alt=sse``) and
``POST /v1beta/models/<model>:generateContent`` (one JSON response) are answered by the same
rules as the Messages API; ``POST …:countTokens`` gets an estimate. A request is summarised
the same way: ``model`` is the ``<model>`` of the path, ``prompt`` the text of the latest
``role: user`` content that carries no ``functionResponse`` (without the
``<session_context>`` block Gemini CLI sends before the first prompt), ``tools`` the offered
``functionDeclarations`` names, ``tool_result`` the ``functionResponse`` parts of the last
content (each response's ``output``, else its ``error``, else the response as JSON), ``system``
the text of ``systemInstruction`` and of the ``<session_context>`` block (where Gemini CLI puts
the extensions' context files). A reply's text blocks become ``text`` parts, its
``tool_use`` blocks ``functionCall`` parts (``{"name", "args"}``, and ``id`` when the block
has one). Every answer carries ``usageMetadata``. Errors use Google's shape
``{"error": {"code", "message", "status"}}``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from typing import Any

from .rules import _REMINDER, ApiError, Reply, Request, TextBlock, ToolUseBlock

#: The environment block Gemini CLI puts before the first prompt: not part of the prompt.
_SESSION_CONTEXT = re.compile(r"<session_context>.*?</session_context>", re.DOTALL)

#: ``/v1beta/models/<model>:<method>`` (also ``/v1/…``); the model may hold ``/``-free text.
GEMINI_PATH = re.compile(
    r"^/(?:v1|v1beta|v1alpha)/models/(?P<model>[^/:]+):"
    r"(?P<method>streamGenerateContent|generateContent|countTokens)$"
)

#: Google's status name for an HTTP status.
STATUS_NAMES: dict[int, str] = {
    400: "INVALID_ARGUMENT",
    401: "UNAUTHENTICATED",
    403: "PERMISSION_DENIED",
    404: "NOT_FOUND",
    409: "ABORTED",
    413: "INVALID_ARGUMENT",
    429: "RESOURCE_EXHAUSTED",
    500: "INTERNAL",
    503: "UNAVAILABLE",
    504: "DEADLINE_EXCEEDED",
    529: "UNAVAILABLE",
}

_FINISH = {"end_turn": "STOP", "tool_use": "STOP", "max_tokens": "MAX_TOKENS"}


def is_gemini_path(path: str) -> bool:
    return GEMINI_PATH.match(path) is not None


def gemini_method(path: str) -> str:
    """``streamGenerateContent``, ``generateContent`` or ``countTokens`` ("" for other paths)."""
    match = GEMINI_PATH.match(path)
    return match.group("method") if match else ""


def _parts(content: Any) -> list[dict[str, Any]]:
    if not isinstance(content, dict):
        return []
    parts = content.get("parts")
    return [p for p in parts if isinstance(p, dict)] if isinstance(parts, list) else []


def _texts(parts: Sequence[dict[str, Any]]) -> str:
    return "\n".join(
        str(p["text"]) for p in parts if isinstance(p.get("text"), str) and not p.get("thought")
    )


def _response_text(part: dict[str, Any]) -> str:
    response = (part.get("functionResponse") or {}).get("response")
    if isinstance(response, dict):
        for key in ("output", "error"):
            value = response.get(key)
            if isinstance(value, str):
                return value
        return json.dumps(response, ensure_ascii=False)
    return "" if response is None else json.dumps(response, ensure_ascii=False)


def gemini_request(body: dict[str, Any], path: str) -> Request:
    """The rule-matching summary of a Gemini ``generateContent`` request body."""
    match = GEMINI_PATH.match(path)
    raw = body.get("contents")
    contents = [c for c in (raw if isinstance(raw, list) else []) if isinstance(c, dict)]
    prompt = ""
    context = [
        block
        for content in contents
        if content.get("role", "user") == "user"
        for block in _SESSION_CONTEXT.findall(_texts(_parts(content)))
    ]
    for content in reversed(contents):
        parts = _parts(content)
        if content.get("role", "user") != "user":
            continue
        if any("functionResponse" in p for p in parts):
            continue
        prompt = _REMINDER.sub("", _SESSION_CONTEXT.sub("", _texts(parts))).strip()
        if prompt:
            break
    tool_result: str | None = None
    is_error = False
    if contents and contents[-1].get("role", "user") == "user":
        responses = [p for p in _parts(contents[-1]) if isinstance(p.get("functionResponse"), dict)]
        if responses:
            tool_result = "\n".join(_response_text(p) for p in responses)
            is_error = any(
                isinstance(p["functionResponse"].get("response"), dict)
                and "error" in p["functionResponse"]["response"]
                for p in responses
            )
    names: list[str] = []
    for tool in body.get("tools") or []:
        declarations = tool.get("functionDeclarations") if isinstance(tool, dict) else None
        for declaration in declarations or []:
            if isinstance(declaration, dict) and "name" in declaration:
                names.append(str(declaration["name"]))
    system = body.get("systemInstruction")
    system_text = system if isinstance(system, str) else _texts(_parts(system))
    system_text = "\n".join(t for t in (system_text, *context) if t)
    return Request(
        model=match.group("model") if match else str(body.get("model") or ""),
        prompt=prompt,
        tools=tuple(names),
        tool_result=tool_result,
        tool_result_error=is_error,
        system=system_text,
    )


def count_tokens(body: dict[str, Any]) -> dict[str, Any]:
    """``countTokens``: about four characters per token."""
    size = len(json.dumps(body.get("contents") or body, ensure_ascii=False, default=str))
    return {"totalTokens": max(1, size // 4)}


def error_doc(err: ApiError) -> dict[str, Any]:
    status = STATUS_NAMES.get(err.status, "UNKNOWN")
    return {"error": {"code": err.status, "message": err.message, "status": status}}


class GeminiAnswer:
    """Builds the ``GenerateContentResponse`` (or its stream chunks) for one reply."""

    def __init__(
        self, reply: Reply, model: str, *, usage: tuple[int, int], default_text: str
    ) -> None:
        self.blocks: Sequence[TextBlock | ToolUseBlock] = reply.blocks or (TextBlock(default_text),)
        self.finish = _FINISH.get(reply.resolved_stop_reason, "STOP")
        self.model = model
        self.usage_counts = usage

    def usage(self) -> dict[str, Any]:
        prompt, output = self.usage_counts
        return {
            "promptTokenCount": prompt,
            "candidatesTokenCount": output,
            "totalTokenCount": prompt + output,
        }

    @staticmethod
    def _call(block: ToolUseBlock) -> dict[str, Any]:
        call: dict[str, Any] = {"name": block.name, "args": block.input}
        if block.id:
            call["id"] = block.id
        return {"functionCall": call}

    def _doc(self, parts: list[dict[str, Any]], finish: str | None) -> dict[str, Any]:
        candidate: dict[str, Any] = {"content": {"role": "model", "parts": parts}, "index": 0}
        doc: dict[str, Any] = {"candidates": [candidate], "modelVersion": self.model}
        if finish is not None:
            candidate["finishReason"] = finish
            doc["usageMetadata"] = self.usage()
        return doc

    def response(self) -> dict[str, Any]:
        parts = [
            {"text": b.text} if isinstance(b, TextBlock) else self._call(b) for b in self.blocks
        ]
        return self._doc(parts, self.finish)

    def chunks(self, size: int) -> Iterator[dict[str, Any]]:
        """Text in pieces of at most ``size`` characters; each call whole (as the API sends
        them); the last chunk carries the finish reason and the usage."""
        pending: list[dict[str, Any]] = []
        for block in self.blocks:
            if isinstance(block, TextBlock):
                pieces = [block.text[i : i + size] for i in range(0, len(block.text), size)]
                for piece in pieces or [""]:
                    if pending:
                        yield self._doc(pending, None)
                    pending = [{"text": piece}]
            else:
                if pending:
                    yield self._doc(pending, None)
                pending = [self._call(block)]
        yield self._doc(pending, self.finish)


def sse_events(docs: Iterator[dict[str, Any]]) -> Iterator[str]:
    """``data: <response>`` events (no end marker: the stream just ends)."""
    for doc in docs:
        yield f"data: {json.dumps(doc, ensure_ascii=False)}\n\n"
