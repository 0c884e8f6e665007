"""The scripted model's OpenAI chat completions side: same rules, errors, delays and log."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, delay, error, text, tool_use

LONG = "The answer is PASS, because the report names every release in order."


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel() as m:
        yield m


def chat(
    prompt: Any = "hello",
    *,
    stream: bool = False,
    extra: list[dict[str, Any]] | None = None,
    tools: tuple[str, ...] = (),
    **more: Any,
) -> dict[str, Any]:
    doc: dict[str, Any] = {
        "model": "local-model",
        "messages": [
            {"role": "system", "content": "You judge."},
            {"role": "user", "content": prompt},
            *(extra or []),
        ],
        "stream": stream,
        **more,
    }
    if tools:
        doc["tools"] = [
            {"type": "function", "function": {"name": n, "parameters": {"type": "object"}}}
            for n in tools
        ]
    return doc


def post(model: ScriptedModel, doc: dict[str, Any], path: str = "/v1/chat/completions"):
    conn = http.client.HTTPConnection("127.0.0.1", model.port, timeout=10)
    conn.request("POST", path, json.dumps(doc), {"Content-Type": "application/json"})
    response = conn.getresponse()
    data = response.read().decode("utf-8")
    conn.close()
    return response, data


def sse(data: str) -> list[Any]:
    events = [chunk for chunk in data.split("\n\n") if chunk]
    assert all(e.startswith("data: ") and "\n" not in e for e in events)
    assert events[-1] == "data: [DONE]"
    return [json.loads(e[len("data: ") :]) for e in events[:-1]]


def test_a_json_completion_with_usage_and_the_request_logged(model: ScriptedModel) -> None:
    model.add(Rule(when_prompt="hello", reply=text("Hi.")))
    response, data = post(model, chat())
    assert response.status == 200
    doc = json.loads(data)
    assert doc["object"] == "chat.completion"
    assert doc["id"].startswith("chatcmpl_scripted")
    assert doc["model"] == "local-model"
    assert doc["choices"] == [
        {
            "index": 0,
            "message": {"role": "assistant", "content": "Hi."},
            "finish_reason": "stop",
            "logprobs": None,
        }
    ]
    assert doc["usage"] == {"prompt_tokens": 1200, "completion_tokens": 40, "total_tokens": 1240}
    (entry,) = model.chat_requests
    assert model.message_requests == []
    assert (entry["path"], entry["prompt"], entry["model"]) == (
        "/v1/chat/completions",
        "hello",
        "local-model",
    )
    assert (entry["stream"], entry["rule"], entry["status"], entry["system"]) == (
        False,
        0,
        200,
        "You judge.",
    )


def test_rules_read_text_parts_tools_and_tool_results(model: ScriptedModel) -> None:
    model.add(
        Rule(when_tool_result="42 lines", reply=text("It has 42 lines.")),
        Rule(when_tool_offered="count", reply=tool_use("count", {"file": "a.txt"})),
    )
    parts = [{"type": "text", "text": "How long is a.txt?"}, {"type": "image_url", "image_url": {}}]
    _, data = post(model, chat(parts, tools=("count",)))
    message = json.loads(data)["choices"][0]
    assert message["finish_reason"] == "tool_calls"
    (call,) = message["message"]["tool_calls"]
    assert call["function"] == {"name": "count", "arguments": '{"file": "a.txt"}'}
    assert model.chat_requests[0]["prompt"] == "How long is a.txt?"
    assert model.chat_requests[0]["tools"] == ["count"]
    follow_up = [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": "42 lines"},
    ]
    _, data = post(model, chat(parts, tools=("count",), extra=follow_up))
    assert json.loads(data)["choices"][0]["message"]["content"] == "It has 42 lines."
    assert model.chat_requests[1]["tool_result"] == "42 lines"
    assert model.chat_requests[1]["prompt"] == "How long is a.txt?"


def test_a_streamed_completion_in_chunks_then_done(model: ScriptedModel) -> None:
    model.add(Rule(reply=text(LONG)))
    response, data = post(model, chat(stream=True, stream_options={"include_usage": True}))
    assert response.status == 200
    assert response.getheader("Content-Type").startswith("text/event-stream")
    chunks = sse(data)
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert chunks[0]["choices"][0]["delta"] == {"role": "assistant", "content": ""}
    content = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks if c["choices"])
    assert content == LONG
    assert len(chunks) > 4  # several deltas
    assert chunks[-2]["choices"][0]["finish_reason"] == "stop"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"]["completion_tokens"] == 40
    assert model.chat_requests[0]["stream"] is True
    _, data = post(model, chat(stream=True))  # no usage chunk unless asked
    assert all(c["choices"] for c in sse(data))


def test_the_openai_sdk_reads_streamed_text_and_tool_calls(model: ScriptedModel) -> None:
    openai = pytest.importorskip("openai")
    model.add(
        Rule(when_prompt="tool", reply=text("Let me look.") + tool_use("grep", {"q": "x" * 40})),
        Rule(reply=text(LONG)),
    )
    client = openai.OpenAI(base_url=model.openai_base_url, api_key="sk-test", max_retries=0)
    messages = [{"role": "user", "content": "hi"}]
    stream = client.chat.completions.create(
        model="m", messages=messages, stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == LONG
    assert chunks[-1].usage.prompt_tokens == 1200
    messages = [{"role": "user", "content": "use a tool"}]
    arguments, names = "", []
    for chunk in client.chat.completions.create(model="m", messages=messages, stream=True):
        for call in chunk.choices[0].delta.tool_calls or []:
            names += [call.function.name] if call.function.name else []
            arguments += call.function.arguments or ""
    assert (names, json.loads(arguments)) == (["grep"], {"q": "x" * 40})
    done = client.chat.completions.create(model="m", messages=messages)
    assert done.choices[0].message.content == "Let me look."
    assert done.choices[0].message.tool_calls[0].function.name == "grep"


def test_errors_in_the_openai_shape(model: ScriptedModel) -> None:
    model.add(Rule(reply=error(429, retry_after=2), times=1))
    response, data = post(model, chat())
    assert response.status == 429
    assert response.getheader("retry-after") == "2"
    assert json.loads(data) == {
        "error": {
            "message": "fake 429 rate_limit_error",
            "type": "rate_limit_error",
            "param": None,
            "code": None,
        }
    }
    assert model.chat_requests[0]["status"] == 429
    response, _ = post(model, chat())  # the error rule is used up
    assert response.status == 200


def test_delays_and_paths_without_v1(model: ScriptedModel) -> None:
    model.add(Rule(reply=delay(0.3) + text("late")))
    start = time.monotonic()
    _, data = post(model, chat(), path="/chat/completions")
    assert time.monotonic() - start >= 0.3
    assert json.loads(data)["choices"][0]["message"]["content"] == "late"
    assert model.chat_requests[0]["path"] == "/chat/completions"
