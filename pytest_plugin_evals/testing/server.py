"""A scripted model: an Anthropic Messages API server on 127.0.0.1 that answers by rules.

Point an agent at it (``ScriptedModel.env()``) to run it offline and deterministically::

    with ScriptedModel([Rule(when_prompt="hello", reply=text("Hi there."))]) as model:
        subprocess.run(["claude", "-p", ...], env={**os.environ, **model.env()}, ...)
        assert model.requests[0]["prompt"] == "hello"

It serves ``POST /v1/messages`` (streaming server-sent events when the body asks for
``stream: true``, one JSON message otherwise), ``POST /v1/messages/count_tokens`` and
``GET /v1/models``; anything else is a 404 in the API's error shape. Every response carries
usage (``usage=(input_tokens, output_tokens)``) so an agent prices its calls above zero.
Standard library only: a ``ThreadingHTTPServer`` in a background thread.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

from .rules import ApiError, Reply, Request, Rule, TextBlock, ToolUseBlock, text

#: Text and tool input are streamed in deltas of at most this many characters.
DELTA_SIZE = 16

#: The API key ``env()`` hands the agent; the server accepts any key.
TEST_API_KEY = "sk-test"

_SECRET_HEADERS = frozenset({"x-api-key", "authorization"})


class ScriptedModel:
    """A Messages API server on 127.0.0.1 that answers by rules; a context manager.

    ``rules`` are tried in order, the first match answers (see :class:`Rule`); when none matches,
    the answer is ``default_text``. ``usage`` is the ``(input_tokens, output_tokens)`` reported
    for every answer. ``requests`` is the log of what the agent sent.
    """

    def __init__(
        self,
        rules: Iterable[Rule] = (),
        *,
        default_text: str = "OK",
        usage: tuple[int, int] = (1200, 40),
    ) -> None:
        self._rules: list[Rule] = []
        self._uses: list[int] = []
        self.default_text = default_text
        self.usage = usage
        self._log: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._ids = 0
        self.add(*rules)

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> ScriptedModel:
        """Bind an ephemeral port on 127.0.0.1 and serve in a background thread."""
        if self._server is not None:
            return self
        self._stopping.clear()
        server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        server.daemon_threads = True
        server.model = self  # type: ignore[attr-defined]
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; requests still waiting on a delay are cut short."""
        server, self._server = self._server, None
        if server is None:
            return
        self._stopping.set()
        server.shutdown()
        server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> ScriptedModel:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        """The port served on (the server must be started)."""
        if self._server is None:
            raise RuntimeError("the scripted model is not started: call start() first")
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>``: the value for ``ANTHROPIC_BASE_URL``."""
        return f"http://127.0.0.1:{self.port}"

    def env(self) -> dict[str, str]:
        """Environment variables that point an agent (Claude Code) at this server, offline."""
        return {
            "ANTHROPIC_BASE_URL": self.base_url,
            "ANTHROPIC_API_KEY": TEST_API_KEY,
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "CLAUDE_CODE_MAX_RETRIES": "0",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_ERROR_REPORTING": "1",
        }

    # -- script and log --------------------------------------------------------------------

    def add(self, *rules: Rule) -> ScriptedModel:
        """Append rules (tried after the ones already there); returns the model."""
        for rule in rules:
            if not isinstance(rule, Rule):
                raise TypeError(f"ScriptedModel.add() takes Rule objects, got {rule!r}")
        with self._lock:
            self._rules.extend(rules)
            self._uses.extend(0 for _ in rules)
        return self

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The request log, oldest first: one dict per request.

        Keys: ``method``, ``path`` (without the query), ``query``, ``headers`` (credentials
        redacted), ``body`` (parsed JSON, or None), ``model``, ``stream``, ``prompt`` (the user's
        latest prompt text), ``tools`` (offered tool names), ``tool_result`` (text of the tool
        result the request carries, or None), ``system`` (the system text, including
        ``role: system`` messages), ``rule`` (index of the rule that answered, or None),
        ``status`` (the HTTP status sent; None while the answer is pending) and ``time``
        (``time.time()`` on arrival).
        """
        with self._lock:
            return [dict(entry) for entry in self._log]

    @property
    def message_requests(self) -> list[dict[str, Any]]:
        """The logged ``POST /v1/messages`` requests only (model calls)."""
        return [r for r in self.requests if r["path"] == "/v1/messages"]

    def choose(self, request: Request) -> tuple[int | None, Reply]:
        """The first live rule matching ``request`` (counted as used), else the default text."""
        with self._lock:
            for index, rule in enumerate(self._rules):
                if rule.times is not None and self._uses[index] >= rule.times:
                    continue
                if rule.matches(request):
                    self._uses[index] += 1
                    return index, rule.reply
        return None, text(self.default_text)

    def _record(self, entry: dict[str, Any]) -> None:
        with self._lock:
            self._log.append(entry)

    def _next_id(self, prefix: str) -> str:
        with self._lock:
            self._ids += 1
            return f"{prefix}_scripted{self._ids:016d}"

    def _wait(self, seconds: float) -> None:
        if seconds > 0:
            self._stopping.wait(seconds)

    # -- answers ---------------------------------------------------------------------------

    def message(self, reply: Reply, model: str) -> dict[str, Any]:
        """The complete (non-streaming) message for ``reply``."""
        content: list[dict[str, Any]] = []
        for block in reply.blocks or text(self.default_text).blocks:
            if isinstance(block, TextBlock):
                content.append({"type": "text", "text": block.text})
            else:
                content.append(self._tool_block(block, block.input))
        return {
            "id": self._next_id("msg"),
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": reply.resolved_stop_reason,
            "stop_sequence": None,
            "usage": self._usage(self.usage[1]),
        }

    def events(self, reply: Reply, model: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """The server-sent events for ``reply``, as the real API streams them."""
        start = self.message(Reply(), model)
        start.update(content=[], stop_reason=None, usage=self._usage(1))
        yield "message_start", {"type": "message_start", "message": start}
        yield "ping", {"type": "ping"}
        for index, block in enumerate(reply.blocks or text(self.default_text).blocks):
            if isinstance(block, TextBlock):
                opening: dict[str, Any] = {"type": "text", "text": ""}
                deltas = [{"type": "text_delta", "text": c} for c in _chunks(block.text)]
            else:
                opening = self._tool_block(block, {})
                raw = json.dumps(block.input, ensure_ascii=False)
                deltas = [{"type": "input_json_delta", "partial_json": ""}]
                deltas += [{"type": "input_json_delta", "partial_json": c} for c in _chunks(raw)]
            yield (
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": opening,
                },
            )
            for delta in deltas:
                yield (
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": delta,
                    },
                )
            yield "content_block_stop", {"type": "content_block_stop", "index": index}
        yield (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": reply.resolved_stop_reason, "stop_sequence": None},
                "usage": self._usage(self.usage[1]),
            },
        )
        yield "message_stop", {"type": "message_stop"}

    def _tool_block(self, block: ToolUseBlock, payload: dict[str, Any]) -> dict[str, Any]:
        return {
            "type": "tool_use",
            "id": block.id or self._next_id("toolu"),
            "name": block.name,
            "input": payload,
        }

    def _usage(self, output_tokens: int) -> dict[str, Any]:
        return {
            "input_tokens": self.usage[0],
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
            "output_tokens": output_tokens,
            "service_tier": "standard",
        }


