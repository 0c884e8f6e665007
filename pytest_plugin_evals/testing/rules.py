"""The script language of the scripted model: what to answer (replies) and when (rules).

A reply is built from small helpers and combined with ``+``::

    text("Let me look.") + tool_use("Glob", {"pattern": "**/*.md"})
    delay(2) + error(429)

A rule pairs conditions on the incoming request with a reply. The scripted model tries its rules
in order and answers with the first one that matches; a rule with ``times`` stops matching after
it has answered that many requests::

    Rule(when_tool_result="Launching skill: rel:next", reply=text("The next version is 1.3.0."))
    Rule(when_prompt="next version", reply=tool_use("Skill", {"skill": "rel:next"}))

(Claude Code answers a ``Skill`` call with the tool result ``Launching skill: <name>`` and sends
the skill's body as text beside it; an unknown skill gives ``Unknown skill: <name>``.)

Conditions look at a :class:`Request` summary of the Messages API body: the user's prompt, the
tools offered, the tool result the request carries (if any) and the model. Every condition given
must hold; a rule without conditions matches every request.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_plugin_evals.util.message_text import content_text

#: A condition on text: a plain string matches as a substring, a compiled pattern by ``search``.
TextMatch = str | re.Pattern[str]

#: Status code → the error ``type`` the real API sends with it.
ERROR_TYPES: dict[int, str] = {
    400: "invalid_request_error",
    401: "authentication_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    529: "overloaded_error",
}

_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)


@dataclass(frozen=True)
class TextBlock:
    """A text content block of a reply."""

    text: str


@dataclass(frozen=True)
class ToolUseBlock:
    """A ``tool_use`` content block of a reply; ``id`` is generated when None."""

    name: str
    input: dict[str, Any] = field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True)
class ApiError:
    """An HTTP error answer in the API's shape: ``{"type": "error", "error": {type, message}}``."""

    status: int
    type: str
    message: str
    #: Sent as the ``retry-after`` header (seconds) when set.
    retry_after: float | None = None


Block = TextBlock | ToolUseBlock


@dataclass(frozen=True)
class Reply:
    """What the model answers to one request: content blocks, or an error, after a delay.

    Build replies with :func:`text`, :func:`tool_use`, :func:`error` and :func:`delay`, and
    combine them with ``+`` (blocks are concatenated in order, delays add up). ``stop_reason``
    defaults to ``tool_use`` when the reply holds a tool call and ``end_turn`` otherwise.
    A reply with neither blocks nor an error (a bare :func:`delay`) answers with the model's
    default text.
    """

    blocks: tuple[Block, ...] = ()
    error: ApiError | None = None
    delay: float = 0.0
    stop_reason: str | None = None

    def __post_init__(self) -> None:
        if self.error is not None and self.blocks:
            raise ValueError("a reply cannot carry both an error and content blocks")
        if self.delay < 0:
            raise ValueError(f"a reply delay must be 0 seconds or more, got {self.delay}")

    def __add__(self, other: Reply) -> Reply:
        if not isinstance(other, Reply):
            return NotImplemented
        if self.error is not None and other.error is not None:
            raise ValueError("a reply cannot carry two errors")
        return Reply(
            blocks=self.blocks + other.blocks,
            error=self.error or other.error,
            delay=self.delay + other.delay,
            stop_reason=other.stop_reason or self.stop_reason,
        )

    @property
    def resolved_stop_reason(self) -> str:
        """The ``stop_reason`` sent: the explicit one, else from the blocks."""
        if self.stop_reason:
            return self.stop_reason
        if any(isinstance(b, ToolUseBlock) for b in self.blocks):
            return "tool_use"
        return "end_turn"


def text(content: str) -> Reply:
    """A reply holding one text block."""
    if not isinstance(content, str):
        raise TypeError(f"text() takes a string, got {type(content).__name__}")
    return Reply(blocks=(TextBlock(content),))


def tool_use(name: str, input: dict[str, Any] | None = None, *, id: str | None = None) -> Reply:
    """A reply holding one ``tool_use`` block calling tool ``name`` with ``input``."""
    if not isinstance(name, str) or not name:
        raise ValueError("tool_use() needs a non-empty tool name")
    payload = {} if input is None else input
    if not isinstance(payload, dict):
        raise TypeError(f"tool_use() input must be a dict, got {type(payload).__name__}")
    try:
        json.dumps(payload)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"tool_use() input for {name} is not JSON-serialisable: {exc}") from None
    return Reply(blocks=(ToolUseBlock(name, payload, id),))


def error(
    status: int,
    type: str | None = None,
    message: str | None = None,
    *,
    retry_after: float | None = None,
) -> Reply:
    """An HTTP error reply: ``error(429)``, ``error(500)``, ``error(529)``, ``error(401)`` ...

    ``type`` defaults to the API's type for the status (``rate_limit_error``, ``api_error``,
    ``overloaded_error``, ``authentication_error`` ...); ``message`` to ``"fake <status> <type>"``.
    """
    if not isinstance(status, int) or not 400 <= status <= 599:
        raise ValueError(f"error() needs an HTTP error status from 400 to 599, got {status!r}")
    kind = type or ERROR_TYPES.get(status, "api_error")
    return Reply(error=ApiError(status, kind, message or f"fake {status} {kind}", retry_after))


def delay(seconds: float) -> Reply:
    """Wait ``seconds`` before answering; combine with another reply: ``delay(1) + text("hi")``."""
    return Reply(delay=float(seconds))


def reply(*parts: Reply) -> Reply:
    """Combine several replies into one turn (the same as adding them with ``+``)."""
    combined = Reply()
    for part in parts:
        combined = combined + part
    return combined


