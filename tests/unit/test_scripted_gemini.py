"""The scripted model's Gemini API side: same rules, errors, delays and log."""

from __future__ import annotations

import http.client
import json
import time
from collections.abc import Iterator
from typing import Any

import pytest

from pytest_plugin_evals.testing import Rule, ScriptedModel, delay, error, text, tool_use

LONG = "The answer is PASS, because the report names every release in order."
STREAM = "/v1beta/models/gemini-2.5-flash:streamGenerateContent"
UNARY = "/v1beta/models/gemini-2.5-flash:generateContent"


@pytest.fixture
def model() -> Iterator[ScriptedModel]:
    with ScriptedModel() as m:
        yield m


def body(
    prompt: str = "hello",
    *,
    extra: list[dict[str, Any]] | None = None,
    tools: tuple[str, ...] = (),
) -> dict[str, Any]:
    """A request as Gemini CLI sends it: the session context, then the prompt."""
    doc: dict[str, Any] = {
        "contents": [
            {
                "role": "user",
                "parts": [
                    {"text": "<session_context>\nThis is the Gemini CLI.\n</session_context>"},
                    {"text": prompt},
                ],
            },
            *(extra or []),
        ],
        "systemInstruction": {"parts": [{"text": "You are a CLI agent."}]},
    }
    if tools:
        doc["tools"] = [{"functionDeclarations": [{"name": n} for n in tools]}]
    return doc


def post(model: ScriptedModel, doc: Any, path: str) -> tuple[http.client.HTTPResponse, str]:
    conn = http.client.HTTPConnection("127.0.0.1", model.port, timeout=10)
    headers = {"Content-Type": "application/json", "x-goog-api-key": "real-looking-key"}
    conn.request("POST", path, json.dumps(doc), headers)
    response = conn.getresponse()
    data = response.read().decode("utf-8")
    conn.close()
    return response, data


def sse(data: str) -> list[dict[str, Any]]:
    chunks = [c for c in data.split("\n\n") if c]
    assert all(c.startswith("data: ") for c in chunks)
    return [json.loads(c[len("data: ") :]) for c in chunks]


def parts(chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for c in chunks for p in c["candidates"][0]["content"]["parts"]]


def test_stream_text_then_a_function_call(model: ScriptedModel) -> None:
    model.add(
        Rule(
            when_prompt="hello", reply=text(LONG) + tool_use("run_shell_command", {"command": "ls"})
        )
    )
    response, data = post(model, body(), STREAM + "?alt=sse")
    assert response.status == 200
    assert response.getheader("Content-Type", "").startswith("text/event-stream")
    chunks = sse(data)
    got = parts(chunks)
    assert "".join(p.get("text", "") for p in got) == LONG
    assert all(len(p["text"]) <= 16 for p in got if "text" in p)
    assert got[-1] == {"functionCall": {"name": "run_shell_command", "args": {"command": "ls"}}}
    # Only the last chunk ends the candidate and carries the usage.
    assert [c["candidates"][0].get("finishReason") for c in chunks][-1] == "STOP"
    assert all("finishReason" not in c["candidates"][0] for c in chunks[:-1])
    assert chunks[-1]["usageMetadata"] == {
        "promptTokenCount": 1200,
        "candidatesTokenCount": 40,
        "totalTokenCount": 1240,
    }
    assert all(c["candidates"][0]["content"]["role"] == "model" for c in chunks)


def test_unary_generate_content_and_default_text(model: ScriptedModel) -> None:
    response, data = post(model, body("nothing matches"), UNARY)
    assert response.status == 200
    doc = json.loads(data)
    assert doc["candidates"][0]["content"]["parts"] == [{"text": "OK"}]
    assert doc["candidates"][0]["finishReason"] == "STOP"
    assert doc["modelVersion"] == "gemini-2.5-flash"
    (entry,) = model.gemini_requests
    assert entry["stream"] is False and entry["rule"] is None