def _chunks(value: str) -> list[str]:
    return [value[i : i + DELTA_SIZE] for i in range(0, len(value), DELTA_SIZE)] or [""]


def count_tokens(body: dict[str, Any]) -> int:
    """A deterministic estimate for ``count_tokens``: about four characters per token."""
    parts = [body.get(key) for key in ("system", "messages", "tools")]
    size = len(json.dumps(parts, ensure_ascii=False, default=str))
    return max(1, size // 4)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "scripted-model/1"
    entry: dict[str, Any]
    request_id: str

    @property
    def model(self) -> ScriptedModel:
        return self.server.model  # type: ignore[attr-defined,no-any-return]

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
        summary = Request.from_body(body if isinstance(body, dict) else {})
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
            if not isinstance(body, dict):
                return self._error(ApiError(400, "invalid_request_error", "body is not JSON"))
            self.entry["rule"], chosen = model.choose(summary)
            model._wait(chosen.delay)
            if chosen.error is not None:
                return self._error(chosen.error)
            if self.entry["stream"]:
                return self._stream(model.events(chosen, summary.model))
            return self._json(200, model.message(chosen, summary.model))
        if method == "POST" and path == "/v1/messages/count_tokens":
            return self._json(
                200, {"input_tokens": count_tokens(body if isinstance(body, dict) else {})}
            )
        if method in ("GET", "HEAD") and path == "/v1/models":
            return self._json(200, _models())
        if method == "HEAD" and path == "/":
            return self._json(200, {})
        return self._error(ApiError(404, "not_found_error", f"{method} {path} is not served here"))

    def _error(self, err: ApiError) -> None:
        extra = {} if err.retry_after is None else {"retry-after": f"{err.retry_after:g}"}
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

    def _stream(self, events: Iterable[tuple[str, dict[str, Any]]]) -> None:
        headers = {
            "Content-Type": "text/event-stream; charset=utf-8",
            "Cache-Control": "no-cache",
            "Transfer-Encoding": "chunked",
        }
        self._start(200, headers)
        for name, data in events:
            chunk = f"event: {name}\ndata: {json.dumps(data, ensure_ascii=False)}\n\n"
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
