"""A scripted model: a Messages API (and chat completions) server on 127.0.0.1 answering by rules.

Point an agent at it (``ScriptedModel.env()``) to run it offline and deterministically::

    with ScriptedModel([Rule(when_prompt="hello", reply=text("Hi there."))]) as model:
        subprocess.run(["claude", "-p", ...], env={**os.environ, **model.env()}, ...)
        assert model.requests[0]["prompt"] == "hello"

It serves ``POST /v1/messages`` (streaming server-sent events when the body asks for
``stream: true``, one JSON message otherwise), ``POST /v1/messages/count_tokens`` and
``GET /v1/models``; anything else is a 404 in the API's error shape. It also speaks the OpenAI
chat completions API (``POST /v1/chat/completions``, JSON or ``stream: true`` server-sent
events) with the same rules, delays and errors; see :mod:`.openai_chat`; and the OpenAI
Responses API (``POST /v1/responses``, Codex CLI's), see :mod:`.openai_responses`. Every
response carries usage (``usage=(input_tokens, output_tokens)``) so an agent prices its calls
above zero.
Standard library only: a ``ThreadingHTTPServer`` in a background thread.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator
from http.server import ThreadingHTTPServer
from typing import Any

from .gemini import is_gemini_path
from .handler import DELTA_SIZE, Handler, count_tokens
from .openai_chat import CHAT_PATHS
from .openai_responses import RESPONSES_PATHS
from .rules import Reply, Request, Rule, TextBlock, ToolUseBlock, text

__all__ = ["DELTA_SIZE", "TEST_API_KEY", "ScriptedModel", "count_tokens"]

#: The API key ``env()`` hands the agent; the server accepts any key.
TEST_API_KEY = "sk-test"


class ScriptedModel:
    """A Messages API server on 127.0.0.1 that answers by rules; a context manager.

    ``rules`` are tried in order, the first match answers (see :class:`Rule`); when none matches,
    the answer is ``default_text``. ``usage`` is the ``(input_tokens, output_tokens)`` reported
    for every answer. ``openai_cost``, when set, is reported as ``usage.cost`` in chat
    completions (as some gateways report prices). ``requests`` is the log of what was sent.
    """

    def __init__(
        self,
        rules: Iterable[Rule] = (),
        *,
        default_text: str = "OK",
        usage: tuple[int, int] = (1200, 40),
        openai_cost: float | None = None,
    ) -> None:
        self._rules: list[Rule] = []
        self._uses: list[int] = []
        self.default_text = default_text
        self.usage = usage
        self.openai_cost = openai_cost
        self._log: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._ids = 0
        self.add(*rules)

    # -- lifecycle -------------------------------------------------------------------------

    def start(self, port: int = 0) -> ScriptedModel:
        """Bind ``port`` (0: an ephemeral one) on 127.0.0.1 and serve in a background thread."""
        if self._server is not None:
            return self
        self._stopping.clear()
        server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
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

    @property
    def openai_base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``: the value for ``OPENAI_BASE_URL``."""
        return f"{self.base_url}/v1"

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

    def gemini_env(self) -> dict[str, str]:
        """Variables that point Gemini CLI at this server: ``GOOGLE_GEMINI_BASE_URL`` and
        ``GEMINI_API_KEY``."""
        return {"GOOGLE_GEMINI_BASE_URL": self.base_url, "GEMINI_API_KEY": TEST_API_KEY}

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
        latest prompt text), ``tools`` (offered tool names), ``nested_tools`` (tools reached
        only through another tool's code: Codex's code mode), ``tool_result`` (text of the tool
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

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """The logged chat completions requests only (OpenAI-compatible model calls)."""
        return [r for r in self.requests if r["path"] in CHAT_PATHS]

    @property
    def gemini_requests(self) -> list[dict[str, Any]]:
        """The logged Gemini ``generateContent`` / ``streamGenerateContent`` requests only
        (Gemini CLI's model calls; ``countTokens`` left out)."""
        return [
            r
            for r in self.requests
            if is_gemini_path(r["path"]) and not r["path"].endswith(":countTokens")
        ]

    @property
    def responses_requests(self) -> list[dict[str, Any]]:
        """The logged Responses API requests only (Codex CLI's model calls)."""
        return [r for r in self.requests if r["path"] in RESPONSES_PATHS]

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
