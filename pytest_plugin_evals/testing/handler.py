"""The HTTP side of the scripted model: parse, log, match, answer (Anthropic, OpenAI, Gemini)."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from . import gemini
from .openai_chat import CHAT_PATHS, ChatAnswer, error_doc, openai_request, sse_chunks
from .openai_responses import (
    RESPONSES_PATHS,
    ResponsesAnswer,
    offered_tools,
    responses_request,
    sse_events,
)
from .rules import ApiError, Reply, Request

if TYPE_CHECKING:
    from .server import ScriptedModel

#: Text and tool input are streamed in deltas of at most this many characters.
DELTA_SIZE = 16

_Answer = TypeVar("_Answer", ChatAnswer, ResponsesAnswer)

_SECRET_HEADERS = frozenset({"x-api-key", "authorization", "x-goog-api-key"})


def count_tokens(body: dict[str, Any]) -> int:
    """A deterministic estimate for ``count_tokens``: about four characters per token."""
    parts = [body.get(key) for key in ("system", "messages", "tools")]
    size = len(json.dumps(parts, ensure_ascii=False, default=str))
    return max(1, size // 4)


class Handler(BaseHTTPRequestHandler):
    """One HTTP request to the scripted model: logged, matched against the rules, answered."""

    protocol_version = "HTTP/1.1"
    server_version = "scripted-model/1"
    entry: dict[str, Any]
    request_id: str

    @property
    def model(self) -> ScriptedModel:
        model: ScriptedModel = getattr(self.server, "model")  # noqa: B009 - set by ScriptedModel
        return model

    def log_message(self, format: str, *args: Any) -> None:
        """Silence the default per-request stderr line."""

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_HEAD(self) -> None:
        self._handle()

    def _handle(self) -> None:
        url = urlsplit(self.path)
        path = re.sub(r"/{2,}", "/", url.path).rstrip("/") or "/"
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = None
        parse = openai_request if path in CHAT_PATHS else Request.from_body
        if path in RESPONSES_PATHS:
            parse = responses_request
        if gemini.is_gemini_path(path):
            summary = gemini.gemini_request(body if isinstance(body, dict) else {}, path)
        else:
            summary = parse(body if isinstance(body, dict) else {})
        self.entry = {
            "method": self.command,
            "path": path,
            "query": url.query,
            "headers": {
                k.lower(): ("<redacted>" if k.lower() in _SECRET_HEADERS else v)
                for k, v in self.headers.items()
            },
            "body": body,
            "model": summary.model,
            "stream": bool(isinstance(body, dict) and body.get("stream")),
            "prompt": summary.prompt,
            "tools": list(summary.tools),
            "nested_tools": list(summary.nested_tools),
            "tool_result": summary.tool_result,
            "system": summary.system,
            "rule": None,
            "status": None,
            "time": time.time(),
        }
        self.model._record(self.entry)
        self.request_id = self.model._next_id("req")
        try:
            self._dispatch(path, body, summary)
        except (BrokenPipeError, ConnectionResetError):
            self.entry["disconnected"] = True

    def _dispatch(self, path: str, body: Any, summary: Request) -> None:
        model, method = self.model, self.command
        if method == "POST" and path == "/v1/messages":
            chosen = self._chosen(body, summary)
            if chosen is None:
                return None
            if self.entry["stream"]:
                events = model.events(chosen, summary.model)
                return self._stream(
                    f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
                    for name, data in events
                )
            return self._json(200, model.message(chosen, summary.model))
        if method == "POST" and path in CHAT_PATHS:
            return self._chat(body, summary)
        if method == "POST" and gemini.is_gemini_path(path):
            return self._gemini(path, body, summary)
        if method == "POST" and path in RESPONSES_PATHS:
            return self._responses(body, summary)
        if method == "POST" and path == "/v1/messages/count_tokens":
            return self._json(
                200, {"input_tokens": count_tokens(body if isinstance(body, dict) else {})}
            )
        if method in ("GET", "HEAD") and path == "/v1/models":
            return self._json(200, _models())
        if method == "HEAD" and path == "/":
            return self._json(200, {})
        return self._error(ApiError(404, "not_found_error", f"{method} {path} is not served here"))

    def _chat(self, body: Any, summary: Request) -> None:
        answer = self._answer(body, summary, ChatAnswer, cost=self.model.openai_cost)
        if answer is None:
            return None
        if not self.entry["stream"]:
            return self._json(200, answer.completion())
        options = body.get("stream_options")
        include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
        self._stream(sse_chunks(answer.chunks(include_usage, DELTA_SIZE)))

    def _responses(self, body: Any, summary: Request) -> None:
        answer = self._answer(body, summary, ResponsesAnswer, tools=offered_tools(body))
        if answer is None:
            return None
        if not self.entry["stream"]:
            return self._json(200, answer.response())
        self._stream(sse_events(answer.events(DELTA_SIZE)))

    def _answer(
        self, body: Any, summary: Request, make: Callable[..., _Answer], **extra: Any
    ) -> _Answer | None:
        """The OpenAI-shaped answer (``make``: its builder) to the rule the request matches;
        None when :meth:`_chosen` has answered with an error."""
        chosen = self._chosen(body, summary)
        if chosen is None:
            return None
        model = self.model
        return make(
            chosen,
            summary.model,
            usage=model.usage,
            next_id=model._next_id,
            default_text=model.default_text,
            **extra,
        )

    def _gemini(self, path: str, body: Any, summary: Request) -> None:
        model, method = self.model, gemini.gemini_method(path)
        if not isinstance(body, dict):
            return self._error(ApiError(400, "invalid_request_error", "body is not JSON"))
        if method == "countTokens":
            return self._json(200, gemini.count_tokens(body))
        self.entry["stream"] = method == "streamGenerateContent"
        chosen = self._chosen(body, summary)
        if chosen is None:
            return None
        answer = gemini.GeminiAnswer(
            chosen, summary.model, usage=model.usage, default_text=model.default_text
        )
        if not self.entry["stream"]:
            return self._json(200, answer.response())
        self._stream(gemini.sse_events(answer.chunks(DELTA_SIZE)))

    def _chosen(self, body: Any, summary: Request) -> Reply | None:
        """The reply of the rule the request matches, after its delay; None when the body is
        not JSON or the rule answers with an error (sent here)."""
        if not isinstance(body, dict):
            self._error(ApiError(400, "invalid_request_error", "body is not JSON"))
            return None
        self.entry["rule"], chosen = self.model.choose(summary)
        self.model._wait(chosen.delay)
        if chosen.error is not None:
            self._error(chosen.error)
            return None
        return chosen

    def _error(self, err: ApiError) -> None:
        extra = {} if err.retry_after is None else {"retry-after": f"{err.retry_after:g}"}
        if gemini.is_gemini_path(self.entry["path"]):
            return self._json(err.status, gemini.error_doc(err), extra)
        if self.entry["path"] in CHAT_PATHS or self.entry["path"] in RESPONSES_PATHS:
            return self._json(err.status, error_doc(err), extra)
        doc = {"type": "error", "error": {"type": err.type, "message": err.message}}
        self._json(err.status, doc, extra)

    def _start(self, status: int, headers: dict[str, str]) -> None:
        self.entry["status"] = status
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("request-id", self.request_id)
        self.end_headers()

    def _json(self, status: int, doc: dict[str, Any], extra: dict[str, str] | None = None) -> None:
        if doc.get("type") == "error":
            doc["request_id"] = self.request_id
        payload = json.dumps(doc, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json", "Content-Length": str(len(payload))}
        self._start(status, {**headers, **(extra or {})})
        if self.command != "HEAD":
            self.wfile.write(payload)
        self.wfile.flush()

    def _stream(self, events: Iterable[str]) -> None:
        """Send server-sent events (each a complete ``…\n\n`` text) chunk by chunk."""
        headers = {
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-cache",
            "Transfer-Encoding": "chunked",
        }
        self._start(200, headers)
        for chunk in events:
            payload = chunk.encode("utf-8")
            self.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))
            self.wfile.flush()
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


def _models() -> dict[str, Any]:
    ids = ["claude-opus-5-5", "claude-sonnet-5-5", "claude-haiku-5-5"]
    data = [
        {"type": "model", "id": i, "display_name": i, "created_at": "2026-01-01T00:00:00Z"}
        for i in ids
    ]
    return {"data": data, "has_more": False, "first_id": ids[0], "last_id": ids[-1]}
