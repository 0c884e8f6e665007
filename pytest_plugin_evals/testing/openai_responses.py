"""The OpenAI Responses API side of the scripted model.

``POST /v1/responses`` is answered by the same rules as the Messages API. A request is
summarised the same way: ``prompt`` is the text of the latest ``user`` message of ``input`` (a
plain string ``input`` is the prompt), ``tools`` the offered tools' names — those of ``tools``
and of ``additional_tools`` input items, a namespace's tools by their own names, a built-in
tool without a name (``{"type": "web_search"}``) by its type —, ``tool_result`` the output of
the ``function_call_output`` (or ``custom_tool_call_output``) items that end ``input``,
``system`` the ``instructions`` and the text of the ``developer`` and ``system`` messages.

Codex CLI's code mode (its default model) offers one freeform tool, ``exec``, whose
JavaScript calls the other tools as ``tools.<name>(…)``; its description declares them
(``declare const tools: { exec_command(args: {…}) … }``). Those are ``nested_tools``.

A reply's text blocks become one assistant ``message`` output item. A ``tool_use`` block
becomes the call the request's tools ask for: a ``function_call`` (``arguments`` a JSON
string), a ``custom_tool_call`` for a freeform tool (``input`` the block's ``{"input": …}``
string, else its input as JSON), with the tool's ``namespace`` when it has one; a block
naming a nested tool becomes a ``custom_tool_call`` of the tool that reaches it, a script that
awaits the call and hands back its result (:func:`nested_script`). ``call_id`` is the block's
id. With ``stream: true`` the answer is server-sent events, as Codex CLI reads them:
``response.created``, ``response.in_progress``, then per item ``response.output_item.added``,
its deltas (``response.output_text.delta``, ``response.function_call_arguments.delta`` or
``response.custom_tool_call_input.delta``) and ``response.output_item.done``, then
``response.completed`` with the usage. Errors use the OpenAI shape
``{"error": {"message", "type", "param", "code"}}``.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_plugin_evals.util.message_text import content_text

from .rules import _REMINDER, Reply, Request, TextBlock, ToolUseBlock

#: Paths served as the Responses API (base URLs end in ``/v1`` or not).
RESPONSES_PATHS = frozenset({"/v1/responses", "/responses"})

_OUTPUTS = ("function_call_output", "custom_tool_call_output")

#: A tool that a freeform tool's code reaches, as its description declares it:
#: ``declare const tools: { exec_command(args: {…`` or ``{ apply_patch(input: string)…``.
_DECLARED = re.compile(r"declare const tools: \{ ([A-Za-z_$][\w$]*)\((\w+: string\))?")


@dataclass(frozen=True)
class Tool:
    """One tool a request offers: its name, ``type`` (``function``, ``custom`` for a freeform
    tool, or a built-in's type) and the namespace it is in, if any."""

    name: str
    kind: str
    namespace: str | None = None


@dataclass(frozen=True)
class Toolbox:
    """What a Responses request offers: its tools by name, and the tools reached only from
    code sent to ``runner`` (Codex's ``exec``), each with whether it takes a plain string."""

    tools: dict[str, Tool] = field(default_factory=dict)
    nested: dict[str, bool] = field(default_factory=dict)
    runner: Tool | None = None


def _leaves(tools: Any, namespace: str | None = None) -> Iterator[tuple[dict[str, Any], Tool]]:
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict):
            continue
        kind = str(tool.get("type") or "function")
        if kind == "namespace":
            inner = tool.get("name") if isinstance(tool.get("name"), str) else None
            yield from _leaves(tool.get("tools"), inner or namespace)
            continue
        name = tool.get("name") or kind
        if isinstance(name, str) and name:
            yield tool, Tool(name, kind, namespace)


def offered_tools(body: Any) -> Toolbox:
    """The tools of a Responses request: its ``tools`` and those of its ``additional_tools``
    input items (namespaces opened), and the tools a freeform tool's code reaches."""
    if not isinstance(body, dict):
        return Toolbox()
    raw = body.get("input")
    lists = [body.get("tools")] + [
        item.get("tools")
        for item in (raw if isinstance(raw, list) else [])
        if isinstance(item, dict) and item.get("type") == "additional_tools"
    ]
    found: dict[str, Tool] = {}
    nested: dict[str, bool] = {}
    runner = None
    for tools in lists:
        for spec, tool in _leaves(tools):
            found.setdefault(tool.name, tool)
            description = spec.get("description")
            if runner is not None or tool.kind != "custom" or not isinstance(description, str):
                continue
            declared = _DECLARED.findall(description)
            if declared:
                runner = tool
                nested = {name: bool(takes_string) for name, takes_string in declared}
    return Toolbox(found, nested, runner)