def test_a_function_response_is_the_tool_result(model: ScriptedModel) -> None:
    model.add(
        Rule(when_tool_result="hello-from-shell", reply=text("done")),
        Rule(when_prompt="run", reply=tool_use("run_shell_command", {"command": "echo"})),
    )
    turn = [
        {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command", "args": {}}}]},
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "name": "run_shell_command",
                        "response": {"output": "Output: hello-from-shell"},
                    }
                }
            ],
        },
    ]
    _, data = post(
        model, body("run it", extra=turn, tools=("run_shell_command", "read_file")), STREAM
    )
    assert parts(sse(data)) == [{"text": "done"}]
    (entry,) = model.gemini_requests
    assert entry["prompt"] == "run it"  # the session context is not the prompt
    assert entry["tool_result"] == "Output: hello-from-shell"
    assert entry["tools"] == ["run_shell_command", "read_file"]
    assert entry["system"] == (
        "You are a CLI agent.\n<session_context>\nThis is the Gemini CLI.\n</session_context>"
    )
    assert entry["model"] == "gemini-2.5-flash"
    assert entry["rule"] == 0
    assert entry["headers"]["x-goog-api-key"] == "<redacted>"
    assert entry["query"] == ""


def test_an_error_response_in_the_tool_result_counts(model: ScriptedModel) -> None:
    model.add(Rule(when_tool_result="no such skill", reply=text("fallback")))
    turn = [
        {
            "role": "user",
            "parts": [{"functionResponse": {"name": "x", "response": {"error": "no such skill"}}}],
        }
    ]
    _, data = post(model, body("go", extra=turn), STREAM)
    assert parts(sse(data)) == [{"text": "fallback"}]


@pytest.mark.parametrize(
    ("status", "name"),
    [
        (429, "RESOURCE_EXHAUSTED"),
        (401, "UNAUTHENTICATED"),
        (500, "INTERNAL"),
        (503, "UNAVAILABLE"),
    ],
)
def test_errors_have_googles_shape(model: ScriptedModel, status: int, name: str) -> None:
    model.add(Rule(reply=error(status, retry_after=2)))
    response, data = post(model, body(), STREAM + "?alt=sse")
    assert response.status == status
    assert response.getheader("retry-after") == "2"
    doc = json.loads(data)
    assert doc == {"error": {"code": status, "message": doc["error"]["message"], "status": name}}
    assert model.gemini_requests[0]["status"] == status


def test_delay_and_times(model: ScriptedModel) -> None:
    model.add(Rule(reply=delay(0.3) + text("slow"), times=1))
    start = time.monotonic()
    _, first = post(model, body(), STREAM)
    assert time.monotonic() - start >= 0.3
    _, second = post(model, body(), STREAM)
    assert parts(sse(first)) == [{"text": "slow"}]
    assert parts(sse(second)) == [{"text": "OK"}]


def test_count_tokens_is_answered_and_not_a_model_call(model: ScriptedModel) -> None:
    response, data = post(
        model, {"contents": body()["contents"]}, "/v1beta/models/gemini-2.5-flash:countTokens"
    )
    assert response.status == 200
    assert json.loads(data)["totalTokens"] > 0
    assert model.gemini_requests == []
    assert len(model.requests) == 1


def test_a_body_that_is_not_json_is_a_400(model: ScriptedModel) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", model.port, timeout=10)
    conn.request("POST", STREAM, b"{not json", {"Content-Type": "application/json"})
    response = conn.getresponse()
    doc = json.loads(response.read())
    conn.close()
    assert response.status == 400 and doc["error"]["status"] == "INVALID_ARGUMENT"


def test_gemini_env_points_at_the_server(model: ScriptedModel) -> None:
    assert model.gemini_env() == {
        "GOOGLE_GEMINI_BASE_URL": model.base_url,
        "GEMINI_API_KEY": "sk-test",
    }