@dataclass(frozen=True)
class Request:
    """What rules look at in a Messages API request body.

    ``prompt`` is the user's latest prompt: the text of the latest user message that carries no
    tool result, with ``<system-reminder>`` blocks removed (Claude Code sends the body of a
    loaded skill as text beside the Skill tool result; that is not a prompt). ``tool_result``
    is set only when the last message (``role: system`` turns aside) carries ``tool_result``
    blocks: their text, joined by newlines. ``system`` is the text of the ``system`` field and
    of every ``role: system`` message (Claude Code puts its environment and skill listing in
    one). ``nested_tools`` are tools the model reaches only from code it sends another tool
    (Codex's code mode: the ``tools.<name>`` of its JavaScript ``exec`` tool).
    """

    model: str = ""
    prompt: str = ""
    tools: tuple[str, ...] = ()
    nested_tools: tuple[str, ...] = ()
    tool_result: str | None = None
    tool_result_error: bool = False
    system: str = ""

    @classmethod
    def from_body(cls, body: dict[str, Any]) -> Request:
        messages = body.get("messages")
        messages = messages if isinstance(messages, list) else []
        tools = body.get("tools")
        names = tuple(str(t["name"]) for t in (tools or []) if isinstance(t, dict) and "name" in t)
        tool_result, is_error = _last_tool_result(messages)
        return cls(
            model=str(body.get("model") or ""),
            prompt=_latest_prompt(messages),
            tools=names,
            tool_result=tool_result,
            tool_result_error=is_error,
            system=_system_text(body.get("system"), messages),
        )


def _blocks(message: Any) -> list[dict[str, Any]]:
    if not isinstance(message, dict):
        return []
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [b for b in content or [] if isinstance(b, dict)]


def _block_text(block: dict[str, Any]) -> str:
    return content_text(block.get("content"), other=lambda _: str(block.get("text", "")))


def _system_text(system: Any, messages: Sequence[Any]) -> str:
    parts = [_block_text({"content": system})] if system else []
    for message in messages:
        if isinstance(message, dict) and message.get("role") == "system":
            parts.append(_block_text(message))
    return "\n".join(parts)


def _latest_prompt(messages: Sequence[Any]) -> str:
    for message in reversed(messages):
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        blocks = _blocks(message)
        if any(b.get("type") == "tool_result" for b in blocks):
            continue  # text riding along a tool result (a loaded skill's body) is not a prompt
        texts = [
            _REMINDER.sub("", str(b.get("text", ""))).strip()
            for b in blocks
            if b.get("type") == "text"
        ]
        joined = "\n".join(t for t in texts if t)
        if joined:
            return joined
    return ""


def _last_tool_result(messages: Sequence[Any]) -> tuple[str | None, bool]:
    # Claude Code may append ``role: system`` turns after a tool result: look past them.
    talk = [m for m in messages if not (isinstance(m, dict) and m.get("role") == "system")]
    if not talk:
        return None, False
    results = [b for b in _blocks(talk[-1]) if b.get("type") == "tool_result"]
    if not results:
        return None, False
    return "\n".join(_block_text(b) for b in results), any(b.get("is_error") for b in results)


def _matches(pattern: TextMatch, value: str) -> bool:
    if isinstance(pattern, re.Pattern):
        return pattern.search(value) is not None
    return pattern in value


def _check_text_match(name: str, value: object) -> None:
    if value is not None and not isinstance(value, (str, re.Pattern)):
        raise TypeError(f"Rule {name} must be a string or a compiled regex, got {value!r}")


@dataclass(frozen=True, kw_only=True)
class Rule:
    """When a request matches every condition given, answer it with ``reply``.

    * ``when_prompt``: the user's latest prompt contains this string (or the regex matches it).
    * ``when_tool_offered``: a tool of exactly this name is in the request's ``tools`` or
      ``nested_tools`` (a regex matches against each name).
    * ``when_tool_result``: the last message carries a ``tool_result`` whose text contains this
      string (or the regex matches it) — the way to answer after a tool ran.
    * ``when_model``: the requested model id contains this string (or the regex matches it).
    * ``times``: answer at most this many requests, then stop matching (None: no limit).

    A prompt rule keeps matching on the follow-up requests of the same turn (they repeat the
    prompt), so list tool-result rules before prompt rules, or give the prompt rule ``times=1``.
    """

    reply: Reply
    when_prompt: TextMatch | None = None
    when_tool_offered: TextMatch | None = None
    when_tool_result: TextMatch | None = None
    when_model: TextMatch | None = None
    times: int | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.reply, Reply):
            raise TypeError(
                f"Rule reply must be a Reply (text(), tool_use(), error() ...), got {self.reply!r}"
            )
        for name in ("when_prompt", "when_tool_offered", "when_tool_result", "when_model"):
            _check_text_match(name, getattr(self, name))
        if self.times is not None and (not isinstance(self.times, int) or self.times < 1):
            raise ValueError(f"Rule times must be a whole number of 1 or more, got {self.times!r}")

    def matches(self, request: Request) -> bool:
        """Whether every condition of this rule holds for ``request`` (``times`` aside)."""
        if self.when_prompt is not None and not _matches(self.when_prompt, request.prompt):
            return False
        if self.when_model is not None and not _matches(self.when_model, request.model):
            return False
        if self.when_tool_offered is not None:
            wanted, names = self.when_tool_offered, request.tools + request.nested_tools
            if isinstance(wanted, re.Pattern):
                if not any(wanted.search(n) for n in names):
                    return False
            elif wanted not in names:
                return False
        if self.when_tool_result is not None:
            if request.tool_result is None:
                return False
            if not _matches(self.when_tool_result, request.tool_result):
                return False
        return True