def _text(content: Any) -> str:
    """The text of a message's ``content`` or a tool output: a string, or parts with ``text``."""
    return content_text(content, kind=None)


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
    box = offered_tools(body)
    system = [body["instructions"]] if isinstance(body.get("instructions"), str) else []
    system += [_text(i.get("content")) for i in items if _is_message(i, "system", "developer")]
    return Request(
        model=str(body.get("model") or ""),
        prompt=prompt,
        tools=tuple(box.tools),
        nested_tools=tuple(n for n in box.nested if n not in box.tools),
        tool_result="\n".join(results) if results else None,
        system="\n".join(system),
    )


def freeform_input(value: dict[str, Any]) -> str:
    """A freeform tool's input from a ``tool_use`` block: its ``{"input": "…"}`` string, else
    the block's input as JSON."""
    if set(value) == {"input"} and isinstance(value["input"], str):
        return value["input"]
    return json.dumps(value, ensure_ascii=False)


def nested_script(name: str, value: dict[str, Any], *, takes_string: bool) -> str:
    """The JavaScript that calls nested tool ``name`` from Codex's ``exec`` and hands back its
    result: ``text()`` puts a string as it is and anything else as JSON."""
    if takes_string and set(value) == {"input"} and isinstance(value["input"], str):
        argument = json.dumps(value["input"], ensure_ascii=False)
    else:
        argument = json.dumps(value, ensure_ascii=False)
    return f"const result = await tools.{name}({argument});\ntext(result);\n"


def call_item(block: ToolUseBlock, tools: Toolbox, next_id: Callable[[str], str]) -> dict[str, Any]:
    """The output item for one ``tool_use`` block, in the shape the request's tools ask for."""
    tool = tools.tools.get(block.name)
    name = block.name
    if tool is None and block.name in tools.nested and tools.runner is not None:
        tool = tools.runner
        name = tool.name
        takes_string = tools.nested[block.name]
        source: str | None = nested_script(block.name, block.input, takes_string=takes_string)
    elif tool is not None and tool.kind == "custom":
        source = freeform_input(block.input)
    else:
        source = None
    item: dict[str, Any] = {
        "type": "function_call" if source is None else "custom_tool_call",
        "id": next_id("fc" if source is None else "ctc"),
        "status": "completed",
        "call_id": block.id or next_id("call"),
        "name": name,
    }
    if source is None:
        item["arguments"] = json.dumps(block.input, ensure_ascii=False)
    else:
        item["input"] = source
    if tool is not None and tool.namespace:
        item["namespace"] = tool.namespace
    return item


class ResponsesAnswer:
    """Builds the response object (or its server-sent events) for one reply; ``tools`` are the
    request's (a call takes the shape they ask for)."""

    def __init__(
        self,
        reply: Reply,
        model: str,
        *,
        tools: Toolbox | None = None,
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
                self.items.append(call_item(block, tools or Toolbox(), next_id))

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
                key = "input" if item["type"] == "custom_tool_call" else "arguments"
                event = (
                    "response.custom_tool_call_input"
                    if key == "input"
                    else "response.function_call_arguments"
                )
                yield {
                    "type": "response.output_item.added",
                    "output_index": index,
                    "item": {**item, "status": "in_progress", key: ""},
                }
                whole = item[key]
                for start in range(0, len(whole), size):
                    piece = whole[start : start + size]
                    yield {"type": f"{event}.delta", **where, "delta": piece}
                yield {"type": f"{event}.done", **where, key: whole}
            yield {"type": "response.output_item.done", "output_index": index, "item": item}
        final = "response.incomplete" if self.incomplete else "response.completed"
        yield {"type": final, "response": self.response()}


def sse_events(events: Iterator[dict[str, Any]]) -> Iterator[str]:
    """``event: <type>`` / ``data: <event>`` pairs, numbered by ``sequence_number``."""
    for number, event in enumerate(events):
        doc = {**event, "sequence_number": number}
        yield f"event: {event['type']}\ndata: {json.dumps(doc, ensure_ascii=False)}\n\n"
